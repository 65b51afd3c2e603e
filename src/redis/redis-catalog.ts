import { createHash } from "node:crypto";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { CatalogPageOptions, FileCatalog, FileKind, StoredFile } from "../storage/types.js";
import { connect, disconnect, luaScript, type RedisConnectionOptions, redisError } from "./connection.js";

/**
 * Options of {@link redisCatalog}.
 *
 * @example
 * ```ts
 * const catalog = redisCatalog({ url: "redis://127.0.0.1:6379", keyPrefix: "files:" });
 * ```
 */
export interface RedisCatalogOptions extends RedisConnectionOptions {}

/** Extra time an entry outlives its `expiresAt` in Redis, so the store's sweep still sees it. */
const EXPIRY_GRACE_MS = 24 * 3_600_000;

/**
 * Adds an entry: the metadata string, the id in the scope's sorted set and its kind's, and the
 * expiry queue. KEYS: meta, ids, ids-of-kind, expiry queue. ARGV: json, id, px ('' = none),
 * expiresAt ('' = none), queue member.
 */
const ADD = luaScript(`
if ARGV[3] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) else redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('ZADD', KEYS[2], 0, ARGV[2])
redis.call('ZADD', KEYS[3], 0, ARGV[2])
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[4], ARGV[4], ARGV[5]) end
return 1`);

/**
 * Removes an entry and returns its metadata, or false when it was not there: the `DEL` decides, so
 * of concurrent removers exactly one gets the entry. KEYS: meta, ids, expiry queue; ARGV: id,
 * queue member, the kind sets' common prefix.
 */
const REMOVE = luaScript(`
local json = redis.call('GET', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
for _, kind in ipairs({'upload', 'artifact', 'file'}) do redis.call('ZREM', ARGV[3] .. kind, ARGV[1]) end
if not json then return false end
redis.call('DEL', KEYS[1])
return json`);

/**
 * One page in one round trip: ids after ARGV[1] from the sorted set KEYS[1], and their metadata
 * (ARGV[3] .. id). Returns [id1, json1, id2, json2, …] with '' for an id whose metadata is gone.
 */
const PAGE = luaScript(`
local ids = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], '+', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
if #ids == 0 then return out end
local keys = {}
for i, id in ipairs(ids) do keys[i] = ARGV[3] .. id end
local values = redis.call('MGET', unpack(keys))
for i, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = values[i] or ''
end
return out`);

function parseEntry(json: string, scope: string, id: string): StoredFile | null {
  let raw: StoredFile;
  try {
    raw = JSON.parse(json) as StoredFile;
  } catch {
    return null;
  }
  if (typeof raw !== "object" || raw === null || raw.id !== id || raw.scope !== scope) return null;
  if (raw.metadata) Object.freeze(raw.metadata);
  return Object.freeze(raw);
}

/**
 * A {@link FileCatalog} on Redis: each scope's files in a sorted set (ordered by id, so a page is one
 * `ZRANGEBYLEX` plus one `MGET`, run as one Lua script — fast at any scope size) and each file's
 * metadata in its own key. All keys of one scope share a hash tag (the scope's hash, never the scope
 * itself), so they live in one slot. Give it to `s3Store({ catalog })` so every replica lists and
 * heads files from the same index without listing the bucket.
 *
 * @example
 * ```ts
 * import { redisCatalog } from "mcp-file-bridge/redis";
 * import { s3Store } from "mcp-file-bridge/s3";
 *
 * const store = s3Store({ bucket: "files", catalog: redisCatalog({ url: process.env.REDIS_URL }) });
 * ```
 */
export function redisCatalog(options: RedisCatalogOptions): FileCatalog {
  const connection = connect(options, "redisCatalog");
  const { client, prefix } = connection;
  const queueKey = `${prefix}catalog:expiry`;
  const scopeTag = (scope: string) =>
    `${prefix}catalog:{${createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32)}}`;
  const metaKey = (scope: string, id: string) => `${scopeTag(scope)}:f:${id}`;
  const idsKey = (scope: string, kind?: FileKind) => `${scopeTag(scope)}:ids${kind ? `:${kind}` : ""}`;
  const member = (scope: string, id: string) => JSON.stringify([scope, id]);

  return {
    driver: "redis",

    async add(file: StoredFile): Promise<void> {
      const px =
        file.expiresAt === undefined
          ? ""
          : String(Math.max(1, file.expiresAt - Date.now() + EXPIRY_GRACE_MS));
      try {
        await ADD(
          client,
          [metaKey(file.scope, file.id), idsKey(file.scope), idsKey(file.scope, file.kind), queueKey],
          [
            JSON.stringify(file),
            file.id,
            px,
            file.expiresAt === undefined ? "" : String(file.expiresAt),
            member(file.scope, file.id),
          ],
        );
      } catch (error) {
        throw redisError("add a file to the catalog", error);
      }
    },

    async get(scope: string, id: string): Promise<StoredFile | null> {
      let json: string | null;
      try {
        json = await client.get(metaKey(scope, id));
      } catch (error) {
        throw redisError("read the catalog", error);
      }
      return json === null ? null : parseEntry(json, scope, id);
    },

    async remove(scope: string, id: string): Promise<StoredFile | null> {
      let json: unknown;
      try {
        json = await REMOVE(
          client,
          [metaKey(scope, id), idsKey(scope), queueKey],
          [id, member(scope, id), `${idsKey(scope)}:`],
        );
      } catch (error) {
        throw redisError("remove a file from the catalog", error);
      }
      return typeof json === "string" ? parseEntry(json, scope, id) : null;
    },

    async page(
      scope: string,
      pageOptions: CatalogPageOptions,
    ): Promise<{ files: StoredFile[]; more: boolean }> {
      const { after, limit, kind } = pageOptions;
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new FileBridgeError("INVALID_INPUT", "limit must be a positive integer");
      }
      let reply: string[];
      try {
        reply = (await PAGE(
          client,
          [idsKey(scope, kind)],
          [after === undefined ? "-" : `(${after}`, limit + 1, `${scopeTag(scope)}:f:`],
        )) as string[];
      } catch (error) {
        throw redisError("list the catalog", error);
      }
      const files: StoredFile[] = [];
      const count = reply.length / 2;
      for (let i = 0; i < Math.min(count, limit); i++) {
        const id = reply[2 * i] as string;
        const json = reply[2 * i + 1] as string;
        const file = json ? parseEntry(json, scope, id) : null;
        if (file) files.push(file);
      }
      return { files, more: count > limit };
    },

    async expired(at: number, limit: number): Promise<Array<{ scope: string; id: string }>> {
      let members: string[];
      try {
        members = await client.zrangebyscore(queueKey, "-inf", at, "LIMIT", 0, limit);
      } catch (error) {
        throw redisError("read the catalog's expiry queue", error);
      }
      const out: Array<{ scope: string; id: string }> = [];
      for (const entry of members) {
        try {
          const [scope, id] = JSON.parse(entry) as [string, string];
          if (typeof scope === "string" && typeof id === "string") out.push({ scope, id });
        } catch {
          // not ours
        }
      }
      return out;
    },

    async close(): Promise<void> {
      await disconnect(connection);
    },
  };
}
