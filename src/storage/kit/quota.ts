import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { ScopeQuota, ScopeUsage } from "../types.js";

/**
 * Limits of one put that only the driver knows, enforced while streaming like `maxBytes`.
 *
 * @example
 * ```ts
 * const usage = await usageOf(plan.scope);
 * const limits: StreamLimits = { scopeQuota: { bytesLeft: quota - usage.bytes, limit: quota } };
 * await streamPut(source, plan, sink, limits); // QUOTA_EXCEEDED once the put passes bytesLeft
 * ```
 */
export interface StreamLimits {
  /**
   * What is left of the scope's byte quota when the put starts: a put that alone grows past
   * `bytesLeft` can never be committed, so it is cut off with `QUOTA_EXCEEDED` (`data.limit` is
   * `limit`). The driver still checks the quota at commit.
   */
  readonly scopeQuota?: { readonly bytesLeft: number; readonly limit: number };
}

/**
 * Validates a driver's `quota` option: an object whose `maxBytesPerScope` / `maxFilesPerScope` are
 * non-negative integers when set. Returns a frozen copy, or `undefined` when no limit is set.
 * Anything else fails with `INVALID_OPTION` naming the bad field.
 *
 * @example
 * ```ts
 * const quota = checkScopeQuota(options.quota, "myStore: quota"); // at factory time
 * ```
 */
export function checkScopeQuota(input: unknown, option = "quota"): Readonly<ScopeQuota> | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new FileBridgeError("INVALID_OPTION", `${option} must be an object`, { data: { option } });
  }
  const quota: ScopeQuota = {};
  for (const key of ["maxBytesPerScope", "maxFilesPerScope"] as const) {
    const value = (input as ScopeQuota)[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new FileBridgeError("INVALID_OPTION", `${option}.${key} must be a non-negative integer`, {
        data: { option: `${option}.${key}` },
      });
    }
    quota[key] = value;
  }
  return quota.maxBytesPerScope === undefined && quota.maxFilesPerScope === undefined
    ? undefined
    : Object.freeze(quota);
}

/**
 * The `QUOTA_EXCEEDED` error: `data.quota` says which limit (`"bytes"` or `"files"`), `data.limit`
 * its value. The scope itself is never put in the error (it may be a session id).
 *
 * @example
 * ```ts
 * throw quotaExceeded("files", quota.maxFilesPerScope);
 * ```
 */
export function quotaExceeded(quota: "bytes" | "files", limit: number): FileBridgeError {
  const what = quota === "bytes" ? `${limit} bytes` : `${limit} files`;
  return new FileBridgeError("QUOTA_EXCEEDED", `this scope may hold at most ${what}`, {
    data: { quota, limit },
  });
}

/**
 * The error a commit of `size` more bytes (one more file) would meet in a scope that holds `usage`,
 * or `null` when it fits. Call it while holding the scope's lock, with the usage read under it.
 *
 * @example
 * ```ts
 * await locks.run(scope, async () => {
 *   const error = quotaViolation(quota, await usageOf(scope), file.size);
 *   if (error) throw error;
 *   await makeVisible(file);
 * });
 * ```
 */
export function quotaViolation(
  quota: Readonly<ScopeQuota> | undefined,
  usage: ScopeUsage,
  size: number,
): FileBridgeError | null {
  if (!quota) return null;
  const { maxBytesPerScope, maxFilesPerScope } = quota;
  if (maxFilesPerScope !== undefined && usage.files + 1 > maxFilesPerScope) {
    return quotaExceeded("files", maxFilesPerScope);
  }
  if (maxBytesPerScope !== undefined && usage.bytes + size > maxBytesPerScope) {
    return quotaExceeded("bytes", maxBytesPerScope);
  }
  return null;
}

/**
 * Runs async tasks one at a time per key (a FIFO mutex per key; keys with nothing queued hold no
 * memory). Drivers use it to make "read the scope's usage, check the quota, make the file visible"
 * one step with respect to other commits of the same scope in this process.
 *
 * @example
 * ```ts
 * const locks = new KeyedLock();
 * await locks.run(scope, async () => commitChecked(file));
 * ```
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` once every task queued before it for `key` has settled; returns its result. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous ? previous.then(() => done) : done;
    this.#tails.set(key, tail);
    try {
      if (previous) await previous;
      return await task();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** Keys with a task running or queued (for tests and diagnostics). */
  get size(): number {
    return this.#tails.size;
  }
}
