/**
 * `fsStore`: the FileStore driver on the local disk. One job (layout, put and commit with quotas,
 * reads, listing, sweep), so it stays one file a little past the usual ~600 lines.
 */

import { createHash, randomBytes } from "node:crypto";
import {
  close as closeFd,
  createReadStream,
  createWriteStream,
  open as openFd,
  rename as renameCb,
  writeFile as writeFileCb,
} from "node:fs";
import { mkdir, readdir, readFile, rmdir, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Readable, type Writable } from "node:stream";
import { promisify } from "node:util";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { isId } from "../internal/ids.js";
import { optionCheck } from "../internal/options.js";
import { resolveRange } from "./kit/byte-range.js";
import {
  decodeCursor,
  encodeCursor,
  isExpired,
  listKind,
  listLimit,
  unrefInterval,
  upperBound,
} from "./kit/list-page.js";
import { parseStoredRecord, type StoredRecord, serializeMetadataRecord } from "./kit/metadata-record.js";
import { measureBytes, readSmall, streamPut } from "./kit/put-pipeline.js";
import { type PutPlan, planPut, storedFileOf } from "./kit/put-plan.js";
import { checkScopeQuota, KeyedLock, quotaExceeded, quotaViolation, type StreamLimits } from "./kit/quota.js";
import { stagedFile } from "./kit/staged-file.js";
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

const check = optionCheck("fsStore");

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
}

const SCOPE_DIR = /^[0-9a-f]{32}$/;
const META_SUFFIX = ".json";
const PART_SUFFIX = ".part";
const TMP_SUFFIX = ".tmp";
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
/** Bytes queued for the disk while the next chunks are hashed: keeps hashing and writing overlapped. */
const WRITE_HIGH_WATER_MARK = 1024 * 1024;
/** Read chunk size: fewer, larger reads for downloads. */
const READ_HIGH_WATER_MARK = 256 * 1024;
const openFdAsync = promisify(openFd);
// The callback forms: one thread-pool trip per step, without FileHandle's extra promise machinery.
const writeFileAsync = promisify(writeFileCb);
const renameAsync = promisify(renameCb);
/**
 * Puts that end within this many bytes are read whole, measured in memory and written with one
 * `writeFile` instead of a stream pipeline (at most this much memory per put).
 */
const SMALL_PUT_BYTES = 64 * 1024;
/**
 * Puts up to this size keep their bytes inside the metadata record (one file on disk, written once
 * and renamed into place); `localPath()` writes the bytes out beside it on first use.
 */
const INLINE_BYTES = 8 * 1024;

/** A put's verified bytes: where they are (or will be) on disk, or the bytes for an inline record. */
interface Written {
  readonly file: StoredFile;
  readonly data: string;
  readonly inline?: Uint8Array;
}
/** Scope folders one store remembers having made (so a put makes none); past this it forgets all. */
const MADE_FOLDERS_LIMIT = 4096;
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

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as NodeJS.ErrnoException).code : undefined;
}

function storageError(action: string, error: unknown): FileBridgeError {
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", `the file store could not ${action}`, { cause: error });
}

async function unlinkQuiet(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return false;
    throw error;
  }
}

function randomSuffix(): string {
  return randomBytes(6).toString("hex");
}

/**
 * A {@link FileStore} on the local disk. Each scope gets a folder named by a hash of the scope; each
 * file is `<id>` (bytes) beside `<id>.json` (metadata), so neither scopes nor user file names ever
 * reach a path. A file exists for readers only once its metadata does: bytes are written under their
 * random id (exclusively), verified (size cap, sha256, declared size), and only then is the metadata
 * written (temp name + one rename), so a crash or abort never leaves a visible partial file, and the
 * bytes a reader finds are complete. Small puts (up to 64 KiB) are written in one `writeFile`; scope
 * folders are made once per store. A new instance over the same folder sees the same files.
 *
 * @example
 * ```ts
 * import { createReadStream } from "node:fs";
 * import { fsStore } from "mcp-file-bridge";
 *
 * const store = fsStore("/var/lib/my-server/files", { staleAfter: "1h" });
 * const file = await store.put(createReadStream("report.pdf"), {
 *   scope: "session-1",
 *   name: "report.pdf",
 *   maxBytes: 50 * 1024 * 1024,
 *   ttl: "1d",
 * });
 * const path = await store.localPath("session-1", file.id); // hand it to a tool
 * ```
 */
