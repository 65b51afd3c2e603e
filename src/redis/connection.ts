import { createHash } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";

/**
 * How a Redis driver gets its connection: an `ioredis` client you own (`client`), or a `url` (plus
 * `redisOptions`) from which the driver makes and owns one.
 *
 * @example
 * ```ts
 * const connection: RedisConnectionOptions = { url: "redis://127.0.0.1:6379/0" };
 * const state = redisState(connection);
 * ```
 */
export interface RedisConnectionOptions {
  /** An `ioredis` client to use; the driver never closes it. */
  client?: Redis;
  /** A `redis://` / `rediss://` URL; the driver opens a client and closes it on `close()`. */
  url?: string;
  /**
   * Options for a client made from `url`. The driver's defaults fail commands fast while Redis is
   * down (`maxRetriesPerRequest: 1`, `connectTimeout: 2000`) instead of queueing them for minutes;
   * the client keeps reconnecting, so the driver recovers when Redis is back.
   * @default { maxRetriesPerRequest: 1, connectTimeout: 2000 }
   */
  redisOptions?: RedisOptions;
  /** Prefix of every key (and channel) the driver uses. @default "mfb:" */
  keyPrefix?: string;
}

/** A resolved connection: the client, whether the driver owns it, and the key prefix. */
export interface Connection {
  readonly client: Redis;
  readonly owned: boolean;
  readonly prefix: string;
}

/** Validates connection options and opens (or adopts) the client. `what` names the factory. */
export function connect(options: RedisConnectionOptions, what: string): Connection {
  if (typeof options !== "object" || options === null) {
    throw new FileBridgeError("INVALID_OPTION", `${what} options must be an object`);
  }
  const prefix = options.keyPrefix ?? "mfb:";
  if (typeof prefix !== "string" || prefix.length > 128 || /[\s{}]/.test(prefix)) {
    throw new FileBridgeError(
      "INVALID_OPTION",
      "keyPrefix must be a string of at most 128 characters without spaces or braces",
    );
  }
  if (options.client !== undefined) {
    if (typeof options.client !== "object" || typeof options.client?.evalsha !== "function") {
      throw new FileBridgeError("INVALID_OPTION", "client must be an ioredis client");
    }
    return { client: options.client, owned: false, prefix };
  }
  if (typeof options.url !== "string" || !/^rediss?:\/\//.test(options.url)) {
    throw new FileBridgeError("INVALID_OPTION", "url must be a redis:// or rediss:// URL (or pass client)");
  }
  const client = new Redis(options.url, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    ...options.redisOptions,
  });
  // Errors reach the callers of commands; an unhandled "error" event would crash the process.
  client.on("error", () => {});
  return { client, owned: true, prefix };
}

/** Closes a connection the driver owns. */
export async function disconnect(connection: Connection): Promise<void> {
  if (!connection.owned) return;
  try {
    await connection.client.quit();
  } catch {
    connection.client.disconnect();
  }
}

/** Wraps a Redis failure into `STORAGE_ERROR` naming what failed; FileBridgeErrors pass through. */
export function redisError(action: string, error: unknown): FileBridgeError {
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", `redis: could not ${action} (is Redis reachable?)`, {
    cause: error,
  });
}

/**
 * A Lua script run by its sha (`EVALSHA`), loading it with `EVAL` when the server does not know it
 * yet (first use, or after a Redis restart flushed the script cache).
 */
export function luaScript(
  lua: string,
): (client: Connection["client"], keys: string[], args: Array<string | number>) => Promise<unknown> {
  const sha = createHash("sha1").update(lua).digest("hex");
  return async (client, keys, args) => {
    try {
      return await client.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      return client.eval(lua, keys.length, ...keys, ...args);
    }
  };
}
