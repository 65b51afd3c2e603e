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
import type { McpEndpoint, ProxyAuthInfo } from "../../../http-host.js";
import type { ProxyCore } from "../../../proxy-core.js";
import type { DownstreamSink, RequestContext } from "../../../types.js";
import { type ReadBody, readJsonBody, webRequest, writeWebResponse } from "../node-glue.js";
import { type PlainCall, plainResult, type SettledCall } from "../pass-through.js";
import { type EndpointLimits, SessionTable, userOf } from "../sessions.js";
import { passThroughCall, resultBody } from "./pass-through.js";

/**
 * Makes the server of one request (`"request"`) or one connection (`"connection"`); `settled`: the
 * outcome of a `tools/call` already run, which the request's server answers with (see
 * `createProxyServerV2`).
 */
export type V2ServerFactory = (serving: "connection" | "request", settled?: SettledCall) => Server;

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
 * The parsed body of a `subscriptions/listen` request with only the `resourceSubscriptions` the caller
 * may hear about (issue 21 part 4): naming another user's URI subscribes to nothing, so
 * `resources/updated` is no oracle for whether that user stored a file of a guessed name.
 */
function ownListen(
  parsed: unknown,
  authInfo: ProxyAuthInfo | undefined,
  keep: NonNullable<EndpointLimits["listenUris"]>,
): unknown {
  const body = parsed as { params?: { notifications?: { resourceSubscriptions?: unknown } } } | null;
  const uris = body?.params?.notifications?.resourceSubscriptions;
  if (Array.isArray(uris) && uris.every((uri) => typeof uri === "string")) {
    (
      (body as { params: object }).params as { notifications: { resourceSubscriptions: string[] } }
    ).notifications.resourceSubscriptions = keep(uris, authInfo);
  }
  return parsed;
}

/** A web request with the body the endpoint parsed (`parsed`), if it did. */
interface Incoming {
  request: Request;
  parsed?: unknown;
}

/**
 * The v2 endpoint: 2026-07-28 statelessly, 2025-era clients on sessions. With `serverInfo` (the
 * identity the servers announce), a plain 2026-07-28 `tools/call` of a pass-through tool is served
 * without a per-request SDK server (`pass-through.ts`).
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
  serverInfo?: { name: string; version: string },
): McpEndpoint {
  const listenStreamsPerUser = limits.listenStreams ?? DEFAULT_LISTEN_STREAMS_PER_USER;
  const listening = new Map<string, number>();
  /** Calls the fast path ran whose answer it leaves to the SDK, by the web request handed over. */
  const settledCalls = new WeakMap<Request, SettledCall>();
  const modern = createMcpHandler(
    (context) => createServer("request", context.requestInfo && settledCalls.get(context.requestInfo)),
    {
      legacy: "reject",
      onerror: (error) => log?.(`MCP: ${error.message}`),
    },
  );
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

  async function legacy(
    { request, parsed }: Incoming,
    authInfo: ProxyAuthInfo | undefined,
  ): Promise<Response> {
    const options = {
      ...(authInfo ? { authInfo } : {}),
      ...(parsed !== undefined ? { parsedBody: parsed } : {}),
    };
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
    options: { authInfo?: ProxyAuthInfo; parsedBody?: unknown },
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

  async function fetch(incoming: Incoming, authInfo: ProxyAuthInfo | undefined): Promise<Response> {
    const { request } = incoming;
    if (await isLegacyRequest(request, incoming.parsed)) return await legacy(incoming, authInfo);
    let parsed = incoming.parsed;
    if (limits.listenUris && request.headers.get("mcp-method") === "subscriptions/listen") {
      // a body the endpoint could not parse goes on as it is (the handler answers it)
      if (parsed === undefined) {
        try {
          parsed = JSON.parse(await request.clone().text());
        } catch {
          parsed = undefined;
        }
      }
      if (parsed !== undefined) parsed = ownListen(parsed, authInfo, limits.listenUris);
    }
    return await modern.fetch(request, {
      ...(authInfo ? { authInfo } : {}),
      ...(parsed !== undefined ? { parsedBody: parsed } : {}),
    });
  }

  /**
   * The web request of a Node one (see `node-glue.ts`): a JSON POST of a declared length is read and
   * parsed here (`body`) and goes body-less with its parsed body (the SDK would parse it up to three
   * times: to classify it, to route it, to serve it); its text goes along when it is not JSON. The
   * signal aborts when the client goes away before its answer is sent.
   */
  function incomingOf(
    req: IncomingMessage,
    body: ReadBody | undefined,
    signal: AbortSignal,
  ): Incoming | undefined {
    if (body === undefined) {
      const request = webRequest(req, true, signal);
      return request && { request };
    }
    if ("parsed" in body) {
      const request = webRequest(req, false, signal);
      return request && { request, parsed: body.parsed };
    }
    const request = webRequest(req, body.text ?? "", signal);
    return request && { request };
  }

  /**
   * The fast path: the core runs the call (scope, adapters, in-flight count, error mapping all its
   * own); a plain result is written here as the SDK would encode it, anything else (an error, a
   * richer result) is handed to the SDK's server to validate and answer.
   */
  async function passThrough(
    req: IncomingMessage,
    res: ServerResponse,
    call: PlainCall,
    parsed: unknown,
    authInfo: ProxyAuthInfo | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const ctx: RequestContext = {
      extra: { authInfo, requestInfo: { headers: req.headers }, transport: "http" },
      signal,
    };
    let settled: SettledCall;
    try {
      settled = { result: await core.callTool(call.params, ctx) };
    } catch (error) {
      settled = { error };
    }
    if ("result" in settled && plainResult(settled.result) && serverInfo) {
      const text = resultBody(call.id, settled.result, serverInfo);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    const request = webRequest(req, false, signal) as Request;
    settledCalls.set(request, settled);
    await writeWebResponse(await fetch({ request, parsed }, authInfo), res);
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
      const controller = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) controller.abort(new Error("The client went away"));
      });
      const body = await readJsonBody(req, true);
      if (serverInfo && body !== undefined && "parsed" in body) {
        const call = passThroughCall(req, body.parsed);
        if (call !== undefined && (core.passThroughNow(call.name) ?? (await core.isPassThrough(call.name)))) {
          await passThrough(req, res, call, body.parsed, authInfo, controller.signal);
          return;
        }
      }
      const incoming = incomingOf(req, body, controller.signal);
      if (incoming === undefined) {
        res.writeHead(405, { "content-type": "application/json", allow: "GET, POST, DELETE" });
        res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            error: { code: -32000, message: "Method not allowed." },
            id: null,
          }),
        );
        return;
      }
      const response = await fetch(incoming, authInfo);
      const streaming = req.method === "GET" || req.headers["mcp-method"] === "subscriptions/listen";
      await writeWebResponse(response, res, streaming);
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
