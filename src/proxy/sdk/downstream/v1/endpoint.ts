/**
 * The MCP endpoint of the proxy on SDK v1: stateful Streamable HTTP, one downstream server per
 * session (the session id is the default scope); and one server over stdio.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { McpEndpoint, ProxyAuthInfo } from "../../../http-host.js";
import type { ProxyCore } from "../../../proxy-core.js";
import { scopeLearned } from "../dispatch.js";
import { type ReadBody, readJsonBody, webRequest, writeWebResponse } from "../node-glue.js";
import { type PlainCall, plainResult, type SettledCall } from "../pass-through.js";
import { type EndpointLimits, SessionTable } from "../sessions.js";
import { cancelledId, passThroughCallV1, sseAnswer } from "./pass-through.js";
import type { SettledLookup } from "./server.js";

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "cache-control": "no-store",
    ...(status === 401 ? { "www-authenticate": 'Bearer realm="mcp"' } : {}),
  });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/**
 * Hands a request to a session's web-standard transport and writes its answer (see `node-glue.ts`):
 * with its body parsed here when it can be ({@link readJsonBody}), else the body goes as a stream.
 */
async function forward(
  transport: WebStandardStreamableHTTPServerTransport,
  req: IncomingMessage,
  res: ServerResponse,
  body: ReadBody | undefined,
  authInfo: ProxyAuthInfo | undefined,
): Promise<void> {
  if (body !== undefined && !("parsed" in body)) {
    res.writeHead(body.status, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: body.code, message: body.message }, id: null }));
    return;
  }
  const request = webRequest(req, body === undefined);
  if (request === undefined) {
    refuse(res, 405, "Method not allowed.");
    return;
  }
  const response = await transport.handleRequest(request, {
    ...(authInfo ? { authInfo } : {}),
    ...(body ? { parsedBody: body.parsed } : {}),
  });
  await writeWebResponse(response, res, req.method === "GET");
}

/**
 * Sessions over SDK v1's Streamable HTTP transport: a POST without a session id opens one with a
 * fresh server from `createServer`; later requests name it in `Mcp-Session-Id`. With `core`, a plain
 * `tools/call` of a pass-through tool on a session whose scope is known goes to the core without the
 * session's transport and server (`pass-through.ts`); `createServer` gets the lookup of such calls'
 * outcomes that its server answers with instead.
 *
 * @example
 * ```ts
 * const host = await serveProxyHttp({ endpoint: v1Endpoint(() => createProxyServer(core, info)) });
 * ```
 */
