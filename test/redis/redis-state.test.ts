import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { redisState } from "../../src/redis/redis-state.js";
import { codeOf, runStateStoreSuite } from "../../src/testing/index.js";

describeWithServices("redisState on a real redis-server", () => {
  runStateStoreSuite("redisState", (now) =>
    redisState({ url: requireServices().redis.url, keyPrefix: uniquePrefix("state"), now }),
  );

  it("validates its options with INVALID_OPTION", () => {
    for (const bad of [
      null,
      {},
      { url: "http://x" },
      { client: {} },
      { url: "redis://x", keyPrefix: "a b" },
    ]) {
      expect(() => redisState(bad as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    }
    expect(() => redisState({ url: "redis://127.0.0.1:1", now: 5 as never })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });

  describeWithServices("across separate clients (replicas)", () => {
    const stores: ReturnType<typeof redisState>[] = [];
    const keyPrefix = uniquePrefix("replicas");
    beforeAll(() => {
      for (let i = 0; i < 3; i++) stores.push(redisState({ url: requireServices().redis.url, keyPrefix }));
    });
    afterAll(async () => {
      for (const store of stores) await store.close?.();
    });

    it("a claim fired at 3 clients 20 times at once succeeds exactly once", async () => {
      for (let round = 0; round < 10; round++) {
        const key = `ticket:${round}`;
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (stores[i % 3] as (typeof stores)[0]).setIfAbsent(key, { i }, { ttl: "1m" }),
          ),
        );
        expect(outcomes.filter(Boolean)).toHaveLength(1);
        const winner = outcomes.indexOf(true);
        for (const store of stores) expect(await store.get(key)).toEqual({ i: winner });
      }
    });

    it("what one client sets, the others read and delete exactly once", async () => {
      await (stores[0] as (typeof stores)[0]).set("shared", { a: 1 }, { ttl: 60 });
      expect(await (stores[1] as (typeof stores)[0]).get("shared")).toEqual({ a: 1 });
      const deletes = await Promise.all(stores.map((store) => store.delete("shared")));
      expect(deletes.filter(Boolean)).toHaveLength(1);
    });

    it("keys also expire in Redis itself", async () => {
      const store = stores[0] as (typeof stores)[0];
      await store.set("short", 1, { ttl: "50ms" });
      expect(await store.client.pttl(`${keyPrefix}state:short`)).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 120));
      expect(await store.client.exists(`${keyPrefix}state:short`)).toBe(0);
      expect(await store.setIfAbsent("short", 2)).toBe(true);
    });
  });

  it("a closed store fails with STORAGE_ERROR", async () => {
    const store = redisState({ url: requireServices().redis.url, keyPrefix: uniquePrefix("closed") });
    await store.set("k", 1);
    await store.close?.();
    expect(await codeOf(store.get("k"))).toBe("STORAGE_ERROR");
  });
});
