/**
 * `memoryStore`: the FileStore driver in memory. This file checks the options and each call's
 * arguments; what the store's async methods run (collecting, committing, reading and listing its
 * files) is in `memory-store-work.ts`, loaded at the store's first put (issue 39), so making a store
 * at start compiles none of it.
 */

import type { Readable } from "node:stream";
import { type Duration, durationToMs } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import { DEFAULT_MEMORY_SCOPE_SHARE } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { decodeCursor, listKind, listLimit, unrefInterval } from "./kit/list-page.js";
import { planPut } from "./kit/put-plan.js";
import { checkScopeQuota } from "./kit/quota.js";
import type { MemoryStoreWork } from "./memory-store-work.js";
import type {
  ByteRange,
  FileStore,
  ListOptions,
  ListPage,
  PutOptions,
  PutSource,
  ScopeQuota,
  ScopeUsage,
  StagedFile,
  StoredFile,
} from "./types.js";

/** `memory-store-work.ts`, loaded at the first put of any store; concurrent callers share one load. */
const loadMemoryStoreWork = firstUse(() => import("./memory-store-work.js"));

const check = optionCheck("memoryStore");

/**
 * Options of {@link memoryStore}.
 *
 * @example
 * ```ts
 * const store = memoryStore({ maxTotalBytes: 64 * 1024 * 1024, sweepInterval: "30s" });
 * ```
 */
export interface MemoryStoreOptions {
  /**
   * Cap on the bytes held by the whole store (committed and staged files, and puts in flight). A put
   * that would go over fails with `FILE_TOO_LARGE` (`data.limit` is this cap) and stores nothing.
   * @default no cap
   */
  maxTotalBytes?: number;
  /**
   * The fraction of `maxTotalBytes` one scope may hold (its committed and staged files and its puts
   * in flight), so one scope cannot fill the store and starve the others. A put that would take its
   * scope over fails with `QUOTA_EXCEEDED` while streaming. A number above 0, at most 1 (`1`: no
   * share, the old behaviour, fine for a single-scope stdio server). Ignored without `maxTotalBytes`.
   * @default 0.25
   */
  maxScopeShare?: number;
  /**
   * Per-scope limits on the live files, checked when a file is committed (`put()` or `commit()`):
   * over them the commit fails with `QUOTA_EXCEEDED` and stores nothing. See {@link ScopeQuota}.
   * @default no limits
   */
  quota?: ScopeQuota;
  /**
   * How often expired files are removed in the background (an `unref`'d timer, so it never keeps
   * the process alive). `0` turns it off; expired files are invisible to readers either way.
   * @default "1m"
   */
  sweepInterval?: Duration;
  /**
   * Clock, in milliseconds since the epoch. Inject one to test expiry without sleeping.
   * @default Date.now
   */
  now?: () => number;
}

/**
 * A {@link FileStore} that keeps files in memory, in chunks (never concatenated). For tests, demos
 * and single-process servers with small files; contents are lost when the process exits.
 *
 * @example
 * ```ts
 * import { memoryStore } from "mcp-file-bridge";
 *
 * const store = memoryStore({ maxTotalBytes: 256 * 1024 * 1024 });
 * const file = await store.put(new TextEncoder().encode("hello"), {
 *   scope: "session-1",
 *   name: "hello.txt",
 *   ttl: "1h",
 * });
 * const stream = await store.read("session-1", file.id); // Readable | null
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): FileStore {
  if (typeof options !== "object" || options === null) {
    throw check.error("options", "must be an object");
  }
  const { maxTotalBytes } = options;
  if (
    maxTotalBytes !== undefined &&
    (typeof maxTotalBytes !== "number" || !Number.isSafeInteger(maxTotalBytes) || maxTotalBytes < 0)
  ) {
    throw check.error("maxTotalBytes", "must be a non-negative integer");
  }
  const share = options.maxScopeShare ?? DEFAULT_MEMORY_SCOPE_SHARE;
  if (typeof share !== "number" || !(share > 0 && share <= 1)) {
    throw check.error("maxScopeShare", "must be a number above 0 and at most 1");
  }
  const quota = checkScopeQuota(options.quota, "memoryStore: quota");
  if (options.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  const now = options.now ?? Date.now;
  const sweepMs = durationToMs(options.sweepInterval ?? "1m", "sweepInterval");
  /** Most bytes one scope may hold (in flight, staged, stored): its share of the total. */
  const scopeCap = maxTotalBytes !== undefined && share < 1 ? Math.floor(maxTotalBytes * share) : undefined;
  // The store's files, made at its first put: until then it holds nothing, so its reads, lists,
  // deletes and sweeps answer without the load; once there, calls use it without a wait.
  let ready: MemoryStoreWork | undefined;
  const load = firstUse(async () => {
    const { MemoryStoreWork } = await loadMemoryStoreWork();
    ready ??= new MemoryStoreWork({ maxTotalBytes, scopeCap, quota, now });
    return ready;
  });
  const sweep = (): number => ready?.sweep() ?? 0;
  const timer = unrefInterval(sweepMs, sweep);

  // A put checks its plan before the load, as it did before its first await; so does a list its
  // limit, kind and cursor.
  return {
    driver: "memory",
    ...(quota ? { quota } : {}),

    async put(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
      const plan = planPut(putOptions, now());
      return (ready ?? (await load())).put(source, plan);
    },

    async stage(source: PutSource, putOptions: PutOptions): Promise<StagedFile> {
      const plan = planPut(putOptions, now());
      return (ready ?? (await load())).stage(source, plan);
    },

    async head(scope: string, id: string): Promise<StoredFile | null> {
      return ready ? ready.head(scope, id) : null;
    },

    async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
      return ready ? ready.read(scope, id, range) : null;
    },

    async list(scope: string, listOptions: ListOptions = {}): Promise<ListPage> {
      const limit = listLimit(listOptions.limit);
      const kind = listKind(listOptions.kind);
      const after = listOptions.cursor === undefined ? undefined : decodeCursor(listOptions.cursor);
      return ready ? ready.list(scope, limit, kind, after) : { files: [] };
    },

    async delete(scope: string, id: string): Promise<boolean> {
      return ready ? ready.delete(scope, id) : false;
    },

    async sweep(): Promise<number> {
      return sweep();
    },

    async usage(scope: string): Promise<ScopeUsage> {
      return ready ? ready.usage(scope) : { bytes: 0, files: 0 };
    },

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
    },
  };
}
