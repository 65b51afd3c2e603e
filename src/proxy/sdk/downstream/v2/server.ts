/**
 * The downstream face of the proxy on SDK v2 (`@modelcontextprotocol/server` 2.x): a low-level
 * `Server` answering both the 2026-07-28 revision and the 2025 era from the same method table as the
 * v1 server (`../dispatch.ts`).
 *
 * Two ways it is used:
 * - `"connection"`: one server per connection (stdio, or a 2025-era HTTP session). Its notifications
 *   go out on that connection, as on v1 (on a 2026-07-28 stdio connection the SDK routes them onto
 *   the connection's `subscriptions/listen` streams).
 * - `"request"`: one server per 2026-07-28 HTTP request, from `createMcpHandler`'s factory. It has
 *   no channel of its own: notifications reach clients through the handler's `notify`, which the
 *   HTTP endpoint feeds (see `endpoint.ts`).
 */
import { Server, type ServerContext } from "@modelcontextprotocol/server";
import { FILES_EXTENSION_KEY } from "../../../../mcp/client-files.js";
import { v2Extra } from "../../../../mcp/v2/context.js";
import type { ProxyCore } from "../../../proxy-core.js";
import type { JsonObject, RequestContext } from "../../../types.js";
import {
  answer,
  connectionSink,
  type ProxyServerOptions,
  proxyCapabilities,
  proxyRoutes,
} from "../dispatch.js";
import { replay, type SettledCall } from "../pass-through.js";
import { ProgressRelay } from "../progress.js";

/** The first protocol revision of the stateless era. */
const MODERN_ERA_FROM = "2026-07-28";

/**
 * The cache hints of the cacheable lists the proxy answers on 2026-07-28: the resource lists hold
 * each user's own files, so no shared cache may keep them (`private`), and they change as files come
 * and go (short `ttlMs`).
 */
const CACHE_HINTS: Record<string, { cacheScope: "private"; ttlMs: number }> = {
  "resources/list": { cacheScope: "private", ttlMs: 5_000 },
  "resources/templates/list": { cacheScope: "private", ttlMs: 5_000 },
};

/**
 * Makes one downstream MCP server on SDK v2 in front of a {@link ProxyCore}. `settled` (one request's
 * server only): its `tools/call` answers with that outcome, so the SDK validates and encodes a
 * call the endpoint already ran, exactly as if this server had run it.
 *
 * @example
 * ```ts
 * import { serveStdio } from "@modelcontextprotocol/server/stdio";
 *
 * serveStdio(() => createProxyServerV2(core, { name: "my-proxy", version: "1.0.0" }, "connection"));
 * ```
 */
export function createProxyServerV2(
  core: ProxyCore,
  options: ProxyServerOptions,
  serving: "connection" | "request",
  settled?: SettledCall,
): Server {
  const server = new Server(
    { name: options.name, version: options.version },
    {
      capabilities: {
        ...proxyCapabilities(options),
        // What the revision Claude Code ships probes before it sends a file (2026-07-28 only).
        ...(options.uploads && serving === "request"
          ? { extensions: { [FILES_EXTENSION_KEY]: { upload: {} } } }
          : {}),
      },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const connection = serving === "connection" ? connectionSink(core, server as never, options) : undefined;
  const modern = () => {
    const version = server.getNegotiatedProtocolVersion();
    return version !== undefined && version >= MODERN_ERA_FROM;
  };

  for (const [method, proxyRoute] of proxyRoutes(options)) {
    const route = settled !== undefined && method === "tools/call" ? replay(settled) : proxyRoute;
    const hint = CACHE_HINTS[method];
    server.setRequestHandler(
      method as never,
      (async (request: { params?: JsonObject }, raw: ServerContext) => {
        const params = request.params ?? {};
        const relay = new ProgressRelay(params, (notification) => raw.mcpReq.notify(notification as never));
        const ctx: RequestContext = {
          extra: v2Extra(raw),
          signal: raw.mcpReq.signal,
          ...(connection ? { sink: connection.sink } : {}),
          ...relay.context(),
        };
        connection?.learnScope(ctx);
        const result = await answer(core, route, params, ctx, relay);
        return hint && modern() ? { ...hint, ...result } : result;
      }) as never,
    );
  }
  return server;
}
