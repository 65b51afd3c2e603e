/**
 * `mcp-file-bridge/mcp`: the host port, for code that talks to an MCP server the way the pieces do
 * (a custom piece, an adapter for another SDK, a tool registered directly on the SDK that needs the
 * caller's scope), and the MCP wire types the pieces produce. A server author who only mounts the
 * pieces needs none of it: every piece accepts an SDK server as it is.
 */
export type { JsonRpcErrorShape } from "../errors/file-bridge-error.js";
export {
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_PARAMS,
  toJsonRpcError,
} from "../errors/file-bridge-error.js";
export {
  type ClientFilesCapability,
  clientFilesCapability,
  type FilesSpelling,
  requestClientCapabilities,
} from "./client-files.js";
export { clientNameOf } from "./client-name.js";
export { McpRequestError } from "./errors.js";
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
  HostToolsRewrite,
  HostUrlElicitation,
  LowLevelServerLike,
  McpHost,
  McpServerLike,
} from "./host.js";
export { isMcpHost, MCP_HOST } from "./host.js";
export { scopeSourceOf } from "./scope-source.js";
export { toHost } from "./to-host.js";
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
} from "./types.js";
export type { V2CacheHint, V2CacheHints, V2HostOptions } from "./v2/host.js";
export { v2Host } from "./v2/host.js";
