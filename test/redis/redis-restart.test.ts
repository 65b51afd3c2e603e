import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRedis } from "../../scripts/services/services.js";
import { describeWithServices } from "../../scripts/services/test-env.js";
import { redisChangeFeed } from "../../src/redis/redis-change-feed.js";
import { redisState } from "../../src/redis/redis-state.js";
import type { StoreChange } from "../../src/storage/types.js";
import { codeOf } from "../../src/testing/index.js";

async function eventually<T>(attempt: () => Promise<T>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

// A redis-server of its own, so killing it disturbs no other suite.
describeWithServices("Redis restart during calls", () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startRedis>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mfb-redis-restart-"));
    server = await startRedis(dir);
  });
  afterAll(async () => {
    server.process.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  it("calls fail fast with STORAGE_ERROR while Redis is down, and work again once it is back", async () => {
    const url = `redis://127.0.0.1:${server.port}`;
    const state = redisState({ url });
    const feed = redisChangeFeed({ url });
    const publisher = redisChangeFeed({ url });
    const got: StoreChange[] = [];
    feed.subscribe((change) => got.push(change));
    await feed.ready();
    expect(await state.setIfAbsent("ticket", 1, { ttl: "1m" })).toBe(true);

    const exited = new Promise((r) => server.process.once("exit", r));
    server.process.kill("SIGKILL");
    await exited;

    const started = Date.now();
    expect(await codeOf(state.setIfAbsent("ticket-2", 1))).toBe("STORAGE_ERROR");
    expect(await codeOf(state.get("ticket"))).toBe("STORAGE_ERROR");
    expect(await codeOf(publisher.publish({ type: "removed", scope: "s", id: "x" }))).toBe("STORAGE_ERROR");
    expect(Date.now() - started).toBeLessThan(10_000);

    server = await startRedis(dir, server.port);
    // The clients reconnect by themselves: the same instances work again.
    expect(await eventually(() => state.setIfAbsent("ticket-2", 1))).toBe(true);
    expect(await state.setIfAbsent("ticket-2", 2)).toBe(false);
    // The subscriber resubscribed after the reconnect.
    await eventually(async () => {
      await publisher.publish({ type: "removed", scope: "s", id: "after-restart" });
      if (!got.some((c) => c.type === "removed" && c.id === "after-restart")) throw new Error("not yet");
    });
    await Promise.all([state.close?.(), feed.close?.(), publisher.close?.()]);
  });
});
