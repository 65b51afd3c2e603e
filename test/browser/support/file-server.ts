import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileRoutes } from "../../../src/http/create-file-routes.js";
import { toNodeHandler } from "../../../src/node/index.js";
import { SignedUrlMinter } from "../../../src/signing/signed-url-minter.js";
import { fsStore } from "../../../src/storage/fs-store.js";
import { memoryState } from "../../../src/storage/memory-state.js";
import type { FileStore, StateStore, StoredFile } from "../../../src/storage/types.js";
import { uploadPageForToken, wantsUploadPage } from "../../../src/ui/upload-page.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { close, listen } from "../../http/server-helpers.js";

/** Which cross-origin callers the test's CORS wrapper lets read replies. */
export type CorsPolicy = "off" | "any" | readonly string[];

/** Options of {@link startFileServer}. */
export interface FileServerOptions {
  /** Per-file cap of the tickets. */
  maxBytes?: number;
  /** Files per ticket. */
  maxFiles?: number;
  /** CORS in front of the routes (the routes have none yet). */
  cors?: CorsPolicy;
  /** Node-level handling before the file routes (an MCP endpoint, static pages); `true` = handled. */
  node?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
}

/** A real file server on 127.0.0.1 (fs store, signed tickets, the upload page in front). */
export interface FileServer {
  origin: string;
  store: FileStore;
  state: StateStore;
  minter: SignedUrlMinter;
  uploads: UploadHandleResolver;
  /** Moves the minter's clock (expiry without sleeping). */
  advance(ms: number): void;
  /** Every stored file of a scope. */
  files(scope: string): Promise<StoredFile[]>;
  /** Upload requests (POST/PUT to `/files/upload/…`) the server has seen. */
  uploadRequests: number;
  /** The `Origin` header of each upload request (`""` when absent). */
  uploadOrigins: string[];
  close(): Promise<void>;
}

const SECRET = "browser-tests-secret-0123456789abcdef";

/**
 * The web-standard handler the coordinator will fold into the router: a browser opening an upload
 * link (`GET /files/upload/{token}`, `Accept: text/html`) gets the upload page; everything else goes
 * to `createFileRoutes`.
 */
export function pageInFront(
  routes: (request: Request) => Promise<Response | undefined>,
  minter: SignedUrlMinter,
  defaults: { maxBytes: number; maxFiles: number },
): (request: Request) => Promise<Response | undefined> {
  return async (request) => {
    const { pathname } = new URL(request.url);
    const match = /^\/files\/upload\/([A-Za-z0-9_\-.~]+)$/.exec(pathname);
    if (match && wantsUploadPage(request)) {
      return uploadPageForToken(request, { verifier: minter, token: match[1] as string, ...defaults });
    }
    return routes(request);
  };
}

/**
 * The CORS behaviour the router must implement (issue 15), as a test wrapper until it exists:
 * - an `Origin` that is not allowed gets `403` at once, before the token is looked at, so a
 *   cross-origin form post can never burn a single-use ticket it could not read the reply of;
 * - preflight (`OPTIONS` with `Access-Control-Request-Method`) answers `204` with the allowed
 *   methods and headers and `Access-Control-Max-Age`;
 * - replies carry `Access-Control-Allow-Origin` (`*` for the any-origin policy — no credentials are
 *   ever involved, the token in the URL is the capability — else the request's origin with
 *   `Vary: Origin`) and expose `ETag`, `Content-Range`, `Content-Disposition`, `Location`.
 */
export function withCors(
  handler: (request: Request) => Promise<Response | undefined>,
  policy: CorsPolicy,
): (request: Request) => Promise<Response | undefined> {
  if (policy === "off") return handler;
  const allowed = (origin: string) => policy === "any" || policy.includes(origin);
  return async (request) => {
    const origin = request.headers.get("origin");
    const url = new URL(request.url);
    const isFileRoute = url.pathname.startsWith("/files/");
    if (!isFileRoute || origin === null || origin === url.origin) return handler(request);
    if (!allowed(origin)) {
      return Response.json(
        { error: { code: "FORBIDDEN", message: "This origin may not use these links" } },
        { status: 403 },
      );
    }
    const allowOrigin = policy === "any" ? "*" : origin;
    if (request.method === "OPTIONS" && request.headers.has("access-control-request-method")) {
      return new Response(null, {
        status: 204,
        headers: {
          "Access-Control-Allow-Origin": allowOrigin,
          "Access-Control-Allow-Methods": "GET, HEAD, POST, PUT",
          "Access-Control-Allow-Headers":
            "Content-Type, Content-Disposition, X-Content-SHA256, Range, If-Range, If-None-Match",
          "Access-Control-Max-Age": "600",
          Vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        },
      });
    }
    const response = await handler(request);
    if (!response) return response;
    const headers = new Headers(response.headers);
    headers.set("Access-Control-Allow-Origin", allowOrigin);
    headers.set("Access-Control-Expose-Headers", "ETag, Content-Range, Content-Disposition, Location");
    if (policy !== "any") headers.append("Vary", "Origin");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}

/** Starts the file server on 127.0.0.1, port 0. */
export async function startFileServer(options: FileServerOptions = {}): Promise<FileServer> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-file-bridge-browser-"));
  const store = fsStore(dir);
  const state = memoryState();
  let clock = Date.now();
  let origin = "";
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: () => origin, state, now: () => clock });
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const maxFiles = options.maxFiles ?? 5;
  const uploads = new UploadHandleResolver({ store, minter, state, maxBytes, maxFiles });
  const routes = createFileRoutes({ store, minter, state });
  const front = withCors(pageInFront(routes, minter, { maxBytes, maxFiles }), options.cors ?? "off");
  const server: Server = createServer();
  const result: FileServer = {
    origin: "",
    store,
    state,
    minter,
    uploads,
    uploadRequests: 0,
    uploadOrigins: [],
    advance: (ms) => {
      clock += ms;
    },
    files: async (scope) => (await store.list(scope)).files,
    close: async () => {
      await close(server);
      await rm(dir, { recursive: true, force: true });
    },
  };
  const handler = toNodeHandler(async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith("/files/upload/") && (request.method === "POST" || request.method === "PUT")) {
      result.uploadRequests += 1;
      result.uploadOrigins.push(request.headers.get("origin") ?? "");
    }
    return front(request);
  });
  server.on("request", (req, res) => {
    void (async () => {
      if (options.node && (await options.node(req, res))) return;
      handler(req, res);
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  origin = await listen(server);
  result.origin = origin;
  return result;
}
