/**
 * The shared StateStore suite against `durableObjectState`, executed inside workerd with a local
 * SQLite-backed Durable Object (see workerd.ts).
 */
import { afterAll, beforeAll } from "vitest";
import { runStateStoreSuite } from "../../src/testing/index.js";
import { type SuiteWorker, startSuiteWorker } from "./workerd.js";

let worker: SuiteWorker;
beforeAll(async () => {
  worker = await startSuiteWorker();
}, 60_000);
afterAll(async () => {
  await worker?.dispose();
});

runStateStoreSuite("durableObjectState on workerd", (now) => worker.stateStore(now));
