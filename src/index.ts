/**
 * `mcp-file-bridge`: what a server author mounts. The pieces (`FileBridge`, `ResourceRegistry`,
 * `UploadHandleResolver`, `SignedUrlMinter`, `Artifacts`, `createFileRoutes`), the built-in
 * drivers, the error class, `fileInput`, the scope helpers, and the types code written against
 * them names. The rest lives in subpaths: the host port and MCP wire types in
 * `mcp-file-bridge/mcp`, the pieces' secondary types (option parts, hooks, method arguments and
 * results) in `mcp-file-bridge/types`, the driver kit in `mcp-file-bridge/storage-kit`.
 */

export { Artifacts, defaultArtifactUri } from "./artifacts/artifacts.js";
export type {
  ArtifactsOptions,
  CapturedArtifact,
  CaptureInput,
  WithArtifactsOptions,
} from "./artifacts/types.js";
export { FileBridge } from "./bridge/file-bridge.js";
export type { FileInputOptions } from "./bridge/file-input.js";
export { fileInput, MCP_FILE_KEYWORD } from "./bridge/file-input.js";
export type {
  FileBridgeForms,
  FileBridgeHttpsOptions,
  FileBridgeOptions,
  ResolveOptions,
} from "./bridge/options.js";
export { storedFileSource } from "./bridge/stored-file-source.js";
export type { FileSourceResolver, ResolvedFile } from "./bridge/types.js";
export type { WithFilesOptions } from "./bridge/with-files.js";
export type { FileBridgeErrorCode, ToolErrorResult } from "./errors/file-bridge-error.js";
export {
  FILE_BRIDGE_ERROR_CODES,
  FileBridgeError,
  isFileBridgeError,
  statusForCode,
  toToolErrorResult,
} from "./errors/file-bridge-error.js";
export type { Duration } from "./internal/duration.js";
export { DEFAULT_MAX_BYTES } from "./internal/limits.js";
export { fileOutputFields } from "./links/file-output.js";
export { withFileOutputs } from "./links/with-file-outputs.js";
export type {
  AuthorizeFunction,
  AuthorizeRequest,
  ResourceRegistryOptions,
} from "./registry/resource-registry.js";
export { DEFAULT_RESOURCE_TEMPLATES, ResourceRegistry } from "./registry/resource-registry.js";
export type { FileRoutes, FileRoutesOptions } from "./routes/create-file-routes.js";
export { createFileRoutes, DEFAULT_INLINE_TYPES } from "./routes/create-file-routes.js";
export type { ScopeFunction, ScopeSource } from "./scope/scope.js";
export { DEFAULT_SCOPE, defaultScope, scopeRef } from "./scope/scope.js";
export { SIGNED_URL_TOKEN_TYPE, SignedUrlMinter } from "./signing/signed-url-minter.js";
export type { SignedUrlMinterOptions, SigningKey } from "./signing/types.js";
export type { FsFileStore, FsStoreOptions } from "./storage/fs-store.js";
export { fsStore } from "./storage/fs-store.js";
export type { MemoryStateOptions } from "./storage/memory-state.js";
export { memoryState } from "./storage/memory-state.js";
export type { MemoryStoreOptions } from "./storage/memory-store.js";
export { memoryStore } from "./storage/memory-store.js";
export type { FileKind, FileStore, StateStore, StoredFile } from "./storage/types.js";
export { fsTusStaging } from "./uploads/tus/fs-staging.js";
export { tusEndpointOf } from "./uploads/upload-handle.js";
export type { UploadHandleResolverOptions } from "./uploads/upload-handle-resolver.js";
export { UploadHandleResolver } from "./uploads/upload-handle-resolver.js";
