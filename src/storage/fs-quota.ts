/**
 * `fsStore`'s scope usage and quota: what a scope's live files hold (read from the folder, with the
 * metadata already read remembered), the early refusals and streaming cut-off of a put, and the
 * commit under a per-scope lock that makes the quota hold across concurrent puts.
 */

import { readdir } from "node:fs/promises";
import { errorCode, type FsLayout, metaIdOf, storageError, unlinkQuiet } from "./fs-layout.js";
import { isExpired } from "./kit/list-page.js";
import type { PutPlan } from "./kit/put-plan.js";
import { KeyedLock, quotaExceeded, quotaViolation, type StreamLimits } from "./kit/quota.js";
import type { ScopeQuota, ScopeUsage, StoredFile } from "./types.js";

/**
 * One commit lock per scope folder for every `fsStore` of this process: two instances over one
 * folder check a scope's quota one commit at a time.
 */
const COMMIT_LOCKS = new KeyedLock();
/** Scope folders whose file sizes one store keeps in memory for quota checks (least recent go). */
const USAGE_CACHE_SCOPES = 256;
/** Metadata files read at once while counting a scope's usage. */
const USAGE_READ_BATCH = 32;

/** What quota checks need of one committed file; metadata never changes once written. */
interface KnownFile {
  readonly size: number;
  readonly expiresAt: number | undefined;
}

/** One store's scope usage, and its quota when it has one. */
export class FsQuota {
  /** Sizes and expiry of the committed files of recently used scope folders. */
  readonly #known = new Map<string, Map<string, KnownFile>>();

  constructor(
    readonly layout: FsLayout,
    readonly quota: Readonly<ScopeQuota> | undefined,
  ) {}

  /**
   * What a scope's live files hold. The folder listing is the truth (other instances and processes
   * may add or delete files); metadata already read is remembered, so a check costs one `readdir`
   * plus the metadata of files new since the last one.
   */
  async usage(scope: string): Promise<ScopeUsage> {
    const folder = this.layout.scopeDir(scope);
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return { bytes: 0, files: 0 };
      throw storageError("count the files of a scope", error);
    }
    const cache = this.#cacheOf(folder);
    const ids = new Set<string>();
    for (const name of names) {
      const id = metaIdOf(name);
      if (id !== undefined) ids.add(id);
    }
    for (const id of cache.keys()) if (!ids.has(id)) cache.delete(id);
    const unread = [...ids].filter((id) => !cache.has(id));
    for (let i = 0; i < unread.length; i += USAGE_READ_BATCH) {
      const batch = unread.slice(i, i + USAGE_READ_BATCH);
      const metas = await Promise.all(batch.map((id) => this.layout.readMeta(scope, id)));
      for (const file of metas) if (file) cache.set(file.id, { size: file.size, expiresAt: file.expiresAt });
    }
    const at = this.layout.now();
    let bytes = 0;
    let files = 0;
    for (const id of ids) {
      const file = cache.get(id);
      if (!file || isExpired(file, at)) continue;
      bytes += file.size;
      files++;
    }
    return { bytes, files };
  }

  /**
   * Early quota refusals before a byte is written, and the streaming cut-off: a put that cannot be
   * committed as the scope stands now reads nothing, or stops as soon as it alone is too large.
   */
  async limits(plan: PutPlan): Promise<StreamLimits | undefined> {
    const quota = this.quota;
    if (!quota) return undefined;
    const usage = await this.usage(plan.scope);
    const { maxBytesPerScope, maxFilesPerScope } = quota;
    if (maxFilesPerScope !== undefined && usage.files >= maxFilesPerScope) {
      throw quotaExceeded("files", maxFilesPerScope);
    }
    if (maxBytesPerScope === undefined) return undefined;
    const bytesLeft = Math.max(0, maxBytesPerScope - usage.bytes);
    if (plan.expectedSize !== undefined && plan.expectedSize > bytesLeft) {
      throw quotaExceeded("bytes", maxBytesPerScope);
    }
    return { scopeQuota: { bytesLeft, limit: maxBytesPerScope } };
  }

  /**
   * Runs `publish` (which makes `file` visible). With a quota, under the scope's commit lock: the
   * usage is read, checked and the file published as one step, so concurrent commits cannot both
   * fit. A refused commit removes the bytes at `data`.
   */
  async commit(file: StoredFile, data: string, publish: () => Promise<void>): Promise<void> {
    const quota = this.quota;
    if (!quota) return publish();
    const folder = this.layout.scopeDir(file.scope);
    await COMMIT_LOCKS.run(folder, async () => {
      try {
        const violation = quotaViolation(quota, await this.usage(file.scope), file.size);
        if (violation) throw violation;
      } catch (error) {
        await unlinkQuiet(data).catch(() => {});
        throw error;
      }
      await publish();
      this.#known.get(folder)?.set(file.id, { size: file.size, expiresAt: file.expiresAt });
    });
  }

  /** The remembered files of a scope folder, made the most recently used (the least recent go). */
  #cacheOf(folder: string): Map<string, KnownFile> {
    const cache = this.#known.get(folder) ?? new Map<string, KnownFile>();
    this.#known.delete(folder); // re-inserted below: most recently used last
    this.#known.set(folder, cache);
    if (this.#known.size > USAGE_CACHE_SCOPES) this.#known.delete(this.#known.keys().next().value as string);
    return cache;
  }
}
