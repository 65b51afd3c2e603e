/**
 * Serves a proxy over HTTP on a `node:http` server: the file routes, `GET /healthz`, and the MCP
 * endpoint of either SDK generation (an {@link McpEndpoint}), behind the DNS-rebinding guard and the
 * optional bearer-token check. No SDK here: the endpoints bring their own.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostRefusal, isLoopbackBind, LOOPBACK_HOSTS } from "../http/host-guard.js";

/** A Node handler that answers or calls `next()`. */
export type NodeRoute = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * The verified identity of an HTTP caller, in the SDKs' `AuthInfo` shape: the user id goes in
 * `extra.sub`, and becomes the scope of the caller's files.
 *
 * @example
 * ```ts
 * const auth: ProxyAuthInfo = { token, clientId: "proxy", scopes: [], extra: { sub: "alice" } };
 * ```
 */
export interface ProxyAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  extra?: Record<string, unknown>;
}

/**
 * Verifies an HTTP caller from its request (headers, method and URL; the body is not read): the
 * caller's {@link ProxyAuthInfo}, `undefined` for an anonymous caller, or `false` to answer 401.
 *
 * @example
 * ```ts
 * const authenticate: ProxyAuthenticate = (request) =>
 *   request.headers.get("authorization") === `Bearer ${token}`
 *     ? { token, clientId: "proxy", scopes: [], extra: { sub: "alice" } }
 *     : false;
 * ```
 */
export type ProxyAuthenticate = (
  request: Request,
) => ProxyAuthInfo | undefined | false | Promise<ProxyAuthInfo | undefined | false>;

/** Authenticators that read only the `Authorization` header, by the function the caller passes. */
const byAuthorization = new WeakMap<
  ProxyAuthenticate,
  (authorization: string | null) => ProxyAuthInfo | undefined | false
>();

/**
 * Marks `authenticate` as reading nothing but the `Authorization` header (its values joined as
 * `Headers.get` joins them; `null` when absent) and gives the direct form: the host then calls
 * `direct` and builds no web `Request` per call (issue 24: that was most of an authenticated call's
 * cost on the host). Used by {@link bearerTokens}.
 */
export function authenticatesByHeader(
  authenticate: ProxyAuthenticate,
  direct: (authorization: string | null) => ProxyAuthInfo | undefined | false,
): ProxyAuthenticate {
  byAuthorization.set(authenticate, direct);
  return authenticate;
}

/** The `Authorization` values of a Node request joined as `Headers.get` does, or `null`. */
function authorizationOf(req: IncomingMessage): string | null {
  let value: string | null = null;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== "authorization") continue;
    const next = (raw[i + 1] as string).trim();
    value = value === null ? next : `${value}, ${next}`;
  }
  return value;
}

/** The MCP endpoint of one SDK generation. */
export interface McpEndpoint {
  /** Answers one request to the MCP path. */
  handle(req: IncomingMessage, res: ServerResponse, authInfo: ProxyAuthInfo | undefined): Promise<void>;
  /** Open MCP sessions (2025-era clients; 2026-07-28 clients have none). */
  readonly sessions: number;
  close(): Promise<void>;
}

/** The `node:http` timeouts of the proxy's HTTP host, in milliseconds. */
export interface ProxyHttpTimeouts {
  /** A client must send its whole request head within this (a socket that sends nothing: 408, closed). */
  headersTimeout: number;
  /** A whole request, body included (uploads through the routes); responses (SSE) are not limited. */
  requestTimeout: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeout: number;
  /** How often Node checks the two timeouts above. */
  connectionsCheckingInterval: number;
}

/**
 * The proxy HTTP host's defaults. Node's own (`headersTimeout` 60 s checked every 30 s) let a socket
 * that never sends a byte hold a descriptor for up to 90 s; Node 20 applies `headersTimeout` from
 * the connection's start, so with these it is answered `408` and closed within about 11 s.
 */
export const PROXY_HTTP_TIMEOUTS: Readonly<ProxyHttpTimeouts> = {
  headersTimeout: 10_000,
  requestTimeout: 16 * 60_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
};

