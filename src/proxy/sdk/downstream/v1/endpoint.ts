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
import { type ReadBody, readJsonBody, webRequest, writeWebResponse } from "../node-glue.js";
import { type EndpointLimits, SessionTable } from "../sessions.js";

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
 * fresh server from `createServer`; later requests name it in `Mcp-Session-Id`.
 *
 * @example
 * ```ts
 * const host = await serveProxyHttp({ endpoint: v1Endpoint(() => createProxyServer(core, info)) });
 * ```
 */
export function v1Endpoint(
  createServer: () => Server,
  log?: (line: string) => void,
  limits: EndpointLimits = {},
): McpEndpoint {
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
          await forward(existing, req, res, await readJsonBody(req), authInfo);
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

  async function openSession(
    req: IncomingMessage,
    res: ServerResponse,
    authInfo: ProxyAuthInfo | undefined,
  ): Promise<void> {
    const server = createServer();
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
