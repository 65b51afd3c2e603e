/**
 * `durableObjectState`: a `StateStore` whose keys live in {@link FileBridgeStateObject} Durable
 * Objects. A key always goes to the same object (by hash, over `shards` objects), and each object
 * runs one request at a time on SQLite, so every operation on a key is strongly consistent:
 * `setIfAbsent` (single-use tickets, nonces, handle claims) is atomic across all isolates.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { durationToMs } from "../internal/duration.js";
import { optionCheck } from "../internal/options.js";
import { assertStateKey, serializeStateValue } from "../storage/memory-state.js";
import type { StateSetOptions, StateStore } from "../storage/types.js";
import type { DurableObjectNamespaceBinding, DurableObjectStubLike, StubResponseLike } from "./bindings.js";
import type { StateRequest } from "./state-object.js";

const check = optionCheck("durableObjectState");

/**
 * Options of {@link durableObjectState}.
 *
 * @example
 * ```ts
 * const options: DurableObjectStateOptions = { namespace: env.STATE, shards: 4 };
 * ```
 */
export interface DurableObjectStateOptions {
  /** The namespace binding of the `FileBridgeStateObject` class (`env.STATE`). */
  namespace: DurableObjectNamespaceBinding;
  /** Name the objects are derived from (`<name>/<shard>`). @default "mcp-file-bridge" */
  name?: string;
  /**
   * How many objects the keys are spread over (by key hash): one object serves about a thousand
   * requests a second. Changing it moves keys to other objects (live tickets are lost), so pick it
   * once. From 1 to 256.
   * @default 1
   */
  shards?: number;
  /** Clock, in milliseconds since the epoch; expiry is judged by it. @default Date.now */
  now?: () => number;
}

/** FNV-1a of the key, for the shard. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * A `StateStore` on Durable Objects (see the module comment): strongly consistent, so upload
 * tickets, single-use download nonces and handle claims are claimed exactly once. Workers KV is
 * not: it is eventually consistent (a write may take 60 s to be seen elsewhere) and has no
 * compare-and-set, so two isolates could both claim one ticket.
 *
 * @example
 * ```ts
 * import { durableObjectState, FileBridgeStateObject } from "mcp-file-bridge/cloudflare";
 * export { FileBridgeStateObject };
 *
 * export default {
 *   async fetch(request: Request, env: Env) {
 *     const state = durableObjectState({ namespace: env.STATE });
 *     const first = await state.setIfAbsent("jti:abc", 1, { ttl: "5m" }); // true once, then false
 *     return Response.json({ first });
 *   },
 * };
 * ```
 */
export function durableObjectState(options: DurableObjectStateOptions): StateStore {
  check.object(options);
  const namespace = check.implementing<DurableObjectNamespaceBinding>(
    options.namespace,
    "namespace",
    ["idFromName", "get"],
    "a Durable Object namespace binding",
  );
  const name = options.name ?? "mcp-file-bridge";
  check.require(
    typeof name === "string" && name.length > 0 && name.length <= 200,
    "name",
    "must be a non-empty string",
  );
  const shards = check.integer(options.shards, "shards", 1, { min: 1, max: 256 });
  const now = check.optionalFunction(options.now, "now") ?? Date.now;

  /**
   * A fresh stub per call: workerd binds a stub to the request that made it, and this store may
   * live longer than one request (created at module scope or cached by the caller).
   */
  function stubOf(key: string): DurableObjectStubLike {
    const shard = shards === 1 ? 0 : hashOf(key) % shards;
    return namespace.get(namespace.idFromName(`${name}/${shard}`) as never);
  }

  async function send<T>(request: StateRequest): Promise<T> {
    let response: StubResponseLike;
    try {
      response = await stubOf(request.key).fetch("https://mcp-file-bridge.state/", {
        method: "POST",
        body: JSON.stringify(request),
        headers: { "content-type": "application/json" },
      });
    } catch (cause) {
      throw new FileBridgeError("STORAGE_ERROR", "durableObjectState: the Durable Object did not answer", {
        cause,
      });
    }
    if (!response.ok) {
      throw new FileBridgeError(
        "STORAGE_ERROR",
        `durableObjectState: the Durable Object answered ${response.status}`,
      );
    }
    return (await response.json()) as T;
  }

  function expiryOf(setOptions: StateSetOptions | undefined, at: number): number | undefined {
    const ttl = setOptions?.ttl;
    return ttl === undefined ? undefined : at + durationToMs(ttl, "ttl");
  }

  return {
    driver: "durable-object",

    async get<T = unknown>(key: string): Promise<T | null> {
      assertStateKey(key);
      const { value } = await send<{ value: string | null }>({ op: "get", key, now: now() });
      return value === null ? null : (JSON.parse(value) as T);
    },

    async set(key: string, value: unknown, setOptions?: StateSetOptions): Promise<void> {
      assertStateKey(key);
      const json = serializeStateValue(value);
      const at = now();
      const expiresAt = expiryOf(setOptions, at);
      await send({ op: "set", key, value: json, now: at, ...(expiresAt === undefined ? {} : { expiresAt }) });
    },

    async setIfAbsent(key: string, value: unknown, setOptions?: StateSetOptions): Promise<boolean> {
      assertStateKey(key);
      const json = serializeStateValue(value);
      const at = now();
      const expiresAt = expiryOf(setOptions, at);
      const { set } = await send<{ set: boolean }>({
        op: "setIfAbsent",
        key,
        value: json,
        now: at,
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      return set;
    },

    async delete(key: string): Promise<boolean> {
      assertStateKey(key);
      const { deleted } = await send<{ deleted: boolean }>({ op: "delete", key, now: now() });
      return deleted;
    },
  };
}
