/**
 * `mcp-file-bridge/bridge`: `FileBridge` and what a tool taking file arguments needs with it
 * (`fileInput`, the resolver helper, the error class), for a server that uses no other piece. The
 * same functions and classes as the root's (one module each, so `instanceof` holds across both
 * within one loader: `import`, `require()` or a bundler);
 * on Node this entry loads their closure and the part of the root their first-use code imports,
 * 56 KB of the root's 186 KB, and none of the root's other modules on a call (issue 39).
 */

export type { FileBridgeErrorCode, ToolErrorResult } from "../errors/file-bridge-error.js";
export {
  FILE_BRIDGE_ERROR_CODES,
  FileBridgeError,
  isFileBridgeError,
  statusForCode,
  toToolErrorResult,
} from "../errors/file-bridge-error.js";
export type { Duration } from "../internal/duration.js";
export { FileBridge } from "./file-bridge.js";
export type { FileInputOptions } from "./file-input.js";
export { fileInput, MCP_FILE_KEYWORD } from "./file-input.js";
export type {
  FileBridgeForms,
  FileBridgeHttpsOptions,
  FileBridgeOptions,
  ResolveOptions,
} from "./options.js";
export { storedFileSource } from "./stored-file-source.js";
export type { FileSourceResolver, ResolvedFile } from "./types.js";
export type { WithFilesOptions } from "./with-files.js";
