import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { ChangeFeed, StoreChange } from "../../src/storage/types.js";
import { bytes, connect } from "./support.js";

/** Two (or more) in-process feeds joined like replicas on one Redis: nobody gets its own changes. */
function joinedFeeds(count: number): { feeds: ChangeFeed[]; published: StoreChange[] } {
  const listeners: Array<Set<(change: StoreChange) => void>> = [];
  const published: StoreChange[] = [];
  const feeds = Array.from({ length: count }, (_, me): ChangeFeed => {
    listeners[me] = new Set();
    return {
      driver: "test",
      async publish(change) {
        published.push(change);
        const wire = JSON.parse(JSON.stringify(change)) as StoreChange;
        listeners.forEach((set, other) => {
          if (other !== me) for (const listener of set) listener(wire);
        });
      },
      subscribe(listener) {
        listeners[me]?.add(listener);
        return () => listeners[me]?.delete(listener);
      },
    };
  });
  return { feeds, published };
}

const tick = (ms = 60) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ResourceRegistry with a change feed (replicas)", () => {
  it("a file added on replica A reaches replica B's list and sends list_changed to B's session", async () => {
    const store = memoryStore();
    const { feeds, published } = joinedFeeds(2);
    const a = await connect({ store, feed: feeds[0], scope: () => "chat-1" });
    const b = await connect({ store, feed: feeds[1], scope: () => "chat-1" });
    try {
      expect((await b.client.listResources()).resources).toEqual([]); // B has loaded the scope: empty
      let changed = 0;
      const { ResourceListChangedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
      b.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        changed++;
      });
      const file = await a.registry.add(bytes("hello"), { scope: "chat-1", name: "a.txt" });
      await tick();
      expect(published).toEqual([expect.objectContaining({ type: "added", scope: "chat-1" })]);
      expect(changed).toBe(1);
      const listed = (await b.client.listResources()).resources;
      expect(listed.map((r) => r.name)).toEqual(["a.txt"]);

      await a.registry.remove("chat-1", file.id);
      await tick();
      expect(published.map((c) => c.type)).toEqual(["added", "removed"]);
      expect(changed).toBe(2);
      expect((await b.client.listResources()).resources).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("ignores malformed changes and stops listening on close()", async () => {
    const store = memoryStore();
    const { feeds } = joinedFeeds(2);
    const b = await connect({ store, feed: feeds[1], scope: () => "s" });
    await feeds[0]?.publish({ type: "added", scope: "", file: {} } as never);
    await feeds[0]?.publish({ type: "removed", scope: "s", id: "../x" });
    await tick();
    expect((await b.client.listResources()).resources).toEqual([]);
    await b.close();
    expect(() => connect({ store, feed: { driver: "x" } as never })).rejects.toMatchObject({
      code: "INVALID_OPTION",
    });
  });
});
