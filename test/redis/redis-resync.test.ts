import { mkdtemp, rm } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { startRedis } from "../../scripts/services/services.js";
import { describeWithServices } from "../../scripts/services/test-env.js";
import { redisChangeFeed } from "../../src/redis/redis-change-feed.js";
import { fsStore } from "../../src/storage/fs-store.js";
import type { ChangeFeed } from "../../src/storage/types.js";
import { bytes, connect, type Harness } from "../registry/support.js";

/**
 * A TCP relay in front of redis-server: one replica reaches Redis through it, so the test can cut
 * that replica off (every relayed connection dropped, new ones refused) while the others keep Redis.
 */
async function relay(
  target: number,
): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = createConnection({ host: "127.0.0.1", port: target });
        sockets.add(client).add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on("error", drop).on("close", drop);
        upstream.on("error", drop).on("close", drop);
        client.pipe(upstream).pipe(client);
      });
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  await listen();
  return {
    port,
    async cut() {
      const s = server;
      server = undefined;
      await new Promise<void>((resolve) => {
        s?.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    restore: listen,
  };
}

async function eventually(check: () => Promise<void> | void, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

// A redis-server of its own: the test takes it away from one replica (and from all of them).
describeWithServices("a replica cut off from Redis resyncs when it is back (issue 21, item 7)", () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startRedis>>;
  const open: Array<{ close?(): Promise<void> }> = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mfb-redis-resync-"));
    server = await startRedis(dir);
  });
  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close?.();
  });
  afterAll(async () => {
    server.process.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  /** Two replicas on one shared store, each with its own feed (and optionally its own Redis URL). */
  async function replicas(
    url1: string,
    url2: string,
    wrap1: (feed: ChangeFeed) => ChangeFeed = (feed) => feed,
  ) {
    const store = fsStore(join(dir, `store-${open.length}`));
    const feed1 = redisChangeFeed({ url: url1 });
    const feed2 = redisChangeFeed({ url: url2 });
    open.push(feed1, feed2);
    await Promise.all([feed1.ready(), feed2.ready()]);
    const scope = () => "chat-1";
    const one = await connect({ store, feed: wrap1(feed1), scope, notifyDelayMs: 10 });
    const two = await connect({ store, feed: feed2, scope, notifyDelayMs: 10 });
    open.push(one, two);
    return { store, feed1, feed2, one, two };
  }

  function countListChanged(harness: Harness): { count: number } {
    const seen = { count: 0 };
    harness.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      seen.count++;
    });
    return seen;
  }

  it("a file stored through replica 1 while replica 2 was cut off shows in replica 2's lists once it is back", async () => {
    const link = await relay(server.port);
    open.push({ close: link.cut });
    const { store, feed2, one, two } = await replicas(
      `redis://127.0.0.1:${server.port}`,
      `redis://127.0.0.1:${link.port}`,
    );
    // Replica 2's live session has listed the scope: the replica holds its index.
    expect((await two.client.listResources()).resources).toEqual([]);
    const changed = countListChanged(two);

    await link.cut();
    const file = await one.registry.add(bytes("stored while 2 was away"), {
      scope: "chat-1",
      name: "missed.txt",
    });
    // The file reads by handle on replica 2 (the store is shared) but is not announced to it.
    expect((await two.registry.link(file)).structuredContent.name).toBe("missed.txt");
    await link.restore();

    await eventually(() => expect(changed.count).toBeGreaterThanOrEqual(1));
    expect((await two.client.listResources()).resources.map((r) => r.name)).toEqual(["missed.txt"]);
    // A fresh session on replica 2 lists it too.
    const fresh = await connect({ store, feed: feed2, scope: () => "chat-1" });
    open.push(fresh);
    expect((await fresh.client.listResources()).resources.map((r) => r.name)).toEqual(["missed.txt"]);

    // And a file removed through replica 1 while 2 was away goes from its list as well.
    await link.cut();
    await one.registry.remove("chat-1", file.id);
    await link.restore();
    await eventually(async () => expect((await two.client.listResources()).resources).toEqual([]));
  });

  it("a file stored through a replica whose own Redis link was down reaches the others once that link is back", async () => {
    const link = await relay(server.port);
    open.push({ close: link.cut });
    // Replica 1 is the one cut off this time: its publish of the new file fails.
    const failedPublishes: string[] = [];
    const { one, two } = await replicas(
      `redis://127.0.0.1:${link.port}`,
      `redis://127.0.0.1:${server.port}`,
      (feed) => ({
        ...feed,
        driver: feed.driver,
        publish: (change) =>
          feed.publish(change).catch((error: { code?: string }) => {
            failedPublishes.push(error.code ?? "?");
            throw error;
          }),
      }),
    );
    expect((await two.client.listResources()).resources).toEqual([]);
    const changed = countListChanged(two);

    await link.cut();
    await one.registry.add(bytes("stored by the cut-off replica"), { scope: "chat-1", name: "unsent.txt" });
    // Wait until its publish has really failed (not just queued for the reconnect).
    await eventually(() => expect(failedPublishes.length).toBeGreaterThanOrEqual(1));
    expect(failedPublishes[0]).toBe("STORAGE_ERROR");
    await link.restore();

    await eventually(() => expect(changed.count).toBeGreaterThanOrEqual(1));
    expect((await two.client.listResources()).resources.map((r) => r.name)).toEqual(["unsent.txt"]);
  });

  it("after a Redis restart both replicas list what was stored while it was down", async () => {
    const url = `redis://127.0.0.1:${server.port}`;
    const { one, two } = await replicas(url, url);
    expect((await two.client.listResources()).resources).toEqual([]);
    const changed = countListChanged(two);

    const exited = new Promise((r) => server.process.once("exit", r));
    server.process.kill("SIGKILL");
    await exited;
    // Replica 1's publish fails (Redis is down): the file is stored all the same.
    await one.registry.add(bytes("stored during the outage"), { scope: "chat-1", name: "outage.txt" });
    server = await startRedis(dir, server.port);

    await eventually(() => expect(changed.count).toBeGreaterThanOrEqual(1));
    expect((await two.client.listResources()).resources.map((r) => r.name)).toEqual(["outage.txt"]);
  });
});
