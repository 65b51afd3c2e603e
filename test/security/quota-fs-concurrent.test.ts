import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { type FsFileStore, fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { close, filesUnder, listen } from "../http/server-helpers.js";

// Attack: many puts into one scope race for the last of its quota on a real disk. Before quotas a
// scope could grow without bound; with a quota checked only before the put (or outside a lock), puts
// that all started while there was room would all commit. The quota must hold at commit, for puts of
// one store, of two stores over one folder, and for batch uploads over real HTTP — and a refused put
// must leave nothing on disk.

const KiB = 1024;
const MiB = 1024 * KiB;

let dir: string;
const stores: FsFileStore[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-quota-"));
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close?.()));
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

function open(quota: { maxBytesPerScope?: number; maxFilesPerScope?: number }): FsFileStore {
  const store = fsStore(join(dir, "store"), { quota, sweepInterval: 0 });
  stores.push(store);
  return store;
}

/** `size` bytes in 64 KiB chunks, yielding to the event loop between chunks (a slow client). */
function slowBody(size: number): Readable {
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let sent = 0; sent < size; sent += 64 * KiB) {
      await new Promise((resolve) => setImmediate(resolve));
      yield randomBytes(Math.min(64 * KiB, size - sent));
    }
  }
  return Readable.from(chunks());
}

/** The names in the store's folder: committed data and metadata, and any leftovers. */
async function onDisk(): Promise<{ data: number; meta: number; leftovers: string[] }> {
  const names = (await filesUnder(join(dir, "store"))).map((path) => path.slice(path.lastIndexOf("/") + 1));
  return {
    data: names.filter((name) => /^[0-9a-z]{26}$/.test(name)).length,
    meta: names.filter((name) => /^[0-9a-z]{26}\.json$/.test(name)).length,
    leftovers: names.filter((name) => !/^[0-9a-z]{26}(\.json)?$/.test(name)),
  };
}

describe("attack: concurrent puts race for the last of a scope's quota (fsStore on disk)", () => {
  it("50 concurrent 1 MiB puts into a 5 MiB quota: exactly 5 commit, 45 are refused, nothing else stays", async () => {
    const store = open({ maxBytesPerScope: 5 * MiB });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => store.put(slowBody(MiB), { scope: "victim", name: `f${i}.bin` })),
    );
    const refused = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(results.length - refused.length).toBe(5);
    expect(new Set(refused.map((error) => (error as { code: string }).code))).toEqual(
      new Set(["QUOTA_EXCEEDED"]),
    );
    expect(await store.usage("victim")).toEqual({ bytes: 5 * MiB, files: 5 });
    expect((await store.list("victim")).files).toHaveLength(5);
    expect(await onDisk()).toEqual({ data: 5, meta: 5, leftovers: [] });
  });

  it("200 concurrent tiny puts into a 20-file quota: exactly 20 commit", async () => {
    const store = open({ maxFilesPerScope: 20 });
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => store.put(slowBody(100), { scope: "victim", name: `t${i}` })),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(20);
    expect(await store.usage("victim")).toEqual({ bytes: 2000, files: 20 });
    // Tiny files keep their bytes inside their metadata record: 20 records, no separate data files.
    expect(await onDisk()).toEqual({ data: 0, meta: 20, leftovers: [] });
  });

  it("two stores over one folder (e.g. two mounts in one process) share the scope's quota", async () => {
    const first = open({ maxBytesPerScope: 4 * MiB });
    const second = open({ maxBytesPerScope: 4 * MiB });
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 === 0 ? first : second).put(slowBody(MiB), { scope: "victim", name: `f${i}` }),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(4);
    expect(await first.usage("victim")).toEqual({ bytes: 4 * MiB, files: 4 });
    expect(await second.usage("victim")).toEqual({ bytes: 4 * MiB, files: 4 });
    expect(await onDisk()).toEqual({ data: 4, meta: 4, leftovers: [] });
  });

  it("a deleted file frees its share for the next put, also when another store deleted it", async () => {
    const first = open({ maxBytesPerScope: 2 * MiB, maxFilesPerScope: 2 });
    const second = open({ maxBytesPerScope: 2 * MiB, maxFilesPerScope: 2 });
    const a = await first.put(slowBody(MiB), { scope: "victim", name: "a" });
    await first.put(slowBody(MiB), { scope: "victim", name: "b" });
    expect(
      (await Promise.allSettled([first.put(slowBody(1), { scope: "victim", name: "c" })]))[0]?.status,
    ).toBe("rejected");
    expect(await second.delete("victim", a.id)).toBe(true);
    const c = await first.put(slowBody(MiB), { scope: "victim", name: "c" });
    expect(c.size).toBe(MiB);
    expect(await onDisk()).toEqual({ data: 2, meta: 2, leftovers: [] });
  });
});

describe("attack: concurrent batch uploads over real HTTP race for a scope's quota", () => {
  let server: Server;

  afterEach(async () => {
    if (server) await close(server);
  });

  it("each upload is stored whole or not at all, and the scope never goes over its quota", async () => {
    const quota = 1_000_000;
    const store = open({ maxBytesPerScope: quota });
    const state = memoryState();
    const minter = new SignedUrlMinter({ secret: "q".repeat(40), baseUrl: "http://127.0.0.1:9", state });
    const routes = createFileRoutes({ store, minter, state });
    server = createServer(toNodeHandler(routes));
    const origin = await listen(server);
    const local = new SignedUrlMinter({ secret: "q".repeat(40), baseUrl: origin, state });
    const uploads = new UploadHandleResolver({ store, minter: local, state, maxFiles: 3 });

    // 12 clients, each with its own ticket, each sending 3 files of 100 kB: 3.6 MB for a 1 MB quota.
    const tickets = await Promise.all(Array.from({ length: 12 }, () => uploads.createTicket("victim")));
    const responses = await Promise.all(
      tickets.map(async (ticket, i) => {
        const form = new FormData();
        for (let part = 0; part < 3; part++) {
          form.append(ticket.field, new Blob([randomBytes(100_000)]), `u${i}-${part}.bin`);
        }
        const response = await fetch(ticket.upload_url, { method: "POST", body: form });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    const stored = responses.filter((response) => response.status === 201);
    const refused = responses.filter((response) => response.status !== 201);
    expect(stored.length).toBeGreaterThanOrEqual(1);
    expect(stored.length).toBeLessThanOrEqual(3);
    for (const response of refused) {
      expect(response.status).toBe(413);
      expect((response.body.error as { code: string }).code).toBe("QUOTA_EXCEEDED");
    }
    // Whole uploads only: every stored upload has its 3 files, every refused one none.
    const { files } = await store.list("victim", { limit: 1000 });
    const byUpload = new Map<string, number>();
    for (const file of files) {
      const upload = file.name.split("-")[0] as string;
      byUpload.set(upload, (byUpload.get(upload) ?? 0) + 1);
    }
    expect([...byUpload.values()].every((count) => count === 3)).toBe(true);
    expect(byUpload.size).toBe(stored.length);
    expect((await store.usage("victim")).bytes).toBe(300_000 * stored.length);
    expect(await onDisk()).toEqual({ data: 3 * stored.length, meta: 3 * stored.length, leftovers: [] });
    expect((await readdir(join(dir, "store"))).length).toBe(1); // one scope folder, nothing else
  });
});
