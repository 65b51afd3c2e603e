/**
 * Shared by the examples: serves MCP over Streamable HTTP on `/mcp` (one `McpServer` per session, as
 * the SDK recommends) plus any extra Node request handler (the file routes) on the same port.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { hostRefusal, isLoopbackBind, LOOPBACK_HOSTS } from "../../src/http/host-guard.js";
import { type HttpServerTimeouts, httpServerOptions } from "./server-limits.js";

/** A Node handler that answers a request or calls `next()` when the request is not its own. */
export type NodeRoute = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

export interface ServeOptions {
  /** Makes the MCP server of one new session. */
  createServer: () => McpServer;
  /** Extra routes tried before `/mcp` (upload/download). */
  routes?: NodeRoute;
  /** @default "127.0.0.1" */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Path of the MCP endpoint. @default "/mcp" */
  mcpPath?: string;
  /**
   * Host names (without port) the server answers to: requests whose `Host` header, or `Origin` when
   * one is sent, names another host get 403. This is the DNS-rebinding guard the MCP SDK
   * recommends for local servers: a web page whose domain resolves to 127.0.0.1 cannot talk to us.
   * @default ["localhost", "127.0.0.1", "[::1]"] for a loopback bind; required for any other bind
   */
  allowedHosts?: readonly string[];
  /** Overrides of the server's header/request/keep-alive timeouts. @default HTTP_SERVER_TIMEOUTS */
  timeouts?: Partial<HttpServerTimeouts>;
  /**
   * A session with no request open and none for this long is closed (most clients never send the
   * DELETE that ends one). Milliseconds. @default 600_000 (10 minutes)
   */
  sessionIdleMs?: number;
  /** Most sessions open at once; a new `initialize` past it gets 429. @default 1000 */
  maxSessions?: number;
}

/**
 * Why a request fails the DNS-rebinding guard, or `null` when its Host and Origin are allowed (the
 * package's own guard, which the proxy uses too).
 */
export const rebindingRefusal = hostRefusal;

export interface RunningHttpServer {
  /** Base URL, e.g. `http://127.0.0.1:43123`. */
  url: string;
  /** The MCP endpoint URL. */
  mcpUrl: URL;
  /** The MCP servers of the open sessions, by session id. */
  sessions: Map<string, McpServer>;
  server: Server;
  close(): Promise<void>;
}

export async function serveHttp(options: ServeOptions): Promise<RunningHttpServer> {
  const mcpPath = options.mcpPath ?? "/mcp";
  const bindHost = options.host ?? "127.0.0.1";
  if (!options.allowedHosts && !isLoopbackBind(bindHost)) {
    throw new Error(`serveHttp: binding to ${bindHost} needs allowedHosts (the host names clients use)`);
  }
  const allowedHosts = options.allowedHosts ?? LOOPBACK_HOSTS;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sessions = new Map<string, McpServer>();
  const sessionIdleMs = options.sessionIdleMs ?? 10 * 60_000;
  const maxSessions = options.maxSessions ?? 1000;
  /** Per session: requests open now, and when the last one ended. */
  const activity = new Map<string, { open: number; last: number }>();
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, seen] of activity) {
        if (seen.open === 0 && now - seen.last >= sessionIdleMs)
          transports
            .get(id)
            ?.close()
            .catch(() => {});
      }
    },
    Math.max(10, Math.min(sessionIdleMs / 2, 60_000)),
  );
  sweeper.unref();

  /** Counts a session's request as open until its response ends. */
  function track(id: string, res: ServerResponse): void {
    const seen = activity.get(id);
    if (!seen) return;
    seen.open++;
    res.once("close", () => {
      seen.open--;
      seen.last = Date.now();
    });
  }

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (existing) {
      track(sessionId as string, res);
      await existing.handleRequest(req, res);
      return;
    }
    if (req.method !== "POST" || sessionId !== undefined) {
      res.writeHead(sessionId === undefined ? 400 : 404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Unknown session" }, id: null }),
      );
      return;
    }
    if (transports.size >= maxSessions) {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "60" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Too many sessions" }, id: null }),
      );
      return;
    }
    const mcp = options.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
        sessions.set(id, mcp);
        activity.set(id, { open: 0, last: Date.now() });
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id) {
        transports.delete(id);
        sessions.delete(id);
        activity.delete(id);
      }
    };
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  }

  // Header and request timeouts (Node's defaults let a silent socket sit for a minute or more).
  const server = createServer(httpServerOptions(options.timeouts), (req, res) => {
    // Host on every request; Origin on the MCP endpoint only: the file routes decide about foreign
    // origins themselves (`allowedOrigins`, CORS), and refuse them by default.
    const refusal = rebindingRefusal(
      req.headers,
      allowedHosts,
      new URL(req.url ?? "/", "http://localhost").pathname === mcpPath,
    );
    if (refusal) {
      res.writeHead(403, { "content-type": "application/json", connection: "close" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: refusal }, id: null }));
      return;
    }
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const mcp = () => {
      if (path !== mcpPath) {
        res.writeHead(404).end();
        return;
      }
      handleMcp(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
        console.error(error);
      });
    };
    if (options.routes) options.routes(req, res, mcp);
    else mcp();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, bindHost, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://${bindHost.includes(":") ? `[${bindHost}]` : bindHost}:${port}`;

  return {
    url,
    mcpUrl: new URL(mcpPath, url),
    sessions,
    server,
    async close() {
      clearInterval(sweeper);
      await Promise.allSettled([...transports.values()].map((transport) => transport.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
