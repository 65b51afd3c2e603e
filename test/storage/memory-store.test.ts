import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/storage/memory-store.js";
import { codeOf, readAll, runFileStoreSuite } from "../../src/testing/index.js";

runFileStoreSuite("memoryStore", (now) => memoryStore({ now }), {
  quota: (now, quota) => memoryStore({ now, quota }),
});

describe("memoryStore", () => {
  it("validates its options with INVALID_OPTION", () => {
    for (const bad of [
      { maxTotalBytes: -1 },
      { maxTotalBytes: 1.5 },
      { now: 5 },
      { sweepInterval: "often" },
      { maxScopeShare: 0 },
      { maxScopeShare: 1.5 },
      { maxScopeShare: "half" },
      { quota: { maxBytesPerScope: -1 } },
      { quota: "small" },
    ]) {
      expect(() => memoryStore(bad as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    }
  });

  it("maxTotalBytes caps the whole store, counts staged bytes, and frees deleted ones", async () => {
    // One scope may use the whole cap here (maxScopeShare: 1); the per-scope share is tested below.
    const store = memoryStore({ maxTotalBytes: 1000, maxScopeShare: 1 });
    const a = await store.put(Buffer.alloc(600), { scope: "s", name: "a" });
    expect(await codeOf(store.put(Buffer.alloc(500), { scope: "s", name: "b" }))).toBe("FILE_TOO_LARGE");
    const staged = await store.stage(Buffer.alloc(400), { scope: "s", name: "c" });
    expect(await codeOf(store.put(Buffer.alloc(1), { scope: "s", name: "d" }))).toBe("FILE_TOO_LARGE");
    await staged.abort();
    await store.delete("s", a.id);
    const big = await store.put(Buffer.alloc(1000), { scope: "s", name: "e" });
    expect(big.size).toBe(1000);
    expect((await store.list("s")).files.map((f) => f.id)).toEqual([big.id]);
    await store.close?.();
  });

  it("keeps many small chunks as blocks and reads ranges across chunk borders", async () => {
    const store = memoryStore();
    const parts = Array.from({ length: 30_000 }, (_, i) => Buffer.from([i % 256, (i * 7) % 256, 3]));
    const whole = Buffer.concat(parts);
    const file = await store.put(Readable.from(parts), { scope: "s", name: "many" });
    expect((await readAll(await store.read("s", file.id))).equals(whole)).toBe(true);
    const range = await readAll(await store.read("s", file.id, { start: 65_530, end: 65_545 }));
    expect(range.equals(whole.subarray(65_530, 65_546))).toBe(true);
    await store.close?.();
  });

  it("pages through 30,000 files by cursor, each once, in id order", async () => {
    const store = memoryStore();
    const one = new Uint8Array([1]);
    let last = "";
    for (let i = 0; i < 30_000; i++) {
      const { id } = await store.put(one, { scope: "big", name: "f" });
      if (id > last) last = id;
    }
    // Walk to the last page quickly via cursors, then check the tail is right.
    const first = await store.list("big", { limit: 1000 });
    expect(first.files).toHaveLength(1000);
    let cursor = first.nextCursor;
    let count = first.files.length;
    let tail = first.files;
    while (cursor) {
      const page = await store.list("big", { limit: 1000, cursor });
      count += page.files.length;
      tail = page.files;
      cursor = page.nextCursor;
    }
    expect(count).toBe(30_000);
    expect(tail[tail.length - 1]?.id).toBe(last);
    await store.close?.();
  }, 60_000);

  it("maxScopeShare: one scope holds at most its share of maxTotalBytes (stored, staged, in flight)", async () => {
    const store = memoryStore({ maxTotalBytes: 1000, maxScopeShare: 0.5, sweepInterval: 0 });
    const staged = await store.stage(Buffer.alloc(300), { scope: "a", name: "staged" });
    await store.put(Buffer.alloc(200), { scope: "a", name: "stored" });
    try {
      await store.put(Buffer.alloc(1), { scope: "a", name: "over" });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({
        code: "QUOTA_EXCEEDED",
        status: 413,
        data: { quota: "bytes", limit: 500 },
      });
    }
    expect((await store.put(Buffer.alloc(500), { scope: "b", name: "b" })).size).toBe(500);
    await staged.abort();
    expect((await store.put(Buffer.alloc(300), { scope: "a", name: "after abort" })).size).toBe(300);
    // The total still caps everything: a third scope finds no room.
    expect(await codeOf(store.put(Buffer.alloc(1), { scope: "c", name: "c" }))).toBe("FILE_TOO_LARGE");
    await store.close?.();
  });

  it("maxScopeShare defaults to a quarter, and means nothing without maxTotalBytes", async () => {
    const capped = memoryStore({ maxTotalBytes: 4000, sweepInterval: 0 });
    await capped.put(Buffer.alloc(1000), { scope: "a", name: "quarter" });
    expect(await codeOf(capped.put(Buffer.alloc(1), { scope: "a", name: "more" }))).toBe("QUOTA_EXCEEDED");
    const uncapped = memoryStore({ maxScopeShare: 0.01, sweepInterval: 0 });
    expect((await uncapped.put(Buffer.alloc(100_000), { scope: "a", name: "big" })).size).toBe(100_000);
    expect(uncapped.quota).toBeUndefined();
    await capped.close?.();
    await uncapped.close?.();
  });

  it("a full total is freed of expired files before a put is refused", async () => {
    let now = Date.UTC(2030, 0, 1);
    const store = memoryStore({ maxTotalBytes: 1000, maxScopeShare: 1, sweepInterval: 0, now: () => now });
    await store.put(Buffer.alloc(1000), { scope: "a", name: "short", ttl: 10 });
    expect(await codeOf(store.put(Buffer.alloc(1), { scope: "b", name: "x" }))).toBe("FILE_TOO_LARGE");
    now += 10_000;
    expect((await store.put(Buffer.alloc(1000), { scope: "b", name: "fits" })).size).toBe(1000);
    await store.close?.();
  });
});
