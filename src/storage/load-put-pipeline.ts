/**
 * The streaming put (`kit/put-pipeline.ts` and its file sink), loaded at the first put of a stream
 * (issue 39): a server that stores nothing, or only bytes it holds, never compiles it. Shared by
 * `memoryStore` and `fsStore`.
 */
import { firstUse } from "../internal/first-use.js";

/** `kit/put-pipeline.ts`, loaded at the first call; concurrent callers share one load. */
export const loadPutPipeline = firstUse(() => import("./kit/put-pipeline.js"));
