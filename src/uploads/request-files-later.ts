/**
 * `requestFiles`' flow (`request-files-flow.ts`: the elicitation, the widget or link answer, the
 * waits and their outcomes), loaded at the first `requestFiles()` or `await_upload` call (issue 39):
 * a server that never asks a person for files never compiles it.
 */
import { firstUse } from "../internal/first-use.js";

/** `request-files-flow.ts`, loaded at the first call; concurrent callers share one load. */
export const loadRequestFilesFlow = firstUse(() => import("./request-files-flow.js"));
