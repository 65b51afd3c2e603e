/**
 * `mcp-file-bridge/proxy`: file handling in front of any MCP server (`createFileProxy`), and the
 * local shim that lets desktop clients hand local files to remote servers (`createConnectShim`).
 */

export { bearerTokens, parseBearerTokens } from "./bearer-tokens.js";
export type {
  ArtifactRule,
  ConnectConfig,
  ProxyConfig,
  ServerRules,
  ToolRule,
  UpstreamServerConfig,
} from "./config.js";
export { loadProxyConfig, parseProxyConfig } from "./config.js";
export type { ConnectShim, ConnectShimOptions } from "./connect-shim.js";
export { createConnectShim } from "./connect-shim.js";
export type { FileProxy, FileProxyOptions } from "./file-proxy.js";
export { createFileProxy } from "./file-proxy.js";
export type { HealthProblem, HealthReport } from "./health.js";
export type { ProxyAuthenticate, ProxyAuthInfo } from "./http-host.js";
export type { ProxyServer, ProxyTransportLike, SdkGeneration } from "./sdk/load-sdk.js";
