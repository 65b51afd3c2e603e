/**
 * The shared FileStore suite against `r2Store`, executed inside workerd on miniflare's local R2
 * (see workerd.ts): the driver code runs in the Workers runtime, the suite's cases in Vitest.
 */
import { afterAll, beforeAll, vi } from "vitest";
import { runFileStoreSuite } from "../../src/testing/index.js";
import { type SuiteWorker, startSuiteWorker } from "./workerd.js";

// Every store call is an HTTP round trip into workerd: the suite's 200-put case needs more than the
// default 30 s on a loaded 2-core machine.
vi.setConfig({ testTimeout: 120_000 });

let worker: SuiteWorker;
beforeAll(async () => {
  worker = await startSuiteWorker();
}, 60_000);
afterAll(async () => {
  await worker?.dispose();
});

runFileStoreSuite("r2Store on workerd", (now) => worker.fileStore(now));