/** Options of {@link serveProxyHttp}. */
export interface ProxyHttpOptions {
  endpoint: McpEndpoint;
  /** The file routes (tried first). */
  routes?: NodeRoute;
  /** Answers `GET /healthz`. */
  health?: () => Promise<{ status: number; body: unknown }>;
  /** Verifies callers of the MCP endpoint. @default every caller anonymous */
  authenticate?: ProxyAuthenticate;
  /**
   * Host names requests may name in `Host` (and `Origin`, on the MCP path). Always checked.
   * @default the localhost names; on another bind also the `baseUrl` host and the bind address
   *   (not a wildcard one), with a warning at start-up that says so
   */
  allowedHosts?: readonly string[];
  /** The public URL of the server (behind a reverse proxy): its host is allowed by default. */
  baseUrl?: string;
  /** @default "/mcp" */
  mount?: string;
  /** @default "127.0.0.1" */
  host?: string;
  /** @default 0 */
  port?: number;
  /** Overrides of the server's timeouts. @default PROXY_HTTP_TIMEOUTS */
  timeouts?: Partial<ProxyHttpTimeouts>;
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

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

function rpcError(message: string, code = -32000): unknown {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}

/** A body-less web `Request` with the Node request's method, URL and headers (for `authenticate`). */
function headersRequest(req: IncomingMessage, base: string): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  return new Request(new URL(req.url ?? "/", base), { method: req.method ?? "GET", headers });
}

const WILDCARD_BINDS = new Set(["0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0"]);

/**
 * The host names a server answers by default (issue 21 part 6): the localhost names on a loopback
 * bind; on any other bind also the `baseUrl` host and the bind address itself (not a wildcard), and
 * a warning says so, since a client naming the machine by another name or address is refused.
 */
export function defaultAllowedHosts(
  bindHost: string,
  baseUrl: string | undefined,
  log?: (line: string) => void,
): readonly string[] {
  if (isLoopbackBind(bindHost)) return LOOPBACK_HOSTS;
  const names = new Set(LOOPBACK_HOSTS);
  if (baseUrl) names.add(new URL(baseUrl).hostname);
  if (!WILDCARD_BINDS.has(bindHost))
    names.add(bindHost.includes(":") ? `[${bindHost.replace(/^\[|\]$/g, "")}]` : bindHost);
  const list = [...names];
  log?.(
    `warning: listening on ${bindHost}, requests are answered only when their Host (and, on the MCP path, Origin) names ${list.join(", ")} (DNS-rebinding guard); set allowedHosts (proxy.allowedHosts) to allow other names`,
  );
  return list;
}

/**
 * Starts the HTTP host.
 *
 * @example
 * ```ts
 * const host = await serveProxyHttp({ endpoint: v1Endpoint(() => createProxyServer(core, info)), port: 8080 });
 * console.log(host.mcpUrl);
 * ```
 */
export async function serveProxyHttp(options: ProxyHttpOptions): Promise<ProxyHttpHost> {
  const mount = options.mount ?? "/mcp";
  const bindHost = options.host ?? "127.0.0.1";
  const allowedHosts = options.allowedHosts ?? defaultAllowedHosts(bindHost, options.baseUrl, options.log);
  const { endpoint } = options;
  let activePosts = 0;
  const idle: Array<() => void> = [];
  let base = "http://127.0.0.1";

  const direct = options.authenticate ? byAuthorization.get(options.authenticate) : undefined;

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let authInfo: ProxyAuthInfo | undefined;
    if (options.authenticate) {
      const verdict = direct
        ? direct(authorizationOf(req))
        : await options.authenticate(headersRequest(req, base));
      if (verdict === false) {
        json(res, 401, rpcError("Unauthorized", -32001), {
          "www-authenticate": 'Bearer realm="mcp"',
          connection: "close",
        });
        return;
      }
      authInfo = verdict;
    }
    await endpoint.handle(req, res, authInfo);
  }

  const http = createServer({ ...PROXY_HTTP_TIMEOUTS, ...options.timeouts }, (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    // Host on every request, whatever the bind; Origin on the MCP path only (the file routes decide
    // about origins).
    const refusal = hostRefusal(req.headers, allowedHosts, path === mount);
    if (refusal) {
      json(res, 403, rpcError(refusal), { connection: "close" });
      return;
    }
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
      // A 2026-07-28 `subscriptions/listen` stream stays open until the client goes: not a call to wait for.
      if (req.method === "POST" && req.headers["mcp-method"] !== "subscriptions/listen") {
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
    http.listen(options.port ?? 0, bindHost, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const { port, address } = http.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  const url = `http://${host}:${port}`;
  base = url;
  return {
    url,
    mcpUrl: `${url}${mount}`,
    get sessions() {
      return endpoint.sessions;
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
      await endpoint.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
