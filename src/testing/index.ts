/**
 * `mcp-file-bridge/testing`: the conformance suites every storage driver runs, for driver authors.
 * They are written for Vitest (`describe`/`it`/`expect` from `vitest`), which must be installed.
 */
export type { MakeQuotaFileStore } from "./file-store-quota-suite.js";
export { runFileStoreQuotaSuite } from "./file-store-quota-suite.js";
export type { FileStoreSuiteOptions } from "./file-store-suite.js";
export { runFileStoreSuite } from "./file-store-suite.js";
export { runStateStoreSuite } from "./state-store-suite.js";
export type { MakeFileStore, MakeStateStore, TestClock } from "./support.js";
export { codeOf, makeClock, readAll, SUITE_START } from "./support.js";
