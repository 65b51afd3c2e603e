/**
 * The per-scope quota part of the FileStore conformance suite, for drivers that enforce a
 * {@link ScopeQuota} (they declare it as `store.quota`).
 */
import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { FileStore, ScopeQuota, ScopeUsage } from "../storage/types.js";
import { codeOf, makeClock, type TestClock } from "./support.js";

/**
 * Makes a fresh, empty store reading time from `now` and enforcing `quota` per scope.
 *
 * @example
 * ```ts
 * const make: MakeQuotaFileStore = (now, quota) => memoryStore({ now, quota });
 * ```
 */
export type MakeQuotaFileStore = (now: () => number, quota: ScopeQuota) => FileStore | Promise<FileStore>;

/** A source that hands out `size` bytes in chunks of at most 256, yielding between chunks. */
function trickle(size: number): Readable {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (let sent = 0; sent < size; sent += 256) {
      await new Promise((resolve) => setImmediate(resolve));
      yield new Uint8Array(Math.min(256, size - sent)).fill(sent % 251);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

async function* endless(): AsyncGenerator<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(3);
  for (;;) yield chunk;
}

function quotaData(error: unknown): unknown {
  return error instanceof FileBridgeError ? { code: error.code, ...error.data } : error;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return quotaData(error);
  }
  throw new Error("expected a rejection");
}

/**
 * The quota cases of the conformance suite: limits hold at commit (also for concurrent puts and
 * commits in one scope), nothing is stored past them, expired and deleted files free their share,
 * and scopes do not share a quota. {@link runFileStoreSuite} runs them when given `{ quota }`.
 *
 * @example
 * ```ts
 * import { runFileStoreQuotaSuite } from "mcp-file-bridge/testing";
 * runFileStoreQuotaSuite("myStore", (now, quota) => myStore({ now, quota }));
 * ```
 */
