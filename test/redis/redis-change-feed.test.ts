import { afterEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { redisChangeFeed } from "../../src/redis/redis-change-feed.js";
import type { StoreChange, StoredFile } from "../../src/storage/types.js";
import { waitUntil } from "../support/helpers.js";

const file: StoredFile = {
  id: "01jc0000000000000000000000",
  scope: "scope-1",
  name: "a.txt",
  mimeType: "text/plain",
  size: 1,
  sha256: "0".repeat(64),
  createdAt: 1,
  kind: "upload",
};

describeWithServices("redisChangeFeed on a real redis-server", () => {
  const open: Array<{ close?(): Promise<void> }> = [];
  afterEach(async () => {
    for (const feed of open.splice(0)) await feed.close?.();
  });
  const make = (keyPrefix: string) => {
    const feed = redisChangeFeed({ url: requireServices().redis.url, keyPrefix });
    open.push(feed);
    return feed;
  };

  it("delivers each change to every other instance, never back to its publisher", async () => {
    const prefix = uniquePrefix("feed");
    const [a, b, c] = [make(prefix), make(prefix), make(prefix)];
    const got: Record<string, StoreChange[]> = { a: [], b: [], c: [] };
    a.subscribe((change) => got.a!.push(change));
    b.subscribe((change) => got.b!.push(change));
    c.subscribe((change) => got.c!.push(change));
    await Promise.all([a.ready(), b.ready(), c.ready()]);
    await a.publish({ type: "added", scope: file.scope, file });
    await b.publish({ type: "removed", scope: file.scope, id: file.id });
    await waitUntil(() => got.c!.length === 2 && got.a!.length === 1 && got.b!.length === 1);
    expect(got.c).toEqual([
      { type: "added", scope: file.scope, file },
      { type: "removed", scope: file.scope, id: file.id },
    ]);
    expect(got.a).toEqual([{ type: "removed", scope: file.scope, id: file.id }]);
    expect(got.b).toEqual([{ type: "added", scope: file.scope, file }]);
  });

  it("keeps deployments apart by channel, ignores malformed messages, and unsubscribes", async () => {
    const prefix = uniquePrefix("feed");
    const a = make(prefix);
    const b = make(prefix);
    const elsewhere = make(uniquePrefix("feed"));
    const got: StoreChange[] = [];
    const foreign: StoreChange[] = [];
    const unsubscribe = b.subscribe((change) => got.push(change));
    elsewhere.subscribe((change) => foreign.push(change));
    await Promise.all([b.ready(), elsewhere.ready()]);
    const { Redis } = await import("ioredis");
    const raw = new Redis(requireServices().redis.url);
    await raw.publish(`${prefix}changes`, "not json");
    await raw.publish(
      `${prefix}changes`,
      JSON.stringify({ o: "x", c: { type: "added", scope: "s", file: { ...file, scope: "other" } } }),
    );
    raw.disconnect();
    await a.publish({ type: "removed", scope: "s", id: file.id });
    await waitUntil(() => got.length === 1);
    expect(got).toEqual([{ type: "removed", scope: "s", id: file.id }]);
    unsubscribe();
    await a.publish({ type: "removed", scope: "s", id: "2" });
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toHaveLength(1);
    expect(foreign).toEqual([]);
  });

  it("a throwing listener does not stop the others", async () => {
    const prefix = uniquePrefix("feed");
    const a = make(prefix);
    const b = make(prefix);
    const got: StoreChange[] = [];
    b.subscribe(() => {
      throw new Error("boom");
    });
    b.subscribe((change) => got.push(change));
    await b.ready();
    await a.publish({ type: "removed", scope: "s", id: "x" });
    await waitUntil(() => got.length === 1);
  });
});
