/**
 * A lost final reply across replicas (issue 41 item 4, the soak's case): `tus-js-client` through a
 * round-robin TCP balancer over two route instances sharing a real redis-server (records, locks,
 * single-use claims), a staging folder and a store folder; the balancer kills each upload's
 * connection right after the last byte of its final `PATCH`, so the retry's `HEAD` lands on the
 * other replica. Every upload ends in success with its handle and sha256, and is stored once.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tus from "tus-js-client";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { toNodeHandler } from "../../src/node/index.js";
import { redisState } from "../../src/redis/redis-state.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import type { StateStore, StoredFile } from "../../src/storage/types.js";
import { fsTusStaging } from "../../src/uploads/tus/fs-staging.js";
import { parseUploadHandle } from "../../src/uploads/upload-handle.js";
import { close, listen } from "../http/server-helpers.js";
import { type CutProxy, startCutProxy } from "../uploads/tus/cut-proxy.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

interface Replica {
  origin: string;
  server: Server;
  state: StateStore;
  minter: SignedUrlMinter;
}

let dir: string;
let replicas: Replica[];
let stored: StoredFile[];
let proxy: CutProxy | undefined;

async function replica(keyPrefix: string): Promise<Replica> {
  const state = redisState({ url: requireServices().redis.url, keyPrefix });
  let routes: ((request: Request) => Promise<Response | undefined>) | undefined;
  const server = createServer(toNodeHandler((request) => (routes as NonNullable<typeof routes>)(request)));
  const origin = await listen(server);
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  routes = createFileRoutes({
    store: fsStore(join(dir, "store"), { sweepInterval: 0 }),
    minter,
    state,
    maxBytes: 16 * 1024 * 1024,
    onStored: (file) => {
      stored.push(file);
    },
    tus: { staging: fsTusStaging(join(dir, "staging")) },
  });
  return { origin, server, state, minter };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-tus-lost-"));
  stored = [];
});
afterEach(async () => {
  await proxy?.close();
  for (const { server, state } of replicas) {
    await close(server);
    await state.close?.();
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

describeWithServices("tus: a lost final reply across replicas on a real redis-server", () => {
  it("tus-js-client behind a balancer that kills each final reply: every upload succeeds with its handle", async () => {
    const sizes = [1, 4096, 300_001, 2 * 1024 * 1024 + 7, 1024 * 1024, 65_537];
    const keyPrefix = uniquePrefix("tuslost");
    replicas = [await replica(keyPrefix), await replica(keyPrefix)];
    proxy = await startCutProxy(
      replicas.map((each) => new URL(each.origin)),
      sizes,
    );
    const minter = (replicas[0] as Replica).minter;
    for (const [index, size] of sizes.entries()) {
      const bytes = randomBytes(size);
      const { token } = await minter.mint({
        scope: "s1",
        fileId: `lost-${index}`,
        action: "upload",
        ttl: "1h",
      });
      const result = await new Promise<{ handle: string | null; sha256: string | null }>(
        (resolve, reject) => {
          const run = new tus.Upload(bytes, {
            endpoint: `${(proxy as CutProxy).origin}/files/tus/${token}`,
            retryDelays: [50, 100, 200, 400, 800, 1600],
            ...(index === 4 ? { chunkSize: 256 * 1024 } : {}),
            onSuccess: ({ lastResponse }) =>
              resolve({
                handle: lastResponse.getHeader("upload-handle") ?? null,
                sha256: lastResponse.getHeader("upload-sha256") ?? null,
              }),
            onError: reject,
          });
          run.start();
        },
      );
      expect(parseUploadHandle(result.handle ?? "")?.id, `upload ${index}`).toBe(`lost-${index}`);
      expect(result.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    }
    expect(proxy.cuts()).toBe(sizes.length);
    expect(stored.map((file) => file.size)).toEqual(sizes);
  }, 120_000);
});
