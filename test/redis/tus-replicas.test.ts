/**
 * tus across replicas: two in-process route instances (two HTTP servers) sharing a real
 * redis-server (`redisState()`: records, offsets, the lock) and a staging folder and store folder
 * (a shared volume). The lock is one for both (a PATCH through B while A writes gets 423); an upload
 * whose connection to replica A is cut resumes through replica B, and B commits the exact bytes.
 * (In-process replicas, not a killed process: A's handler still records the offset it wrote.)
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { toNodeHandler } from "../../src/node/index.js";
import { redisState } from "../../src/redis/redis-state.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import type { StateStore, StoredFile } from "../../src/storage/types.js";
import { fsTusStaging } from "../../src/uploads/tus/fs-staging.js";
import { close, filesUnder, listen } from "../http/server-helpers.js";
import { sha256 } from "../support/helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };

interface Replica {
  origin: string;
  server: Server;
  state: StateStore;
  minter: SignedUrlMinter;
}

let dir: string;
let replicas: Replica[];
let stored: StoredFile[];

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
    maxBytes: 64 * 1024 * 1024,
    onStored: (file) => {
      stored.push(file);
    },
    tus: { staging: fsTusStaging(join(dir, "staging")) },
  });
  return { origin, server, state, minter };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-tus-replicas-"));
  stored = [];
  const keyPrefix = uniquePrefix("tus");
  replicas = [await replica(keyPrefix), await replica(keyPrefix)];
});
afterEach(async () => {
  for (const { server, state } of replicas) {
    await close(server);
    await state.close?.();
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

describeWithServices("tus across replicas on a real redis-server", () => {
  it("shares the lock, and resumes through replica B an upload cut on replica A: exact bytes", async () => {
    const [a, b] = replicas as [Replica, Replica];
    const bytes = randomBytes(12 * 1024 * 1024);
    const { token } = await a.minter.mint({ scope: "s1", fileId: "t1", action: "upload", ttl: "1h" });
    const created = await fetch(`${a.origin}/files/tus/${token}`, {
      method: "POST",
      headers: { ...TUS, "upload-length": String(bytes.length) },
    });
    expect(created.status).toBe(201);
    const onA = created.headers.get("location") as string;
    const onB = onA.replace(a.origin, b.origin);
    // A PATCH on A that stays open after 5 MiB: B sees A's lock in redis.
    let push!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (controller) => (push = controller) });
    const controller = new AbortController();
    const running = fetch(onA, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body,
      duplex: "half",
      signal: controller.signal,
    } as RequestInit).catch(() => undefined);
    push.enqueue(new Uint8Array(bytes.subarray(0, 5 * 1024 * 1024)));
    // B's probe names a wrong offset: 409 (nothing written) until A holds the lock, then 423.
    let locked: Response | undefined;
    for (let attempt = 0; attempt < 200 && locked?.status !== 423; attempt++) {
      locked = await fetch(onB, {
        method: "PATCH",
        headers: { ...OCTETS, "upload-offset": "999" },
        body: "x",
      });
      expect([409, 423]).toContain(locked.status);
    }
    expect(locked?.status).toBe(423);
    // The client loses replica A mid-body.
    controller.abort();
    await running;
    const head = await fetch(onB, { method: "HEAD", headers: TUS });
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get("upload-offset"));
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(5 * 1024 * 1024);
    const rest = await fetch(onB, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(offset) },
      body: new Uint8Array(bytes.subarray(offset)),
    });
    expect(rest.status).toBe(204);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.sha256).toBe(sha256(bytes));
    expect(await filesUnder(join(dir, "staging"))).toEqual([]);
  });
});
