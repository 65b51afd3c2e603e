export type {
  ArtifactRegistry,
  ArtifactsOptions,
  ArtifactUrlMinter,
  CapturedArtifact,
  CaptureInput,
  EmbeddedResourceContents,
  WithArtifactsOptions,
} from "./artifacts/artifacts.js";
export { Artifacts, defaultArtifactUri } from "./artifacts/artifacts.js";
export { FileBridge } from "./bridge/file-bridge.js";
export type { FileInputOptions } from "./bridge/file-input.js";
export { fileInput, MCP_FILE_KEYWORD } from "./bridge/file-input.js";
export type {
  FileBridgeForms,
  FileBridgeHttpsOptions,
  FileBridgeOptions,
  ResolveOptions,
  SweepOptions,
} from "./bridge/options.js";
export { storedFileSource } from "./bridge/stored-file-source.js";
export type {
  FileSource,
  FileSourceKind,
  FileSourceResolver,
  ResolvedFile,
  ResolverContext,
  ResolverResult,
} from "./bridge/types.js";
export type { PassedFile, WithFilesArgs, WithFilesOptions } from "./bridge/with-files.js";
export type {
  FileBridgeErrorCode,
  FileBridgeErrorOptions,
  JsonRpcErrorShape,
  ToolErrorResult,
} from "./errors/file-bridge-error.js";
export {
  FILE_BRIDGE_ERROR_CODES,
  FileBridgeError,
  isFileBridgeError,
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_PARAMS,
  statusForCode,
  toJsonRpcError,
  toToolErrorResult,
} from "./errors/file-bridge-error.js";
export type {
  DirectUploadTarget,
  DownloadEvent,
  FileRoutes,
  FileRoutesOptions,
  FileRoutesRegistry,
  FileRoutesTokenVerifier,
  UploadRateLimitInfo,
  UploadReplyFile,
  VerifiedTokenClaims,
} from "./http/create-file-routes.js";
export { createFileRoutes, DEFAULT_INLINE_TYPES } from "./http/create-file-routes.js";
export type { Duration } from "./internal/duration.js";
export { DEFAULT_MAX_BYTES } from "./internal/limits.js";
export { McpRequestError } from "./mcp/errors.js";
export type {
  HostAuthInfo,
  HostCapabilities,
  HostClientCapabilities,
  HostCompletionProvider,
  HostElicitationAnswer,
  HostExtra,
  HostInput,
  HostMethod,
  HostMethods,
  HostRequestContext,
  HostRequestHandler,
  HostResource,
  HostResourceHandle,
  HostTool,
  HostToolHandle,
  HostUrlElicitation,
  LowLevelServerLike,
  McpHost,
  McpServerLike,
} from "./mcp/host.js";
export { isMcpHost, MCP_HOST } from "./mcp/host.js";
export { scopeSourceOf } from "./mcp/scope-source.js";
export { toHost } from "./mcp/to-host.js";
export type {
  CallToolResult,
  CompleteParams,
  CompleteResult,
  CompletionReference,
  ContentBlock,
  EmbeddedResource,
  EmptyResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  McpAnnotations,
  McpResource,
  McpResourceContents,
  McpResourceTemplate,
  MediaContent,
  ReadResourceResult,
  ResourceLink,
  TextContent,
} from "./mcp/types.js";
export type { V2CacheHint, V2CacheHints, V2HostOptions } from "./mcp/v2/host.js";
export { v2Host } from "./mcp/v2/host.js";
export type { MediaType } from "./media/media-type.js";
export {
  chooseMediaType,
  isTextualMediaType,
  mediaTypeFromName,
  normalizeMediaType,
  OCTET_STREAM,
  parseMediaType,
  SNIFF_BYTES,
  sniffMediaType,
} from "./media/media-type.js";
export type {
  AttachOptions,
  AuthorizeFunction,
  AuthorizeRequest,
  DownloadUrlMinter,
  FileLinkInfo,
  FileLinkResult,
  LinkOptions,
  ParsedResourceUri,
  ResourceChangeSink,
  ResourceRegistryOptions,
  ResourceTemplateOptions,
  SyncResult,
  TemplateVariables,
} from "./registry/resource-registry.js";
export { DEFAULT_RESOURCE_TEMPLATES, ResourceRegistry } from "./registry/resource-registry.js";
export type { ScopeFunction, ScopeSource } from "./scope/scope.js";
export { DEFAULT_SCOPE, defaultScope, scopeRef } from "./scope/scope.js";
export type {
  DownloadClaimsFunction,
  DownloadUrlOptions,
  MintedUrl,
  MintOptions,
  SignedAction,
  SignedClaimValue,
  SignedUrlMinterOptions,
  SigningKey,
  VerifiedToken,
  VerifyOptions,
} from "./signing/signed-url-minter.js";
export { SIGNED_URL_TOKEN_TYPE, SignedUrlMinter } from "./signing/signed-url-minter.js";
export type { FsFileStore, FsStoreOptions } from "./storage/fs-store.js";
export { fsStore } from "./storage/fs-store.js";
export type { MemoryStateOptions } from "./storage/memory-state.js";
export { memoryState } from "./storage/memory-state.js";
export type { MemoryStoreOptions } from "./storage/memory-store.js";
export { memoryStore } from "./storage/memory-store.js";
export type {
  ByteRange,
  CatalogPageOptions,
  ChangeFeed,
  FileCatalog,
  FileKind,
  FileStore,
  ListOptions,
  ListPage,
  PutOptions,
  PutSource,
  ScopeQuota,
  ScopeUsage,
  StagedFile,
  StateSetOptions,
  StateStore,
  StoreChange,
  StoredFile,
} from "./storage/types.js";
export type { FilesExtensionOptions } from "./uploads/files-extension.js";
export type { ClientFilesCapability, FileTransferDescriptor, FileValue } from "./uploads/files-wire.js";
export { clientFilesCapability, FILES_EXTENSION_ID } from "./uploads/files-wire.js";
export type { FileRequestOutcome, RequestFilesCallOptions } from "./uploads/request-files-flow.js";
export type {
  RewrittenArgs,
  UploadAttachOptions,
  UploadHandleResolverOptions,
  UploadTicket,
  UploadTicketMinter,
  UploadTicketRateLimitInfo,
  UploadToolWidget,
} from "./uploads/upload-handle-resolver.js";
export { UploadHandleResolver } from "./uploads/upload-handle-resolver.js";
