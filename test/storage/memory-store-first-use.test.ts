/**
 * `memoryStore` loads what its async methods run on the first put (issue 39): its options are
 * checked synchronously and a put's plan before the load, a store that holds nothing answers its
 * reads without loading, two first puts share one load, and a load that fails fails the call while
 * the next call loads again.
 */
import { describe, expect, it } from "vitest";
import { countLoads } from "../support/first-use.js";
import { codeOf, codeOfSync } from "../support/helpers.js";

const ID = "01jabcdefghjkmnpqrstvwxyz0";

/** `memoryStore` from a fresh module graph whose work module counts (and may fail) its loads. */
async function countingStore(failFirst = false) {
  const { loads, failure } = countLoads("src/storage/memory-store-work.js", { failFirst });
  const { memoryStore } = await import("../../src/storage/memory-store.js");
  return { memoryStore, loads, failure };
}

describe("memoryStore's work, loaded on first use", () => {
  it("checks options synchronously and a put's plan and a list's options before the load; an empty store answers without it", async () => {
    const { memoryStore, loads } = await countingStore();
    expect(codeOfSync(() => memoryStore({ maxTotalBytes: -1 }))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => memoryStore({ maxScopeShare: 2 }))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => memoryStore({ sweepInterval: "soon" as "1m" }))).toBe("INVALID_OPTION");
    const store = memoryStore({ sweepInterval: 0 });
    expect(await codeOf(store.put(new Uint8Array(1), { scope: "", name: "a.txt" }))).toBe("INVALID_INPUT");
    expect(await codeOf(store.stage(new Uint8Array(1), { scope: "s", name: "a", kind: "x" as "file" }))).toBe(
      "INVALID_OPTION",
    );
    expect(await codeOf(store.list("s", { limit: 0 }))).toBe("INVALID_INPUT");
    expect(await codeOf(store.list("s", { cursor: "nope" }))).toBe("INVALID_CURSOR");
    expect(await store.head("s", ID)).toBeNull();
    expect(await store.read("s", ID)).toBeNull();
    expect(await store.list("s")).toEqual({ files: [] });
    expect(await store.delete("s", ID)).toBe(false);
    expect(await store.usage?.("s")).toEqual({ bytes: 0, files: 0 });
    expect(await store.sweep()).toBe(0);
    expect(loads.attempts).toBe(0);
    await store.close?.();
  });

  it("two first puts at once share one load; both files are stored", async () => {
    const { memoryStore, loads } = await countingStore();
    const store = memoryStore({ maxTotalBytes: 1024, maxScopeShare: 1 });
    const [a, b] = await Promise.all([
      store.put(new TextEncoder().encode("one"), { scope: "s", name: "a.txt" }),
      store.put(new TextEncoder().encode("two!"), { scope: "s", name: "b.txt" }),
    ]);
    expect(loads.attempts).toBe(1);
    expect((await store.list("s")).files.map((file) => file.id)).toEqual([a.id, b.id].sort());
    expect(await store.usage?.("s")).toEqual({ bytes: 7, files: 2 });
    await store.close?.();
  });

  it("a failed load fails the put and stores nothing; the next put loads again", async () => {
    const { memoryStore, loads, failure } = await countingStore(true);
    const store = memoryStore();
    const error = await store.put(new Uint8Array(3), { scope: "s", name: "a.bin" }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(loads.attempts).toBe(1);
    // Under vitest a mocked module's failure arrives wrapped, with the load's error as its cause.
    expect(error === failure || (error as Error | undefined)?.cause === failure).toBe(true);
    expect(await store.list("s")).toEqual({ files: [] });
    const file = await store.put(new Uint8Array(3), { scope: "s", name: "a.bin" });
    expect(loads.attempts).toBe(2);
    expect((await store.head("s", file.id))?.size).toBe(3);
    await store.close?.();
  });
});