export function fsStore(dir: string, options: FsStoreOptions = {}): FsFileStore {
  if (typeof dir !== "string" || dir.length === 0 || dir.includes("\0")) {
    throw check.error("dir", "must be a non-empty path");
  }
  if (typeof options !== "object" || options === null) {
    throw check.error("options", "must be an object");
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  const quota = checkScopeQuota(options.quota, "fsStore: quota");
  const root = resolve(dir);
  const now = options.now ?? Date.now;
  const staleMs = durationToMs(options.staleAfter ?? "1h", "staleAfter");
  const sweepMs = durationToMs(options.sweepInterval ?? "10m", "sweepInterval");

  function scopeDir(scope: string): string {
    return join(root, createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32));
  }

  /** Scope folders this store has made or seen: a put into one of them makes no folder. */
  const made = new Set<string>();

  /**
   * Runs `create` (which creates one file in `folder`), making the folder first if this store has not
   * made it yet, and again if a sweep (of any instance) removed it meanwhile (`ENOENT`).
   */
  async function inFolder<T>(folder: string, create: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (!made.has(folder)) {
        await mkdir(folder, { recursive: true, mode: DIR_MODE });
        if (made.size >= MADE_FOLDERS_LIMIT) made.clear();
        made.add(folder);
      }
      try {
        return await create();
      } catch (error) {
        if (errorCode(error) !== "ENOENT" || attempt >= 3) throw error;
        made.delete(folder);
      }
    }
  }

  /** The record of a file in a scope (metadata, and inline bytes if any), expired or not; `null` when missing. */
  async function readRecord(scope: string, id: string): Promise<StoredRecord | null> {
    let text: string;
    try {
      text = await readFile(join(scopeDir(scope), id + META_SUFFIX), "utf8");
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      throw storageError("read metadata", error);
    }
    const record = parseStoredRecord(text, id);
    return record && record.file.scope === scope ? record : null;
  }

  /** Metadata of a file in a scope, expired or not; `null` when missing. */
  async function readMeta(scope: string, id: string): Promise<StoredFile | null> {
    return (await readRecord(scope, id))?.file ?? null;
  }

  /** The live record (not expired, right scope, well-formed id), or `null`. */
  async function liveRecord(scope: unknown, id: unknown): Promise<StoredRecord | null> {
    if (typeof scope !== "string" || scope.length === 0 || !isId(id)) return null;
    const record = await readRecord(scope, id);
    return record && !isExpired(record.file, now()) ? record : null;
  }

  /** Live metadata (not expired, right scope, well-formed id), or `null`. */
  async function liveMeta(scope: unknown, id: unknown): Promise<StoredFile | null> {
    return (await liveRecord(scope, id))?.file ?? null;
  }

  /** Writes the metadata (temp name, then the one rename that makes the file visible). */
  async function writeMeta(file: StoredFile, inline?: Uint8Array): Promise<void> {
    const path = join(scopeDir(file.scope), file.id + META_SUFFIX);
    const temp = `${path}.${randomSuffix()}${TMP_SUFFIX}`;
    const text = serializeMetadataRecord(file, inline);
    try {
      if (inline === undefined) await writeFileAsync(temp, text, { mode: FILE_MODE, flag: "wx" });
      // The first file of a put that inlines its bytes: make the folder if needed.
      else
        await inFolder(scopeDir(file.scope), () =>
          writeFileAsync(temp, text, { mode: FILE_MODE, flag: "wx" }),
        );
      await renameAsync(temp, path);
    } catch (error) {
      await unlinkQuiet(temp).catch(() => {});
      throw error;
    }
  }

  /** Sizes and expiry of the committed files of recently used scope folders. */
  const known = new Map<string, Map<string, KnownFile>>();

  /**
   * What a scope's live files hold. The folder listing is the truth (other instances and processes
   * may add or delete files); metadata already read is remembered, so a check costs one `readdir`
   * plus the metadata of files new since the last one.
   */
  async function scopeUsage(scope: string): Promise<ScopeUsage> {
    const folder = scopeDir(scope);
    let names: string[];
    try {
      names = await readdir(folder);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return { bytes: 0, files: 0 };
      throw storageError("count the files of a scope", error);
    }
    let cache = known.get(folder);
    if (cache)
      known.delete(folder); // re-inserted below: most recently used last
    else cache = new Map();
    known.set(folder, cache);
    if (known.size > USAGE_CACHE_SCOPES) known.delete(known.keys().next().value as string);
    const ids = new Set<string>();
    for (const name of names) {
      const id = name.endsWith(META_SUFFIX) ? name.slice(0, -META_SUFFIX.length) : "";
      if (isId(id)) ids.add(id);
    }
    for (const id of cache.keys()) if (!ids.has(id)) cache.delete(id);
    const unread = [...ids].filter((id) => !cache.has(id));
    for (let i = 0; i < unread.length; i += USAGE_READ_BATCH) {
      const metas = await Promise.all(unread.slice(i, i + USAGE_READ_BATCH).map((id) => readMeta(scope, id)));
      for (const file of metas) if (file) cache.set(file.id, { size: file.size, expiresAt: file.expiresAt });
    }
    const at = now();
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
  async function quotaLimits(plan: PutPlan): Promise<StreamLimits | undefined> {
    if (!quota) return undefined;
    const usage = await scopeUsage(plan.scope);
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
   * Writes a put's verified bytes under its final name `<id>` (created exclusively; invisible until
   * its metadata exists) and returns the metadata and that path. A source that ends within
   * {@link SMALL_PUT_BYTES} is measured in memory and written in one `writeFile`; a larger one streams
   * through the meter. On any failure the bytes written so far are removed.
   */
  async function writeData(source: PutSource, putOptions: PutOptions): Promise<Written> {
    const plan = planPut(putOptions, now());
    const limits = await quotaLimits(plan);
    const folder = scopeDir(plan.scope);
    const data = join(folder, plan.id);
    const read = await readSmall(source, SMALL_PUT_BYTES, plan.signal);
    if ("bytes" in read) {
      const file = storedFileOf(plan, measureBytes(read.bytes, plan, limits));
      if (read.bytes.byteLength <= INLINE_BYTES) return { file, data, inline: read.bytes };
      try {
        await inFolder(folder, () => writeFileAsync(data, read.bytes, { mode: FILE_MODE, flag: "wx" }));
      } catch (error) {
        await unlinkQuiet(data).catch(() => {});
        throw storageError("write the file", error);
      }
      return { file, data };
    }
    let fd: number;
    try {
      fd = await inFolder(folder, () => openFdAsync(data, "wx", FILE_MODE));
    } catch (error) {
      read.stream.destroy();
      throw storageError("create a file", error);
    }
    let sink: Writable;
    try {
      sink = createWriteStream(data, { fd, highWaterMark: WRITE_HIGH_WATER_MARK });
    } catch (error) {
      closeFd(fd, () => {});
      read.stream.destroy();
      await unlinkQuiet(data).catch(() => {});
      throw storageError("create a file", error);
    }
    try {
      const measure = await streamPut(read.stream, plan, sink, limits);
      return { file: storedFileOf(plan, measure), data };
    } catch (error) {
      sink.destroy();
      await unlinkQuiet(data).catch(() => {});
      throw error;
    }
  }

  /**
   * Makes verified bytes visible. With a quota, under the scope's commit lock: the usage is read,
   * checked and the metadata written as one step, so concurrent commits cannot both fit. A refused
   * commit removes the bytes.
   */
  async function commitData({ file, data, inline }: Written): Promise<void> {
    if (!quota) return publish(file, data, inline);
    const folder = scopeDir(file.scope);
    await COMMIT_LOCKS.run(folder, async () => {
      try {
        const violation = quotaViolation(quota, await scopeUsage(file.scope), file.size);
        if (violation) throw violation;
      } catch (error) {
        await unlinkQuiet(data).catch(() => {});
        throw error;
      }
      await publish(file, data, inline);
      known.get(folder)?.set(file.id, { size: file.size, expiresAt: file.expiresAt });
    });
  }

  /** Writes the metadata that makes verified bytes visible; removes the bytes if that fails. */
  async function publish(file: StoredFile, data: string, inline?: Uint8Array): Promise<void> {
    try {
      await writeMeta(file, inline);
    } catch (error) {
      await unlinkQuiet(data).catch(() => {});
      throw storageError("write metadata", error);
    }
  }

  /**
   * Writes an inline file's bytes out to `<id>` (temp name + rename, so a reader never sees part of
   * it) unless they are there already; returns the path.
   */
  async function writeOut(path: string, inline: string): Promise<string> {
    try {
      await stat(path);
      return path;
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw storageError("find the file", error);
    }
    const temp = `${path}.${randomSuffix()}${TMP_SUFFIX}`;
    try {
      await writeFileAsync(temp, Buffer.from(inline, "base64"), { mode: FILE_MODE, flag: "wx" });
      await renameAsync(temp, path);
    } catch (error) {
      await unlinkQuiet(temp).catch(() => {});
      throw storageError("write the file out", error);
    }
    return path;
  }

  async function removeFile(folder: string, id: string): Promise<boolean> {
    // Metadata first: the file is invisible from here on, then the bytes go.
    const removed = await unlinkQuiet(join(folder, id + META_SUFFIX));
    await unlinkQuiet(join(folder, id));
    return removed;
  }

  async function sweep(): Promise<number> {
    const at = now();
    let removed = 0;
    let folders: string[];
    try {
      folders = await readdir(root);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return 0;
      throw storageError("list its folder", error);
    }
    for (const name of folders) {
      if (!SCOPE_DIR.test(name)) continue;
      const folder = join(root, name);
      let entries: string[];
      try {
        entries = await readdir(folder);
      } catch (error) {
        if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") continue;
        throw storageError("list a scope folder", error);
      }
      const metaIds = new Set<string>();
      for (const entry of entries) {
        if (entry.endsWith(META_SUFFIX) && isId(entry.slice(0, -META_SUFFIX.length))) {
          metaIds.add(entry.slice(0, -META_SUFFIX.length));
        }
      }
      for (const entry of entries) {
        const path = join(folder, entry);
        try {
          const id = entry.endsWith(META_SUFFIX) ? entry.slice(0, -META_SUFFIX.length) : undefined;
          if (id !== undefined && metaIds.has(id)) {
            const file = parseStoredRecord(await readFile(path, "utf8"), id)?.file;
            if (file && isExpired(file, at) && (await removeFile(folder, id))) removed++;
            continue;
          }
          const leftover =
            entry.endsWith(PART_SUFFIX) || entry.endsWith(TMP_SUFFIX) || (isId(entry) && !metaIds.has(entry));
          if (!leftover) continue;
          const info = await stat(path);
          if (at - info.mtimeMs >= staleMs && (await unlinkQuiet(path))) removed++;
        } catch (error) {
          if (errorCode(error) !== "ENOENT") throw storageError("sweep", error);
        }
      }
      // An empty, old scope folder goes too; a put racing with this re-creates it (see openTemp).
      try {
        const info = await stat(folder);
        if (at - info.mtimeMs >= staleMs) {
          await rmdir(folder);
          made.delete(folder);
        }
      } catch {
        // not empty, or already gone
      }
    }
    return removed;
  }

  const timer = unrefInterval(sweepMs, sweep);

  return {
    driver: "fs",
    dir: root,
    ...(quota ? { quota } : {}),

    async put(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
      const written = await writeData(source, putOptions);
      await commitData(written);
      return written.file;
    },

    async stage(source: PutSource, putOptions: PutOptions): Promise<StagedFile> {
      const { file, data, inline } = await writeData(source, putOptions);
      return stagedFile(
        file,
        // A staged file may wait long enough for a sweep to take its bytes: commit only if they remain.
        // (Inline bytes wait in memory, at most INLINE_BYTES.)
        async (staged) => {
          if (inline === undefined) {
            try {
              await stat(data);
            } catch (error) {
              throw storageError("find the staged bytes", error);
            }
          }
          await commitData({ file: staged, data, ...(inline ? { inline } : {}) });
        },
        () => unlinkQuiet(data),
      );
    },

    async head(scope: string, id: string): Promise<StoredFile | null> {
      return liveMeta(scope, id);
    },

    async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
      const record = await liveRecord(scope, id);
      if (!record) return null;
      const { file, inline } = record;
      const bounds = resolveRange(range, file.size);
      if (inline !== undefined) {
        const bytes = Buffer.from(inline, "base64");
        return Readable.from([bounds ? bytes.subarray(bounds.start, bounds.end + 1) : bytes], {
          objectMode: false,
        });
      }
      const path = join(scopeDir(scope), file.id);
      let fd: number;
      try {
        // Opened before returning, so a delete after this point cannot cut the read short.
        fd = await openFdAsync(path, "r");
      } catch (error) {
        if (errorCode(error) === "ENOENT") return null; // deleted meanwhile
        throw storageError("open the file", error);
      }
      return createReadStream(path, { fd, ...bounds, highWaterMark: READ_HIGH_WATER_MARK });
    },

    async list(scope: string, listOptions: ListOptions = {}): Promise<ListPage> {
      const limit = listLimit(listOptions.limit);
      const kind = listKind(listOptions.kind);
      const after = listOptions.cursor === undefined ? undefined : decodeCursor(listOptions.cursor);
      if (typeof scope !== "string" || scope.length === 0) return { files: [] };
      let names: string[];
      try {
        names = await readdir(scopeDir(scope));
      } catch (error) {
        const code = errorCode(error);
        if (code === "ENOENT" || code === "ENOTDIR") return { files: [] };
        throw storageError("list files", error);
      }
      const ids = names
        .filter((name) => name.endsWith(META_SUFFIX) && isId(name.slice(0, -META_SUFFIX.length)))
        .map((name) => name.slice(0, -META_SUFFIX.length))
        .sort();
      const at = now();
      const files: StoredFile[] = [];
      let i = after === undefined ? 0 : upperBound(ids, after);
      while (i < ids.length) {
        // Read metadata in small parallel batches, one more than needed to know if a page follows.
        const batch = ids.slice(i, i + Math.min(limit + 1 - files.length, 32));
        i += batch.length;
        const metas = await Promise.all(batch.map((id) => readMeta(scope, id)));
        for (const file of metas) {
          if (!file || isExpired(file, at) || (kind && file.kind !== kind)) continue;
          if (files.length === limit) {
            return { files, nextCursor: encodeCursor((files[files.length - 1] as StoredFile).id) };
          }
          files.push(file);
        }
      }
      return { files };
    },

    async delete(scope: string, id: string): Promise<boolean> {
      const file = await liveMeta(scope, id);
      if (!file) return false;
      try {
        return await removeFile(scopeDir(scope), file.id);
      } catch (error) {
        throw storageError("delete the file", error);
      }
    },

    sweep,

    async usage(scope: string): Promise<ScopeUsage> {
      if (typeof scope !== "string" || scope.length === 0) return { bytes: 0, files: 0 };
      return scopeUsage(scope);
    },

    async localPath(scope: string, id: string): Promise<string | null> {
      const record = await liveRecord(scope, id);
      if (!record) return null;
      const path = join(scopeDir(scope), record.file.id);
      if (record.inline !== undefined) return writeOut(path, record.inline);
      try {
        await stat(path);
      } catch (error) {
        if (errorCode(error) === "ENOENT") return null;
        throw storageError("find the file", error);
      }
      return path;
    },

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
    },
  };
}
