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

/** What a replica whose publishes failed sends once it can again: "reload, you may have missed mine". */
interface ResyncEnvelope {
  o: string;
  r: 1;
}

function isResync(message: string, origin: string): boolean {
  try {
    const envelope = JSON.parse(message) as ResyncEnvelope;
    return typeof envelope?.o === "string" && envelope.o !== origin && envelope.r === 1;
  } catch {
    return false;
  }
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
 * resubscribes after a reconnect. Delivery is at most once: changes published while an instance was
 * cut off are lost to it, so once it is subscribed again it calls its `onResync` listeners (the
 * registry reloads the scopes it holds from the store). An instance whose own publish failed tells
 * the others to do the same once it can publish again.
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
export function redisChangeFeed(
  options: RedisChangeFeedOptions,
): ChangeFeed & { ready(): Promise<void>; onResync(listener: () => void): () => void } {
  const connection = connect(options, "redisChangeFeed");
  const channel = options.channel ?? `${connection.prefix}changes`;
  if (typeof channel !== "string" || channel.length === 0 || channel.length > 256) {
    throw check.error("channel", "must be a non-empty string of at most 256 characters");
  }
  const origin = randomUUID();
  const listeners = new Set<(change: StoreChange) => void>();
  const resyncListeners = new Set<() => void>();
  let subscriber: ReturnType<typeof connection.client.duplicate> | undefined;
  let subscribed: Promise<void> | undefined;
  let closed = false;

  function deliver(message: string): void {
    if (message.includes('"r":1') && isResync(message, origin)) {
      resync();
      return;
    }
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

  /** Once subscribed again after a lost connection: whatever was published meanwhile was missed. */
  async function resubscribed(sub: NonNullable<typeof subscriber>): Promise<void> {
    try {
      // The channel is live again before the listeners reload, so nothing published after that is
      // missed.
      await sub.subscribe(channel);
    } catch {
      return; // cut off again: the next "ready" comes back here
    }
    if (!closed) resync();
  }

  function resync(): void {
    for (const listener of [...resyncListeners]) {
      try {
        listener();
      } catch {
        // one listener's failure does not stop the others
      }
    }
  }

  function listen(): Promise<void> {
    if (!subscribed) {
      // `autoResubscribe: false`: ioredis's own resubscription on "ready" drops its promise, so a
      // link closing before the reply rejects with nobody listening; `resubscribed` does it, caught.
      const sub = connection.client.duplicate({
        maxRetriesPerRequest: null,
        enableOfflineQueue: true,
        autoResubscribe: false,
      });
      subscriber = sub;
      let lost = false;
      sub.on("error", () => {});
      sub.on("close", () => {
        lost = true;
      });
      sub.on("ready", () => {
        if (!lost || closed) return;
        lost = false;
        resubscribed(sub).catch(() => {});
      });
      sub.on("message", (from: string, message: string) => {
        if (from === channel) deliver(message);
      });
      subscribed = sub.subscribe(channel).then(() => {});
      subscribed.catch(() => {});
    }
    return subscribed;
  }

  // A publish that failed was lost to every other replica: once publishing works again (the main
  // connection is back, or the next publish goes through), tell them to reload.
  let unsentChanges = false;
  async function announceResync(): Promise<void> {
    if (!unsentChanges || closed) return;
    unsentChanges = false;
    try {
      await connection.client.publish(channel, JSON.stringify({ o: origin, r: 1 } satisfies ResyncEnvelope));
    } catch {
      unsentChanges = true;
    }
  }
  const onReady = () => {
    announceResync().catch(() => {});
  };
  connection.client.on("ready", onReady);

  return {
    driver: "redis",

    async publish(change: StoreChange): Promise<void> {
      if (closed) throw new FileBridgeError("STORAGE_ERROR", "redis: the change feed is closed");
      const message = JSON.stringify({ o: origin, c: change } satisfies Envelope);
      try {
        await connection.client.publish(channel, message);
      } catch (error) {
        unsentChanges = true;
        throw redisError("publish a change", error);
      }
      await announceResync();
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

    onResync(listener: () => void): () => void {
      if (typeof listener !== "function") {
        throw new FileBridgeError("INVALID_INPUT", "listener must be a function");
      }
      resyncListeners.add(listener);
      listen();
      return () => {
        resyncListeners.delete(listener);
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
      resyncListeners.clear();
      connection.client.off("ready", onReady);
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
