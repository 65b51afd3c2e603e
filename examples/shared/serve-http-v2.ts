/**
 * Shared by the examples: serves MCP with SDK v2 (`@modelcontextprotocol/server` 2.x) on `/mcp` plus
 * any extra Node request handler (the file routes) on the same port. The v2 way: `createMcpHandler`
 * builds a fresh `McpServer` per request from the factory and holds nothing between requests, so
 * the endpoint is stateless — 2026-07-28 clients (no session at all) and 2025 clients (served
 * statelessly, no `Mcp-Session-Id`) alike. With no session, the scope of a caller's files is its
 * authenticated subject: `authenticate` turns a request's credentials into the `AuthInfo` the
 * handler passes to the factory and to every handler (`ctx.http.authInfo`), with the user id in
 * `extra.sub`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  type McpServer,
  type McpServerFactory,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { LOOPBACK_HOSTS } from "../../src/http/host-guard.js";
import { toNodeHandler } from "../../src/node/index.js";
import { type NodeRoute, rebindingRefusal } from "./serve-http.js";
import { type HttpServerTimeouts, httpServerOptions } from "./server-limits.js";

export interface ServeV2Options {
  /** Builds the `McpServer` of one request (`era` says which protocol generation it serves). */
  createServer: (context: Parameters<McpServerFactory>[0]) => McpServer;
  /** Extra routes tried before `/mcp` (upload/download). */
  routes?: NodeRoute;
  /**
   * Verifies the request's credentials: `AuthInfo` (the user id in `extra.sub`), `undefined` for an
   * anonymous caller, or `false` to answer 401. @default every caller anonymous
   */
  authenticate?: (request: Request) => AuthInfo | undefined | false | Promise<AuthInfo | undefined | false>;
  /**
   * How 2025-era requests are served: statelessly from the same factory, refused, or with MCP
   * sessions (`Mcp-Session-Id`, one server per session from the same factory, each session bound to
   * the user that opened it). Sessions are what lets a 2025 client answer a server request such as
   * URL elicitation: statelessly, its answer would reach a fresh server. @default "stateless"
   */
  legacy?: "stateless" | "reject" | "sessions";
  /** @default "127.0.0.1" */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Overrides of the server's header/request/keep-alive timeouts. @default HTTP_SERVER_TIMEOUTS */
  timeouts?: Partial<HttpServerTimeouts>;
  /** Path of the MCP endpoint. @default "/mcp" */
  mcpPath?: string;
}

export interface RunningV2Server {
  /** Base URL, e.g. `http://127.0.0.1:43123`. */
  url: string;
  /** The MCP endpoint URL. */
  mcpUrl: URL;
  /** The SDK handler: `handler.notify` feeds the `subscriptions/listen` streams. */
  handler: McpHttpHandler;
  close(): Promise<void>;
}

export async function serveHttpV2(options: ServeV2Options): Promise<RunningV2Server> {
  const mcpPath = options.mcpPath ?? "/mcp";
  const bindHost = options.host ?? "127.0.0.1";
  const legacy = options.legacy ?? "stateless";
  const handler = createMcpHandler((context) => options.createServer(context), {
    legacy: legacy === "sessions" ? "reject" : legacy,
  });
  const sessions = legacy === "sessions" ? legacySessions(options.createServer) : undefined;
  const mcp = toNodeHandler(async (request) => {
    const authInfo = options.authenticate ? await options.authenticate(request) : undefined;
    if (authInfo === false) {
      return Response.json(
        { jsonrpc: "2.0", error: { code: -32001, message: "Unauthorized" }, id: null },
        { status: 401, headers: { "www-authenticate": 'Bearer realm="mcp"' } },
      );
    }
    if (sessions && (await isLegacyRequest(request))) return sessions.fetch(request, authInfo);
    return handler.fetch(request, authInfo === undefined ? {} : { authInfo });
  });

  const server = createServer(
    httpServerOptions(options.timeouts),
    (req: IncomingMessage, res: ServerResponse) => {
      const refusal = rebindingRefusal(req.headers, LOOPBACK_HOSTS);
      if (refusal) {
        res.writeHead(403, { "content-type": "application/json", connection: "close" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: refusal }, id: null }));
        return;
      }
      const toMcp = () => {
        if (new URL(req.url ?? "/", "http://localhost").pathname !== mcpPath) {
          res.writeHead(404).end();
          return;
        }
        mcp(req, res);
      };
      if (options.routes) options.routes(req, res, toMcp);
      else toMcp();
    },
  );
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, bindHost, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://${bindHost}:${port}`;
  return {
    url,
    mcpUrl: new URL(mcpPath, url),
    handler,
    async close() {
      await sessions?.close();
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * 2025-era traffic with MCP sessions, as the SDK suggests next to a strict modern endpoint
 * (`isLegacyRequest` in front of `createMcpHandler(factory, { legacy: "reject" })`). A session
 * belongs to the user that opened it: another user (or no user) gets 404 for its id, as if it did
 * not exist.
 */
function legacySessions(factory: ServeV2Options["createServer"]) {
  const open = new Map<
    string,
    { transport: WebStandardStreamableHTTPServerTransport; server: McpServer; user: unknown }
  >();
  const notFound = () =>
    Response.json(
      { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null },
      { status: 404 },
    );
  return {
    async fetch(request: Request, authInfo: AuthInfo | undefined): Promise<Response> {
      const user = authInfo?.extra?.sub;
      const auth = authInfo === undefined ? {} : { authInfo };
      const id = request.headers.get("mcp-session-id");
      if (id !== null) {
        const session = open.get(id);
        if (!session || session.user !== user) return notFound();
        return session.transport.handleRequest(request, auth);
      }
      // No session id: only an `initialize` opens one (the transport answers anything else with 400).
      const server = factory({ era: "legacy", ...auth, requestInfo: request });
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => {
            open.set(sessionId, { transport, server, user });
          },
          onsessionclosed: (sessionId) => {
            open.delete(sessionId);
            void server.close().catch(() => undefined);
          },
        });
      await server.connect(transport);
      const response = await transport.handleRequest(request, auth);
      if (transport.sessionId === undefined) await server.close();
      return response;
    },
    async close() {
      const sessions = [...open.values()];
      open.clear();
      await Promise.allSettled(sessions.map((session) => session.server.close()));
    },
  };
}

/**
 * A bearer-token check for the examples and tests: a fixed table of tokens to user ids. A real
 * server verifies a JWT or introspects the token (`requireBearerAuth` from the SDK); what matters
 * here is that the user id ends up in `authInfo.extra.sub`.
 */
export function staticTokens(
  users: Record<string, string>,
): (request: Request) => AuthInfo | undefined | false {
  return (request) => {
    const header = request.headers.get("authorization");
    if (header === null) return undefined;
    const token = /^Bearer (.+)$/i.exec(header)?.[1];
    const user = token === undefined ? undefined : users[token];
    if (user === undefined) return false;
    return { token: token as string, clientId: "example-client", scopes: [], extra: { sub: user } };
  };
}

/** The MCP SDK generation an example runs on. */
export type SdkGeneration = "v1" | "v2";

/**
 * Reads `--sdk v1|v2` from an example's command line (`v1` when absent); anything else is an error
 * that says what the flag takes.
 */
export function sdkFlag(argv: readonly string[] = process.argv): SdkGeneration {
  const at = argv.indexOf("--sdk");
  if (at === -1) return "v1";
  const value = argv[at + 1];
  if (value !== "v1" && value !== "v2") throw new Error(`--sdk takes v1 or v2, not ${value ?? "nothing"}`);
  return value;
}
