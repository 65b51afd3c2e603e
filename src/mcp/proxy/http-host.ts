/**
 * Serves proxy servers over Streamable HTTP (one server per MCP session) on a `node:http` server,
 * next to the file routes and `GET /healthz`; or one server over stdio.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

/** A Node handler that answers or calls `next()`. */
export type NodeRoute = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** Options of {@link serveProxyHttp}. */
export interface ProxyHttpOptions {
  /** Makes the MCP server of a new session. */
  createServer: () => Server;
  /** The file routes (tried first). */
  routes?: NodeRoute;
  /** Answers `GET /healthz`. */
  health?: () => Promise<{ status: number; body: unknown }>;
  /** @default "/mcp" */
  mount?: string;
  /** @default "127.0.0.1" */
  host?: string;
  /** @default 0 */
  port?: number;
  log?: (line: string) => void;
}

/** A running HTTP host. */
export interface ProxyHttpHost {
  url: string;
  mcpUrl: string;
  /** Open MCP sessions. */
  readonly sessions: number;
  /** Stops accepting connections. */
  stopAccepting(): void;
  /** Waits until every MCP POST in progress has had its response sent (or `timeoutMs` passed). */
  drain(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

/**
 * Starts the HTTP host.
 *
 * @example
 * ```ts
 * const host = await serveProxyHttp({ createServer: () => createProxyServer(core, info), port: 8080 });
 * console.log(host.mcpUrl);
 * ```
 */
export async function serveProxyHttp(options: ProxyHttpOptions): Promise<ProxyHttpHost> {
  const mount = options.mount ?? "/mcp";
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let activePosts = 0;
  const idle: Array<() => void> = [];

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (existing) {
      await existing.handleRequest(req, res);
      return;
    }
    if (req.method !== "POST" || sessionId !== undefined) {
      json(res, sessionId === undefined ? 400 : 404, {
        jsonrpc: "2.0",
        error: { code: -32000, message: sessionId === undefined ? "Missing session id" : "Unknown session" },
        id: null,
      });
      return;
    }
    const server = options.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
        options.log?.(`session ${id.slice(0, 8)}… opened`);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && transports.delete(id)) options.log?.(`session ${id.slice(0, 8)}… closed`);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const http = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const rest = () => {
      if (path === "/healthz" && (req.method === "GET" || req.method === "HEAD") && options.health) {
        options
          .health()
          .then(({ status, body }) => json(res, status, body))
          .catch((error: unknown) => json(res, 500, { status: "error", message: String(error) }));
        return;
      }
      if (path !== mount) {
        json(res, 404, { error: { code: "NOT_FOUND", message: "no such route" } });
        return;
      }
      if (req.method === "POST") {
        activePosts++;
        res.once("close", () => {
          activePosts--;
          if (activePosts === 0) for (const resolve of idle.splice(0)) resolve();
        });
      }
      handleMcp(req, res).catch((error: unknown) => {
        options.log?.(`MCP request failed: ${String(error)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    };
    if (options.routes) options.routes(req, res, rest);
    else rest();
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      http.off("error", reject);
      resolve();
    });
  });
  const { port, address } = http.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  const url = `http://${host}:${port}`;
  return {
    url,
    mcpUrl: `${url}${mount}`,
    get sessions() {
      return transports.size;
    },
    stopAccepting() {
      http.close();
    },
    async drain(timeoutMs) {
      if (activePosts === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        idle.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    async close() {
      await Promise.allSettled([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * Serves one proxy server over stdio (as a desktop client starts it).
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
