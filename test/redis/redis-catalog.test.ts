import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { newId } from "../../src/internal/ids.js";
import { redisCatalog } from "../../src/redis/redis-catalog.js";
import type { FileCatalog, FileKind, StoredFile } from "../../src/storage/types.js";

function entry(scope: string, i: number, kind: FileKind = "file", expiresAt?: number): StoredFile {
  return {
    id: newId(1_700_000_000_000 + i),
    scope,
    name: `f${i}.txt`,
    mimeType: "text/plain",
    size: i,
    sha256: "0".repeat(64),
    createdAt: 1_700_000_000_000 + i,
    kind,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    metadata: { i: String(i) },
  };
}

describeWithServices("redisCatalog on a real redis-server", () => {
  let catalog: FileCatalog;
  let other: FileCatalog;
  beforeEach(() => {
    const keyPrefix = uniquePrefix("catalog");
    catalog = redisCatalog({ url: requireServices().redis.url, keyPrefix });
    other = redisCatalog({ url: requireServices().redis.url, keyPrefix }); // a second replica
  });
  afterEach(async () => {
    await catalog.close?.();
    await other.close?.();
  });

  it("adds, gets, pages in id order with kinds, removes exactly once", async () => {
    const kinds: FileKind[] = ["upload", "artifact", "file"];
    const files = Array.from({ length: 30 }, (_, i) => entry("s", i, kinds[i % 3]));
    await Promise.all(files.map((file) => catalog.add(file)));
    expect(await other.get("s", files[4]!.id)).toEqual(files[4]);
    expect(await other.get("other-scope", files[4]!.id)).toBeNull();
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await other.page("s", { limit: 7, ...(after ? { after } : {}) });
      seen.push(...page.files.map((f) => f.id));
      if (!page.more) break;
      after = page.files.at(-1)!.id;
    }
    expect(seen).toEqual(files.map((f) => f.id));
    const uploads = await other.page("s", { limit: 100, kind: "upload" });
    expect(uploads.files.map((f) => f.id)).toEqual(files.filter((f) => f.kind === "upload").map((f) => f.id));
    expect((await other.page("t", { limit: 10 })).files).toEqual([]);
    const removals = await Promise.all([catalog.remove("s", files[0]!.id), other.remove("s", files[0]!.id)]);
    expect(removals.filter(Boolean)).toEqual([files[0]]);
    expect(await catalog.get("s", files[0]!.id)).toBeNull();
    expect((await catalog.page("s", { limit: 100, kind: "upload" })).files).toHaveLength(9);
    expect((await catalog.page("s", { limit: 100 })).files).toHaveLength(29);
  });

  it("keeps an expiry queue for sweeping", async () => {
    const a = entry("s", 1, "file", 1000);
    const b = entry("s", 2, "file", 5000);
    const c = entry("u", 3);
    for (const file of [a, b, c]) await catalog.add(file);
    expect(await other.expired(999, 10)).toEqual([]);
    expect(await other.expired(1000, 10)).toEqual([{ scope: "s", id: a.id }]);
    expect(await other.expired(10_000, 10)).toEqual([
      { scope: "s", id: a.id },
      { scope: "s", id: b.id },
    ]);
    await other.remove("s", a.id);
    expect(await catalog.expired(10_000, 10)).toEqual([{ scope: "s", id: b.id }]);
  });

  it("never puts the scope into a key name", async () => {
    const scope = "session-secret-4711";
    await catalog.add(entry(scope, 1));
    const { Redis } = await import("ioredis");
    const raw = new Redis(requireServices().redis.url);
    try {
      const keys = await raw.keys("*");
      expect(keys.some((key) => key.includes("session-secret"))).toBe(false);
    } finally {
      raw.disconnect();
    }
  });
});
