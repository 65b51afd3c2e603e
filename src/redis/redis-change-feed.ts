import { randomUUID } from "node:crypto";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { optionCheck } from "../internal/options.js";
import type { ChangeFeed, StoreChange, StoredFile } from "../storage/types.js";
import { connect, disconnect, type RedisConnectionOptions, redisError } from "./connection.js";

const check = optionCheck("redisChangeFeed");

/**
 * Options of {@link redisChangeFeed}.
 *
 * @example
 * ```ts
 * const feed = redisChangeFeed({ url: "redis://127.0.0.1:6379", channel: "my-app:changes" });
 * ```
 */
export interface RedisChangeFeedOptions extends RedisConnectionOptions {
  /** Pub/sub channel shared by the replicas of one deployment. @default `${keyPrefix}changes` */
  channel?: string;
}

interface Envelope {
  /** Instance that published it. */
  o: string;
  c: StoreChange;
}

function isStoredFile(value: unknown): value is StoredFile {
  const file = value as StoredFile;
  return (
    typeof file === "object" &&
    file !== null &&
    typeof file.id === "string" &&
    typeof file.scope === "string" &&
    typeof file.name === "string" &&
    typeof file.size === "number"
  );
}

/** Parses a message; `null` for anything that is not a well-formed change. */
function parseChange(message: string): Envelope | null {
  let envelope: Envelope;
  try {
    envelope = JSON.parse(message) as Envelope;
  } catch {
    return null;
  }
  const change = envelope?.c as StoreChange | undefined;
  if (typeof envelope?.o !== "string" || typeof change !== "object" || change === null) return null;
  if (typeof change.scope !== "string") return null;
  if (change.type === "added" && isStoredFile(change.file) && change.file.scope === change.scope) {
    return envelope;
  }
  if (change.type === "removed" && typeof change.id === "string") return envelope;
  return null;
}

/**
 * A {@link ChangeFeed} on Redis pub/sub: what one replica publishes reaches every other replica
 * subscribed to the same channel (an instance never receives its own changes). Publishing uses the
 * main connection; subscribing opens a second one (Redis requires it) on first `subscribe`, which
 * resubscribes by itself after a reconnect. Delivery is at most once: a replica that was cut off
 * reloads from the store.
 *
 * @example
 * ```ts
 * import { redisChangeFeed } from "mcp-file-bridge/redis";
 *
 * const feed = redisChangeFeed({ url: process.env.REDIS_URL });
 * feed.subscribe((change) => {
 *   if (change.type === "added") console.log("stored elsewhere:", change.file.name);
 * });
 * await feed.ready();
 * ```
 */
export function redisChangeFeed(options: RedisChangeFeedOptions): ChangeFeed & { ready(): Promise<void> } {
  const connection = connect(options, "redisChangeFeed");
  const channel = options.channel ?? `${connection.prefix}changes`;
  if (typeof channel !== "string" || channel.length === 0 || channel.length > 256) {
    throw check.error("channel", "must be a non-empty string of at most 256 characters");
  }
  const origin = randomUUID();
  const listeners = new Set<(change: StoreChange) => void>();
  let subscriber: ReturnType<typeof connection.client.duplicate> | undefined;
  let subscribed: Promise<void> | undefined;
  let closed = false;

  function deliver(message: string): void {
    const envelope = parseChange(message);
    if (!envelope || envelope.o === origin) return;
    for (const listener of [...listeners]) {
      try {
        listener(envelope.c);
      } catch {
        // one listener's failure does not stop the others
      }
    }
  }

  function listen(): Promise<void> {
    if (!subscribed) {
      const sub = connection.client.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
      subscriber = sub;
      sub.on("error", () => {});
      sub.on("message", (from: string, message: string) => {
        if (from === channel) deliver(message);
      });
      subscribed = sub.subscribe(channel).then(() => {});
      subscribed.catch(() => {});
    }
    return subscribed;
  }

  return {
    driver: "redis",

    async publish(change: StoreChange): Promise<void> {
      if (closed) throw new FileBridgeError("STORAGE_ERROR", "redis: the change feed is closed");
      const message = JSON.stringify({ o: origin, c: change } satisfies Envelope);
      try {
        await connection.client.publish(channel, message);
      } catch (error) {
        throw redisError("publish a change", error);
      }
    },

    subscribe(listener: (change: StoreChange) => void): () => void {
      if (typeof listener !== "function") {
        throw new FileBridgeError("INVALID_INPUT", "listener must be a function");
      }
      listeners.add(listener);
      listen();
      return () => {
        listeners.delete(listener);
      };
    },

    async ready(): Promise<void> {
      try {
        await listen();
      } catch (error) {
        throw redisError("subscribe to the change feed", error);
      }
    },

    async close(): Promise<void> {
      closed = true;
      listeners.clear();
      if (subscriber) {
        try {
          await subscriber.quit();
        } catch {
          subscriber.disconnect();
        }
      }
      await disconnect(connection);
    },
  };
}
