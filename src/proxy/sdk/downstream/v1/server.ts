/**
 * The downstream face of the proxy on SDK v1 (`@modelcontextprotocol/sdk`, protocol 2025-11-25): a
 * low-level `Server` whose handlers hand every request to the SDK-free {@link ProxyCore} and send
 * its notifications (list changes, resource updates, log messages, progress) to the client. Upstream
 * tools keep their raw JSON Schemas.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ProxyCore } from "../../../proxy-core.js";
import type { JsonObject } from "../../../types.js";
import {
  answer,
  connectionSink,
  type ProxyServerOptions,
  proxyCapabilities,
  proxyRoutes,
} from "../dispatch.js";
import { replay, type SettledCall } from "../pass-through.js";
import { ProgressRelay } from "../progress.js";

export type { ProxyServerOptions } from "../dispatch.js";

/** The SDK's request schema of every method the proxy answers: the SDK validates the params. */
const SCHEMAS: Record<string, unknown> = {
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
  "resources/subscribe": SubscribeRequestSchema,
  "resources/unsubscribe": UnsubscribeRequestSchema,
  "prompts/list": ListPromptsRequestSchema,
  "prompts/get": GetPromptRequestSchema,
  "completion/complete": CompleteRequestSchema,
  // pass-through: answered only when an upstream offers logging itself
  "logging/setLevel": SetLevelRequestSchema,
};

type Extra = {
  signal: AbortSignal;
  requestId: string | number;
  sessionId?: string | undefined;
  authInfo?: unknown;
  requestInfo?: unknown;
  sendNotification: (notification: never) => Promise<void>;
};

/** The settled outcome of a session's call the endpoint already ran (its fast path), by request id. */
export type SettledLookup = (
  sessionId: string | undefined,
  requestId: string | number,
) => SettledCall | undefined;

/**
 * Makes one downstream MCP server on SDK v1 (one per session over HTTP) in front of a
 * {@link ProxyCore}. `settledOf`: a `tools/call` the endpoint already ran answers with its outcome
 * (see `v1/pass-through.ts`) instead of running again.
 *
 * @example
 * ```ts
 * const server = createProxyServer(core, { name: "my-proxy", version: "1.0.0" });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createProxyServer(
  core: ProxyCore,
  options: ProxyServerOptions,
  settledOf?: SettledLookup,
): Server {
  const server = new Server(
    { name: options.name, version: options.version },
    {
      capabilities: proxyCapabilities(options),
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const { sink, learnScope } = connectionSink(core, server as never, options);

  for (const [method, proxyRoute] of proxyRoutes(options)) {
    server.setRequestHandler(
      SCHEMAS[method] as never,
      (async (request: { params?: JsonObject }, raw: Extra) => {
        const params = request.params ?? {};
        const relay = new ProgressRelay(params, (notification) =>
          raw.sendNotification(notification as never),
        );
        const ctx = {
          extra: {
            sessionId: raw.sessionId,
            authInfo: raw.authInfo as never,
            requestInfo: raw.requestInfo as never,
          },
          signal: raw.signal,
          sink,
          ...relay.context(),
        };
        learnScope(ctx);
        const settled = method === "tools/call" ? settledOf?.(raw.sessionId, raw.requestId) : undefined;
        const route = settled === undefined ? proxyRoute : replay(settled);
        const result = await answer(core, route, params, ctx, relay);
        return result;
      }) as never,
    );
  }
  return server;
}
