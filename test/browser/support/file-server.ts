import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toNodeHandler } from "../../../src/node/index.js";
import { createFileRoutes } from "../../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../../src/signing/signed-url-minter.js";
import { fsStore } from "../../../src/storage/fs-store.js";
import { memoryState } from "../../../src/storage/memory-state.js";
import type { FileStore, StateStore, StoredFile } from "../../../src/storage/types.js";
import { uploadPageRenderer } from "../../../src/ui/upload-page.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { close, listen } from "../../http/server-helpers.js";

/** Which cross-origin callers may read replies (the routes' `allowedOrigins`). */
export type CorsPolicy = "off" | "any" | readonly string[];

/** Options of {@link startFileServer}. */
export interface FileServerOptions {
  /** Per-file cap of the tickets. */
  maxBytes?: number;
  /** Files per ticket. */
  maxFiles?: number;
  /** The routes' `allowedOrigins`: `"off"` (default), `"any"` (`"*"`) or exact origins. */
  cors?: CorsPolicy;
  /** `false` mounts no tus endpoint (`createFileRoutes({ tus: false })`). */
  tus?: false;
  /** Node-level handling before the file routes (an MCP endpoint, static pages); `true` = handled. */
  node?: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;
}

/** A real file server on 127.0.0.1: `createFileRoutes` with an fs store, signed tickets and the upload page. */
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
  /** Upload requests (POST/PUT to `/files/upload/…`, POST/PATCH to `/files/tus/…`) the server has seen. */
  uploadRequests: number;
  /** The `Origin` header of each upload request (`""` when absent). */
  uploadOrigins: string[];
  close(): Promise<void>;
}

const SECRET = "browser-tests-secret-0123456789abcdef";

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
  const cors = options.cors ?? "off";
  const routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes,
    maxFiles,
    uploadPage: uploadPageRenderer(),
    ...(options.tus === false ? { tus: false as const } : {}),
    ...(cors === "off" ? {} : { allowedOrigins: cors === "any" ? "*" : cors }),
  });
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
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
  const handler = toNodeHandler(async (request) => {
    const { pathname } = new URL(request.url);
    const single = pathname.startsWith("/files/upload/") && ["POST", "PUT"].includes(request.method);
    const tus = pathname.startsWith("/files/tus/") && ["POST", "PATCH"].includes(request.method);
    if (single || tus) {
      result.uploadRequests += 1;
      result.uploadOrigins.push(request.headers.get("origin") ?? "");
    }
    return routes(request);
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