export function v1Endpoint(
  createServer: (settledOf: SettledLookup) => Server,
  log?: (line: string) => void,
  limits: EndpointLimits = {},
  core?: ProxyCore,
): McpEndpoint {
  /** Each session's server. */
  const servers = new WeakMap<WebStandardStreamableHTTPServerTransport, Server>();
  /** Fast-path calls in progress per session, by request id: cancelled by the client, or by the session's end. */
  const running = new WeakMap<
    WebStandardStreamableHTTPServerTransport,
    Map<string | number, AbortController>
  >();
  /** Outcomes of fast-path calls left to the session's server to answer, by session and request id. */
  const settledCalls = new Map<string, SettledCall>();
  const settledOf: SettledLookup = (sessionId, requestId) => settledCalls.get(`${sessionId}\n${requestId}`);
  const sessions = new SessionTable<WebStandardStreamableHTTPServerTransport>(limits, async (transport) => {
    log?.(`session ${transport.sessionId?.slice(0, 8)}… idle: closed`);
    await transport.close();
  });
  return {
    get sessions() {
      return sessions.size;
    },
    async handle(req: IncomingMessage, res: ServerResponse, authInfo: ProxyAuthInfo | undefined) {
      const sessionId = req.headers["mcp-session-id"];
      if (sessionId !== undefined) {
        // Unknown, or another user's: the same answer, so a session id reveals nothing.
        const existing = typeof sessionId === "string" ? sessions.find(sessionId, authInfo) : undefined;
        if (existing) {
          sessions.hold(sessionId as string, res);
          const body = await readJsonBody(req);
          if (core && body !== undefined && "parsed" in body) {
            const cancelled = cancelledId(body.parsed);
            if (cancelled !== undefined) running.get(existing)?.get(cancelled)?.abort();
            const call = passThroughCallV1(req, body.parsed);
            if (
              call !== undefined &&
              scopeLearned(servers.get(existing)) &&
              (core.passThroughNow(call.name) ?? (await core.isPassThrough(call.name)))
            ) {
              await passThrough(core, existing, sessionId as string, call, req, res, body, authInfo);
              return;
            }
          }
          await forward(existing, req, res, body, authInfo);
        } else refuse(res, 404, "Unknown session");
        return;
      }
      if (req.method !== "POST") {
        refuse(res, 400, "Missing session id");
        return;
      }
      const admitted = sessions.admit(authInfo);
      if ("status" in admitted) {
        refuse(res, admitted.status, admitted.message);
        return;
      }
      try {
        await openSession(req, res, authInfo);
      } finally {
        admitted.release();
      }
    },
    async close() {
      sessions.stop();
      await Promise.allSettled(sessions.values().map((transport) => transport.close()));
    },
  };

  /**
   * The fast path: the core runs the call (scope, adapters, in-flight count, error mapping all its
   * own), cancelled like a call of the session's server (`notifications/cancelled`, the session's
   * end); a plain result is written as the SDK's transport writes it, any other outcome goes to the
   * session's server to validate and answer.
   */
  async function passThrough(
    proxyCore: ProxyCore,
    transport: WebStandardStreamableHTTPServerTransport,
    sessionId: string,
    call: PlainCall,
    req: IncomingMessage,
    res: ServerResponse,
    body: ReadBody,
    authInfo: ProxyAuthInfo | undefined,
  ): Promise<void> {
    const controller = new AbortController();
    let calls = running.get(transport);
    if (calls === undefined) {
      calls = new Map();
      running.set(transport, calls);
    }
    calls.set(call.id, controller);
    const ctx = {
      extra: { sessionId, authInfo, requestInfo: { headers: req.headers } },
      signal: controller.signal,
    };
    let settled: SettledCall;
    try {
      settled = { result: await proxyCore.callTool(call.params, ctx) };
    } catch (error) {
      settled = { error };
    } finally {
      if (calls.get(call.id) === controller) calls.delete(call.id);
    }
    if (controller.signal.aborted) {
      // Cancelled (the client said so, or the session ended): no answer, as the session's server
      // sends none for a cancelled request; the stream just ends.
      if (!res.headersSent)
        res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": sessionId });
      res.end();
      return;
    }
    if ("result" in settled && plainResult(settled.result)) {
      const text = sseAnswer(call.id, settled.result);
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
        "mcp-session-id": sessionId,
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    const key = `${sessionId}\n${call.id}`;
    settledCalls.set(key, settled);
    try {
      await forward(transport, req, res, body, authInfo);
    } finally {
      settledCalls.delete(key);
    }
  }

  async function openSession(
    req: IncomingMessage,
    res: ServerResponse,
    authInfo: ProxyAuthInfo | undefined,
  ): Promise<void> {
    const server = createServer(settledOf);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.open(id, transport, authInfo);
        log?.(`session ${id.slice(0, 8)}… opened`);
      },
    });
    servers.set(transport, server);
    transport.onclose = () => {
      for (const controller of running.get(transport)?.values() ?? []) controller.abort();
      const id = transport.sessionId;
      if (id && sessions.delete(id)) log?.(`session ${id.slice(0, 8)}… closed`);
    };
    await server.connect(transport);
    await forward(transport, req, res, await readJsonBody(req), authInfo);
    // Not an `initialize` (or not MCP at all): no session opened, so nothing may stay behind.
    if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close();
  }
}

/**
 * Serves one proxy server over stdio on SDK v1 (as a desktop client starts it).
 *
 * @example
 * ```ts
 * await serveProxyStdio(createProxyServer(core, info));
 * ```
 */
export async function serveProxyStdio(
  server: Server,
): Promise<{ close(): Promise<void>; closed: Promise<void> }> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    const previous = server.onclose;
    server.onclose = () => {
      previous?.();
      resolve();
    };
  });
  process.stdin.once("end", () => void server.close());
  await server.connect(transport);
  return { close: () => server.close(), closed };
}
