/**
 * `fsStore`'s options and the store type it returns, and the check that turns the options into the
 * settings the store runs on (at factory time, so a bad option fails before any disk access).
 */

import { resolve } from "node:path";
import { type Duration, durationToMs } from "../internal/duration.js";
import { optionCheck } from "../internal/options.js";
import { checkScopeQuota } from "./kit/quota.js";
import type { AdoptSource, FileStore, PutOptions, ScopeQuota, ScopeUsage, StagedFile } from "./types.js";

/**
 * Puts that end within this many bytes are read whole, measured in memory and written in one
 * write instead of a stream pipeline (at most this much memory per put; see `fs-small-writes.ts`).
 * An adopted file this small is put instead (`fsStore`'s `adopt()` answers `null` before loading
 * anything).
 */
export const SMALL_PUT_BYTES = 64 * 1024;

/**
 * Options of {@link fsStore}.
 *
 * @example
 * ```ts
 * const store = fsStore("./data/files", { staleAfter: "2h", sweepInterval: "15m" });
 * ```
 */
export interface FsStoreOptions {
  /**
   * Age after which `sweep()` removes leftovers of interrupted puts: temp files, staged files never
   * committed, and data files whose metadata is missing (a crash between the two renames).
   * @default "1h"
   */
  staleAfter?: Duration;
  /**
   * How often `sweep()` runs in the background (an `unref`'d timer, so it never keeps the process
   * alive). `0` turns it off; expired files are invisible to readers either way.
   * @default "10m"
   */
  sweepInterval?: Duration;
  /**
   * Per-scope limits on the live files, checked when a file is committed (`put()` or `commit()`)
   * under a per-scope lock shared by every `fsStore` of this process: over them the commit fails
   * with `QUOTA_EXCEEDED` and nothing is left on disk. A put that alone would go over is cut off
   * while streaming. See {@link ScopeQuota}.
   * @default no limits
   */
  quota?: ScopeQuota;
  /**
   * Where metadata records and files up to 64 KiB are written. `"writer-thread"`: by one thread the
   * process's stores share, with synchronous calls, handed over through shared memory (one write
   * costs less CPU than the three thread-pool round trips of `fs.writeFile`, and the event loop never
   * waits for the disk). `"thread-pool"`: with `fs.writeFile` on libuv's thread pool, as most Node
   * code writes files (for an environment that should not start a thread).
   * @default "writer-thread"
   */
  smallWrites?: "writer-thread" | "thread-pool";
  /**
   * Clock, in milliseconds since the epoch. Inject one to test expiry without sleeping.
   * @default Date.now
   */
  now?: () => number;
}

/**
 * The {@link FileStore} {@link fsStore} returns: always has `localPath()`, and names its folder.
 *
 * @example
 * ```ts
 * const store: FsFileStore = fsStore("./data/files");
 * const path = await store.localPath(scope, id); // "/abs/data/files/<scope hash>/<id>" or null
 * ```
 */
export interface FsFileStore extends FileStore {
  /** Absolute path of the store's folder. */
  readonly dir: string;
  /** The absolute path of the file's bytes, or `null` if missing, expired or in another scope. */
  localPath(scope: string, id: string): Promise<string | null>;
  /** What a scope's live files hold now (read from the folder, so other instances count too). */
  usage(scope: string): Promise<ScopeUsage>;
  /** Hard-links a measured file on the same filesystem into place; see {@link FileStore.adopt}. */
  adopt(source: AdoptSource, options: PutOptions): Promise<StagedFile | null>;
}

/** The settings an `fsStore` runs on, from its checked options. */
export interface FsSettings {
  /** Absolute path of the store's folder. */
  readonly root: string;
  readonly now: () => number;
  readonly staleMs: number;
  readonly sweepMs: number;
  readonly quota: Readonly<ScopeQuota> | undefined;
  /** Where records and small files are written. */
  readonly smallWrites: "writer-thread" | "thread-pool";
}

const check = optionCheck("fsStore");

/**
 * Checks `fsStore(dir, options)` and fills in the defaults; a bad option fails with
 * `INVALID_OPTION` naming it.
 *
 * @example
 * ```ts
 * const { root, staleMs } = fsSettings("./data/files", { staleAfter: "2h" });
 * ```
 */
export function fsSettings(dir: string, options: FsStoreOptions): FsSettings {
  if (typeof dir !== "string" || dir.length === 0 || dir.includes("\0")) {
    throw check.error("dir", "must be a non-empty path");
  }
  if (typeof options !== "object" || options === null) {
    throw check.error("options", "must be an object");
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  if (
    options.smallWrites !== undefined &&
    options.smallWrites !== "writer-thread" &&
    options.smallWrites !== "thread-pool"
  ) {
    throw check.error("smallWrites", 'must be "writer-thread" or "thread-pool"');
  }
  const quota = checkScopeQuota(options.quota, "fsStore: quota");
  return {
    root: resolve(dir),
    now: options.now ?? Date.now,
    staleMs: durationToMs(options.staleAfter ?? "1h", "staleAfter"),
    sweepMs: durationToMs(options.sweepInterval ?? "10m", "sweepInterval"),
    quota,
    smallWrites: options.smallWrites ?? "writer-thread",
  };
}
