/** A real tus endpoint on 127.0.0.1 port 0: fs store, fs staging, memory state, a real minter. */

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toNodeHandler } from "../../../src/node/index.js";
import { createFileRoutes, type FileRoutesOptions } from "../../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../../src/signing/signed-url-minter.js";
import { fsStore } from "../../../src/storage/fs-store.js";
import { memoryState } from "../../../src/storage/memory-state.js";
import type { FileStore, StateStore, StoredFile } from "../../../src/storage/types.js";
import { fsTusStaging } from "../../../src/uploads/tus/fs-staging.js";
import type { TusProgress } from "../../../src/uploads/tus/service.js";
import { close, filesUnder, listen } from "../../http/server-helpers.js";

export const SECRET = "a-test-secret-that-is-long-enough-0123456789";

export interface TusHarness {
  origin: string;
  dir: string;
  stagingDir: string;
  store: FileStore;
  state: StateStore;
  minter: SignedUrlMinter;
  stored: StoredFile[];
  progress: TusProgress[];
  /** Mints an upload ticket; resolves with its tus endpoint. */
  endpoint(
    scope: string,
    options?: { fileId?: string; maxBytes?: number; singleUse?: boolean; ttl?: `${number}m` | `${number}h` },
  ): Promise<string>;
  stagingFiles(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startTus(
  overrides: Partial<FileRoutesOptions> = {},
  clock: () => number = Date.now,
): Promise<TusHarness> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-tus-"));
  const stagingDir = join(dir, "staging");
  const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = overrides.state ?? memoryState({ now: clock });
  // Listen first, so the minter's URLs carry the real origin; the routes themselves serve it once
  // made (`toNodeHandler` takes its native tus path for them).
  const server: Server = createServer();
  const origin = await listen(server);
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state, now: clock });
  const stored: StoredFile[] = [];
  const progress: TusProgress[] = [];
  const routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes: 512 * 1024 * 1024,
    onStored: (file) => {
      stored.push(file);
    },
    tus: { staging: fsTusStaging(stagingDir), onProgress: (event) => progress.push(event), now: clock },
    ...overrides,
  });
  server.on("request", toNodeHandler(routes));
  let next = 0;
  return {
    origin,
    dir,
    stagingDir,
    store,
    state,
    minter,
    stored,
    progress,
    async endpoint(scope, options = {}) {
      next += 1;
      const claims: Record<string, number> = {};
      if (options.maxBytes !== undefined) claims.max_bytes = options.maxBytes;
      const { token } = await minter.mint({
        scope,
        fileId: options.fileId ?? `ticket-${next}`,
        action: "upload",
        claims,
        singleUse: options.singleUse ?? true,
        ttl: options.ttl ?? "1h",
      });
      return `${origin}/files/tus/${token}`;
    },
    stagingFiles: () => filesUnder(stagingDir),
    async close() {
      await close(server);
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
