/**
 * The MCP endpoint of the proxy on SDK v2, serving both protocol generations on one path:
 * - 2026-07-28 requests: `createMcpHandler`, one server per request, no session. A caller's scope is
 *   its verified user (`authenticate`); without one, file features answer `FORBIDDEN` while plain
 *   tools pass through. Notifications reach `subscriptions/listen` streams through the handler's
 *   `notify`, fed by one sink that hears every scope (list changes carry no content, and an update
 *   only reaches the streams that named its URI).
 * - 2025-era requests (`isLegacyRequest`): stateful sessions on the SDK's web-standard Streamable
 *   HTTP transport, one server per session, exactly as the v1 endpoint serves them: the session id
 *   is the scope when the caller is anonymous, and notifications go out on the session.
 * And one server per stdio connection (`serveStdio`, both eras).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  createMcpHandler,
  isLegacyRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { toNodeHandler } from "../../../node/index.js";
import type { ProxyCore } from "../../../proxy/proxy-core.js";
import type { DownstreamSink } from "../../../proxy/types.js";
import type { McpEndpoint, ProxyAuthInfo } from "../http-host.js";

/** Makes the server of one request (`"request"`) or one connection (`"connection"`). */
export type V2ServerFactory = (serving: "connection" | "request") => Server;

function refusal(status: number, message: string): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code: -32000, message }, id: null },
    { status, headers: { "cache-control": "no-store" } },
  );
}

/**
 * The v2 endpoint: 2026-07-28 statelessly, 2025-era clients on sessions.
 *
 * @example
 * ```ts
 * const endpoint = v2Endpoint(core, (serving) => createProxyServerV2(core, info, serving));
 * const host = await serveProxyHttp({ endpoint, authenticate });
 * ```
 */
export function v2Endpoint(
  core: ProxyCore,
  createServer: V2ServerFactory,
  log?: (line: string) => void,
): McpEndpoint {
  const modern = createMcpHandler(() => createServer("request"), {
    legacy: "reject",
    onerror: (error) => log?.(`MCP: ${error.message}`),
  });
  const listenSink: DownstreamSink = {
    allScopes: true,
    notify(method, params) {
      switch (method) {
        case "notifications/tools/list_changed":
          modern.notify.toolsChanged();
          break;
        case "notifications/prompts/list_changed":
          modern.notify.promptsChanged();
          break;
        case "notifications/resources/list_changed":
          modern.notify.resourcesChanged();
          break;
        case "notifications/resources/updated":
          if (typeof params?.uri === "string") modern.notify.resourceUpdated(params.uri);
          break;
        default:
          // logging is deprecated on 2026-07-28: log messages go to 2025-era sessions only
          break;
      }
    },
  };
  const removeSink = core.addSink(listenSink);
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

  async function legacy(request: Request, authInfo: ProxyAuthInfo | undefined): Promise<Response> {
    const options = authInfo ? { authInfo } : {};
    const sessionId = request.headers.get("mcp-session-id");
    const existing = sessionId === null ? undefined : sessions.get(sessionId);
    if (existing) return await existing.handleRequest(request, options);
    if (request.method !== "POST" || sessionId !== null) {
      return refusal(
        sessionId === null ? 400 : 404,
        sessionId === null ? "Missing session id" : "Unknown session",
      );
    }
    const server = createServer("connection");
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        log?.(`session ${id.slice(0, 8)}… opened`);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && sessions.delete(id)) log?.(`session ${id.slice(0, 8)}… closed`);
    };
    await server.connect(transport);
    return await transport.handleRequest(request, options);
  }

  async function fetch(request: Request, authInfo: ProxyAuthInfo | undefined): Promise<Response> {
    if (await isLegacyRequest(request)) return await legacy(request, authInfo);
    return await modern.fetch(request, authInfo ? { authInfo } : {});
  }

  return {
    get sessions() {
      return sessions.size;
    },
    async handle(req: IncomingMessage, res: ServerResponse, authInfo: ProxyAuthInfo | undefined) {
      await new Promise<void>((resolve, reject) => {
        res.once("close", resolve);
        toNodeHandler((request) => fetch(request, authInfo), {
          onError: (error) => reject(error),
        })(req, res);
      });
    },
    async close() {
      removeSink();
      await Promise.allSettled([...sessions.values()].map((transport) => transport.close()));
      await modern.close();
    },
  };
}

/**
 * Serves the proxy over stdio on SDK v2: one server per connection, in whichever era the client
 * opens with.
 *
 * @example
 * ```ts
 * const served = serveProxyStdioV2((serving) => createProxyServerV2(core, info, serving));
 * await served.closed;
 * ```
 */
export function serveProxyStdioV2(createServer: V2ServerFactory): {
  close(): Promise<void>;
  closed: Promise<void>;
} {
  const handle = serveStdio(() => createServer("connection"));
  const closed = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  return { close: () => handle.close(), closed };
}
