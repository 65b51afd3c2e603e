import { durationToMs } from "../internal/duration.js";
import { optionCheck } from "../internal/options.js";
import { assertStateKey, serializeStateValue } from "../storage/memory-state.js";
import type { StateSetOptions, StateStore } from "../storage/types.js";
import {
  type Connection,
  connect,
  disconnect,
  luaScript,
  type RedisConnectionOptions,
  redisError,
} from "./connection.js";

const check = optionCheck("redisState");

/**
 * Options of {@link redisState}.
 *
 * @example
 * ```ts
 * const state = redisState({ url: "redis://127.0.0.1:6379", keyPrefix: "my-app:" });
 * ```
 */
export interface RedisStateOptions extends RedisConnectionOptions {
  /**
   * Clock, in milliseconds since the epoch, that decides expiry (Redis also drops expired keys on
   * its own). Inject one to test expiry without sleeping.
   * @default Date.now
   */
  now?: () => number;
}

/**
 * Values are stored as `<expiresAt or empty>\n<json>`, so expiry follows the driver's clock and the
 * Lua scripts below can decide "absent or expired" and write in one atomic step.
 */
const SET_IF_ABSENT = luaScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local nl = string.find(cur, '\\n', 1, true)
  local e = nl and tonumber(string.sub(cur, 1, nl - 1))
  if (not nl) or (not e) or e > tonumber(ARGV[2]) then return 0 end
end
if ARGV[3] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) else redis.call('SET', KEYS[1], ARGV[1]) end
return 1`);

const DELETE_LIVE = luaScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
redis.call('DEL', KEYS[1])
local nl = string.find(cur, '\\n', 1, true)
local e = nl and tonumber(string.sub(cur, 1, nl - 1))
if nl and e and e <= tonumber(ARGV[1]) then return 0 end
return 1`);

/**
 * The {@link StateStore} {@link redisState} returns: also exposes its connection for drivers that
 * share it ({@link redisCatalog}, {@link redisChangeFeed}).
 *
 * @example
 * ```ts
 * const state: RedisStateStore = redisState({ url });
 * const catalog = redisCatalog({ client: state.client });
 * ```
 */
export interface RedisStateStore extends StateStore {
  /** The `ioredis` client in use. */
  readonly client: Connection["client"];
}

/**
 * A {@link StateStore} on Redis, shared by every replica: single-use tickets and download nonces
 * hold across all of them. `setIfAbsent` and `delete` are Lua scripts, so "absent or expired, then
 * write" is one atomic step on the server (no read-then-write race between replicas). Keys expire
 * in Redis too. A Redis failure is a `STORAGE_ERROR` naming what failed; the client reconnects on
 * its own, so calls succeed again once Redis is back.
 *
 * @example
 * ```ts
 * import { redisState } from "mcp-file-bridge/redis";
 *
 * const state = redisState({ url: process.env.REDIS_URL });
 * if (!(await state.setIfAbsent(`nonce:${jti}`, true, { ttl: "5m" }))) throw new Error("already used");
 * ```
 */
export function redisState(options: RedisStateOptions): RedisStateStore {
  if (options?.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  const connection = connect(options, "redisState");
  const { client, prefix } = connection;
  const now = options.now ?? Date.now;
  const keyOf = (key: string) => `${prefix}state:${key}`;

  function encode(value: unknown, setOptions: StateSetOptions | undefined): { raw: string; px: string } {
    const json = serializeStateValue(value);
    const ttl = setOptions?.ttl;
    if (ttl === undefined) return { raw: `\n${json}`, px: "" };
    const ms = Math.ceil(durationToMs(ttl, "ttl"));
    return { raw: `${now() + ms}\n${json}`, px: String(Math.max(ms, 1)) };
  }

  return {
    driver: "redis",
    client,

    async get<T = unknown>(key: string): Promise<T | null> {
      assertStateKey(key);
      let raw: string | null;
      try {
        raw = await client.get(keyOf(key));
      } catch (error) {
        throw redisError("read state", error);
      }
      if (raw === null) return null;
      const newline = raw.indexOf("\n");
      const expiresAt = newline > 0 ? Number(raw.slice(0, newline)) : undefined;
      if (newline < 0 || (expiresAt !== undefined && expiresAt <= now())) return null;
      return JSON.parse(raw.slice(newline + 1)) as T;
    },

    async set(key: string, value: unknown, setOptions?: StateSetOptions): Promise<void> {
      assertStateKey(key);
      const { raw, px } = encode(value, setOptions);
      try {
        if (px) await client.set(keyOf(key), raw, "PX", Number(px));
        else await client.set(keyOf(key), raw);
      } catch (error) {
        throw redisError("write state", error);
      }
    },

    async setIfAbsent(key: string, value: unknown, setOptions?: StateSetOptions): Promise<boolean> {
      assertStateKey(key);
      const { raw, px } = encode(value, setOptions);
      try {
        return (await SET_IF_ABSENT(client, [keyOf(key)], [raw, String(now()), px])) === 1;
      } catch (error) {
        throw redisError("claim a state key", error);
      }
    },

    async delete(key: string): Promise<boolean> {
      assertStateKey(key);
      try {
        return (await DELETE_LIVE(client, [keyOf(key)], [String(now())])) === 1;
      } catch (error) {
        throw redisError("delete state", error);
      }
    },

    async close(): Promise<void> {
      await disconnect(connection);
    },
  };
}
