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
import { DEFAULT_LISTEN_STREAMS_PER_USER } from "../../../../internal/limits.js";
import { toNodeHandler } from "../../../../node/index.js";
import type { McpEndpoint, ProxyAuthInfo } from "../../../http-host.js";
import type { ProxyCore } from "../../../proxy-core.js";
import type { DownstreamSink } from "../../../types.js";
import { type EndpointLimits, SessionTable, userOf } from "../sessions.js";

/** Makes the server of one request (`"request"`) or one connection (`"connection"`). */
export type V2ServerFactory = (serving: "connection" | "request") => Server;

function refusal(status: number, message: string): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code: -32000, message }, id: null },
    {
      status,
      headers: {
        "cache-control": "no-store",
        ...(status === 401 ? { "www-authenticate": 'Bearer realm="mcp"' } : {}),
      },
    },
  );
}

/**
 * A `subscriptions/listen` request with only the `resourceSubscriptions` the caller may hear about
 * (issue 21 part 4): naming another user's URI subscribes to nothing, so `resources/updated` is no
 * oracle for whether that user stored a file of a guessed name. A body that is not JSON goes on as
 * it is (the handler answers it).
 */
async function ownListen(
  request: Request,
  authInfo: ProxyAuthInfo | undefined,
  keep: NonNullable<EndpointLimits["listenUris"]>,
): Promise<Request> {
  const text = await request.text();
  let body: { params?: { notifications?: { resourceSubscriptions?: unknown } } };
  try {
    body = JSON.parse(text);
  } catch {
    return new Request(request.url, { method: request.method, headers: request.headers, body: text });
  }
  const uris = body?.params?.notifications?.resourceSubscriptions;
  if (Array.isArray(uris) && uris.every((uri) => typeof uri === "string")) {
    (
      body.params as { notifications: { resourceSubscriptions: string[] } }
    ).notifications.resourceSubscriptions = keep(uris, authInfo);
  }
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: JSON.stringify(body),
  });
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
  limits: EndpointLimits = {},
): McpEndpoint {
  const listenStreamsPerUser = limits.listenStreams ?? DEFAULT_LISTEN_STREAMS_PER_USER;
  const listening = new Map<string, number>();
  const modern = createMcpHandler(() => createServer("request"), {
    legacy: "reject",
    onerror: (error) => log?.(`MCP: ${error.message}`),
  });
  const listenSink: DownstreamSink = {
    listener: true,
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
  const sessions = new SessionTable<WebStandardStreamableHTTPServerTransport>(limits, async (transport) => {
    log?.(`session ${transport.sessionId?.slice(0, 8)}… idle: closed`);
    await transport.close();
  });

  async function legacy(request: Request, authInfo: ProxyAuthInfo | undefined): Promise<Response> {
    const options = authInfo ? { authInfo } : {};
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId !== null) {
      // Unknown, or another user's: the same answer, so a session id reveals nothing.
      const existing = sessions.find(sessionId, authInfo);
      return existing ? await existing.handleRequest(request, options) : refusal(404, "Unknown session");
    }
    if (request.method !== "POST") return refusal(400, "Missing session id");
    const admitted = sessions.admit(authInfo);
    if ("status" in admitted) return refusal(admitted.status, admitted.message);
    try {
      return await openSession(request, options, authInfo);
    } finally {
      admitted.release();
    }
  }

  async function openSession(
    request: Request,
    options: { authInfo?: ProxyAuthInfo },
    authInfo: ProxyAuthInfo | undefined,
  ): Promise<Response> {
    const server = createServer("connection");
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.open(id, transport, authInfo);
        log?.(`session ${id.slice(0, 8)}… opened`);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && sessions.delete(id)) log?.(`session ${id.slice(0, 8)}… closed`);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request, options);
    // Not an `initialize`: no session opened, so nothing may stay behind.
    if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close();
    return response;
  }

  async function fetch(request: Request, authInfo: ProxyAuthInfo | undefined): Promise<Response> {
    if (await isLegacyRequest(request)) return await legacy(request, authInfo);
    const served =
      limits.listenUris && request.headers.get("mcp-method") === "subscriptions/listen"
        ? await ownListen(request, authInfo, limits.listenUris)
        : request;
    return await modern.fetch(served, authInfo ? { authInfo } : {});
  }

  return {
    get sessions() {
      return sessions.size;
    },
    async handle(req: IncomingMessage, res: ServerResponse, authInfo: ProxyAuthInfo | undefined) {
      const sessionId = req.headers["mcp-session-id"];
      // A request or stream on a session keeps it from idling out while it lasts.
      if (typeof sessionId === "string" && sessions.find(sessionId, authInfo)) sessions.hold(sessionId, res);
      // A listen stream stays open: each user (and all anonymous callers together) may hold a few,
      // so nobody can fill the handler's shared capacity and shut everyone else out.
      if (req.headers["mcp-method"] === "subscriptions/listen") {
        const who = userOf(authInfo) ?? "";
        const open = listening.get(who) ?? 0;
        if (open >= listenStreamsPerUser) {
          res.writeHead(429, { "content-type": "application/json", "cache-control": "no-store" });
          res.end(
            JSON.stringify({
              jsonrpc: "2.0",
              error: { code: -32000, message: `Too many open subscriptions/listen streams (${open})` },
              id: null,
            }),
          );
          return;
        }
        listening.set(who, open + 1);
        res.once("close", () => {
          const left = (listening.get(who) ?? 1) - 1;
          if (left > 0) listening.set(who, left);
          else listening.delete(who);
        });
      }
      await new Promise<void>((resolve, reject) => {
        res.once("close", resolve);
        toNodeHandler((request) => fetch(request, authInfo), {
          onError: (error) => reject(error),
        })(req, res);
      });
    },
    async close() {
      sessions.stop();
      removeSink();
      await Promise.allSettled(sessions.values().map((transport) => transport.close()));
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
