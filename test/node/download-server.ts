/**
 * The setup the Node adapter's download tests share: per test an fsStore in a fresh folder, a
 * node:http server on 127.0.0.1 serving the file routes through `toNodeHandler`, a minter for its
 * links, and the `onDownload` events the routes reported. The fields of the object returned are
 * reassigned before each test by the hooks {@link useDownloadServer} registers.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import {
  createFileRoutes,
  type DownloadEvent,
  type FileRoutes,
  type FileRoutesOptions,
} from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore } from "../../src/storage/types.js";
import { close, listen } from "../http/server-helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

/** One test's download server (see {@link useDownloadServer}). */
export interface DownloadServer {
  /** The test's folder (the store is in `store/` under it). */
  dir: string;
  store: FileStore;
  server: Server;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  minter: SignedUrlMinter;
  routes: FileRoutes;
  /** What `onDownload` reported, in order. */
  downloads: DownloadEvent[];
}

/**
 * Registers the hooks that start (and stop) a download server around each test of the calling
 * file; `prefix` names its temp folder, `allowedOrigins` goes to the routes.
 */
export function useDownloadServer(
  prefix: string,
  options: Pick<FileRoutesOptions, "allowedOrigins"> = {},
): DownloadServer {
  const current = {} as DownloadServer;
  beforeEach(async () => {
    current.dir = await mkdtemp(join(tmpdir(), prefix));
    current.store = fsStore(join(current.dir, "store"), { sweepInterval: 0 });
    current.server = createServer();
    current.origin = await listen(current.server);
    const state = memoryState();
    current.minter = new SignedUrlMinter({ secret: SECRET, baseUrl: current.origin, state });
    const downloads: DownloadEvent[] = [];
    current.downloads = downloads;
    current.routes = createFileRoutes({
      store: current.store,
      minter: current.minter,
      state,
      ...options,
      onDownload: (event) => void downloads.push(event),
    });
    current.server.on("request", toNodeHandler(current.routes));
  });
  afterEach(async () => {
    await close(current.server);
    await rm(current.dir, { recursive: true, force: true });
  });
  return current;
}
