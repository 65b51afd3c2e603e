import { createServer, type Server, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { redisChangeFeed } from "../../src/redis/redis-change-feed.js";
import { waitUntil } from "../support/helpers.js";

/**
 * A minimal RESP server standing in for Redis: it answers the ready check and the first `SUBSCRIBE`
 * of each subscribing connection it is told to, and leaves the others unanswered, so a test can hold
 * a resubscription in flight while the feed closes.
 */
function fakeRedis(answerSubscribe: (connection: number) => boolean) {
  const sockets: Socket[] = [];
  const subscribes: number[] = [];
  const server: Server = createServer((socket) => {
    const connection = sockets.push(socket) - 1;
    let pending = "";
    socket.on("error", () => {});
    socket.on("data", (data) => {
      pending += data.toString("latin1");
      for (;;) {
        const command = readCommand(pending);
        if (!command) return;
        pending = pending.slice(command.length);
        const [name = "", ...args] = command.words;
        switch (name.toLowerCase()) {
          case "info":
            socket.write(bulk("# Server\r\nredis_version:7.0.0\r\nloading:0\r\n"));
            break;
          case "subscribe":
            subscribes.push(connection);
            if (answerSubscribe(connection)) {
              args.forEach((channel, i) => {
                socket.write(`*3\r\n${bulk("subscribe")}${bulk(channel)}:${i + 1}\r\n`);
              });
            }
            break;
          case "quit":
            socket.destroy();
            return;
          default:
            socket.write("+OK\r\n");
        }
      }
    });
  });
  return {
    sockets,
    subscribes,
    listen: () =>
      new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const bulk = (text: string) => `$${Buffer.byteLength(text, "latin1")}\r\n${text}\r\n`;

/** One RESP array of bulk strings from the front of `input`, or undefined until it is whole. */
function readCommand(input: string): { words: string[]; length: number } | undefined {
  const head = /^\*(\d+)\r\n/.exec(input);
  if (!head) return undefined;
  let at = head[0].length;
  const words: string[] = [];
  for (let i = 0; i < Number(head[1]); i++) {
    const size = /^\$(\d+)\r\n/.exec(input.slice(at));
    if (!size) return undefined;
    const start = at + size[0].length;
    const end = start + Number(size[1]);
    if (input.length < end + 2) return undefined;
    words.push(input.slice(start, end));
    at = end + 2;
  }
  return { words, length: at };
}

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

it("closing while a resubscription after a lost connection is unanswered leaves no unhandled rejection", async () => {
  let subscribingConnections = 0;
  const redis = fakeRedis(() => ++subscribingConnections === 1);
  servers.push(redis);
  const port = await redis.listen();
  const feed = redisChangeFeed({
    url: `redis://127.0.0.1:${port}`,
    redisOptions: { retryStrategy: () => 20 },
  });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    await feed.ready();
    const [first] = redis.subscribes;
    // The subscriber's link drops; it reconnects, and its SUBSCRIBE again is never answered.
    redis.sockets[first as number]?.destroy();
    await waitUntil(() => redis.subscribes.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await feed.close?.();
    // Let rejections of dropped promises surface (Node reports them after the microtask queue).
    await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  expect(unhandled.map((reason) => String((reason as Error)?.message ?? reason))).toEqual([]);
});