export function runFileStoreQuotaSuite(label: string, makeStore: MakeQuotaFileStore): void {
  describe(`FileStore quota conformance: ${label}`, () => {
    const opened: FileStore[] = [];
    let clock: TestClock;
    const scope = "quota-a";

    async function open(quota: ScopeQuota): Promise<FileStore> {
      clock = makeClock();
      const store = await makeStore(clock.now, quota);
      opened.push(store);
      return store;
    }

    async function usageOf(store: FileStore, of = scope): Promise<ScopeUsage> {
      const { files } = await store.list(of, { limit: 1000 });
      const listed = { bytes: files.reduce((sum, file) => sum + file.size, 0), files: files.length };
      if (store.usage) expect(await store.usage(of)).toEqual(listed);
      return listed;
    }

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close?.()));
    });

    it("declares the quota it enforces", async () => {
      const store = await open({ maxBytesPerScope: 1000, maxFilesPerScope: 5 });
      expect(store.quota).toEqual({ maxBytesPerScope: 1000, maxFilesPerScope: 5 });
    });

    it("bytes: up to the quota fits, one byte over is QUOTA_EXCEEDED and stores nothing", async () => {
      const store = await open({ maxBytesPerScope: 1000 });
      await store.put(new Uint8Array(600), { scope, name: "a" });
      await store.put(trickle(400), { scope, name: "b" });
      expect(await usageOf(store)).toEqual({ bytes: 1000, files: 2 });
      expect(await failure(store.put(new Uint8Array(1), { scope, name: "c" }))).toEqual({
        code: "QUOTA_EXCEEDED",
        quota: "bytes",
        limit: 1000,
      });
      expect(await codeOf(store.put(trickle(300), { scope, name: "d" }))).toBe("QUOTA_EXCEEDED");
      await store.put(new Uint8Array(0), { scope, name: "empty" }); // no bytes: still fits
      expect(await usageOf(store)).toEqual({ bytes: 1000, files: 3 });
    });

    it("files: the file past the count is QUOTA_EXCEEDED, by put or by stage and commit", async () => {
      const store = await open({ maxFilesPerScope: 3 });
      for (const name of ["a", "b", "c"]) await store.put(new Uint8Array(10), { scope, name });
      expect(await failure(store.put(new Uint8Array(1), { scope, name: "d" }))).toEqual({
        code: "QUOTA_EXCEEDED",
        quota: "files",
        limit: 3,
      });
      const staged = (async () => (await store.stage(trickle(10), { scope, name: "e" })).commit())();
      expect(await codeOf(staged)).toBe("QUOTA_EXCEEDED");
      expect(await usageOf(store)).toEqual({ bytes: 30, files: 3 });
    });

    it("is checked at commit: of staged files that together go over, only those that fit commit", async () => {
      const store = await open({ maxBytesPerScope: 1000 });
      const staged = [];
      for (const name of ["a", "b", "c"])
        staged.push(await store.stage(new Uint8Array(400), { scope, name }));
      const [a, b, c] = staged as [(typeof staged)[0], (typeof staged)[0], (typeof staged)[0]];
      await a.commit();
      await b.commit();
      expect(await codeOf(c.commit())).toBe("QUOTA_EXCEEDED");
      await c.abort(); // safe after a refused commit
      expect(await codeOf(c.commit())).toBe("ABORTED");
      expect(await store.head(scope, c.file.id)).toBeNull();
      expect(await usageOf(store)).toEqual({ bytes: 800, files: 2 });
    });

    it("concurrent puts in one scope cannot both squeeze under the quota", async () => {
      const store = await open({ maxBytesPerScope: 4000 });
      const results = await Promise.allSettled(
        Array.from({ length: 24 }, (_, i) => store.put(trickle(1000), { scope, name: `p${i}` })),
      );
      const stored = results.filter((result) => result.status === "fulfilled");
      const refused = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
      expect(stored).toHaveLength(4);
      expect(refused.map((error) => (error as FileBridgeError).code)).toEqual(
        Array(20).fill("QUOTA_EXCEEDED"),
      );
      expect(await usageOf(store)).toEqual({ bytes: 4000, files: 4 });
    });

    it("concurrent commits of staged files in one scope cannot both squeeze under the quota", async () => {
      const store = await open({ maxBytesPerScope: 2500, maxFilesPerScope: 100 });
      const staged = await Promise.all(
        Array.from({ length: 12 }, (_, i) => store.stage(new Uint8Array(1000), { scope, name: `s${i}` })),
      );
      const results = await Promise.allSettled(staged.map((file) => file.commit()));
      expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(2);
      await Promise.all(staged.map((file) => file.abort()));
      expect(await usageOf(store)).toEqual({ bytes: 2000, files: 2 });
    });

    it("a put that alone is larger than what is left is cut off while streaming", async () => {
      const store = await open({ maxBytesPerScope: 1024 * 1024 });
      await store.put(new Uint8Array(1000), { scope, name: "first" });
      expect(await codeOf(store.put(endless(), { scope, name: "endless" }))).toBe("QUOTA_EXCEEDED");
      // A declared size past what is left is refused before the source is read.
      const untouchable = {
        [Symbol.asyncIterator]() {
          throw new Error("the source must not be read");
        },
      } as AsyncIterable<Uint8Array>;
      expect(
        await codeOf(store.put(untouchable, { scope, name: "declared", expectedSize: 1024 * 1024 })),
      ).toBe("QUOTA_EXCEEDED");
      expect(await usageOf(store)).toEqual({ bytes: 1000, files: 1 });
    });

    it("deleting frees quota at once, and expired files do not count", async () => {
      const store = await open({ maxBytesPerScope: 1000, maxFilesPerScope: 2 });
      const kept = await store.put(new Uint8Array(500), { scope, name: "kept" });
      await store.put(new Uint8Array(500), { scope, name: "short", ttl: 60 });
      expect(await codeOf(store.put(new Uint8Array(1), { scope, name: "x" }))).toBe("QUOTA_EXCEEDED");
      clock.advance(61_000); // "short" expired; not swept yet
      expect(await usageOf(store)).toEqual({ bytes: 500, files: 1 });
      await store.put(new Uint8Array(500), { scope, name: "fits" });
      expect(await codeOf(store.put(new Uint8Array(1), { scope, name: "y" }))).toBe("QUOTA_EXCEEDED");
      expect(await store.delete(scope, kept.id)).toBe(true);
      await store.put(new Uint8Array(500), { scope, name: "fits again" });
      expect(await usageOf(store)).toEqual({ bytes: 1000, files: 2 });
    });

    it("each scope has its own quota", async () => {
      const store = await open({ maxBytesPerScope: 1000, maxFilesPerScope: 1 });
      await store.put(new Uint8Array(1000), { scope, name: "full" });
      expect(await codeOf(store.put(new Uint8Array(1), { scope, name: "more" }))).toBe("QUOTA_EXCEEDED");
      const other = await store.put(new Uint8Array(1000), { scope: "quota-b", name: "own" });
      expect(other.size).toBe(1000);
      expect(await usageOf(store, "quota-b")).toEqual({ bytes: 1000, files: 1 });
      expect(await usageOf(store)).toEqual({ bytes: 1000, files: 1 });
    });
  });
}
