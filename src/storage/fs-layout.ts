/**
 * How `fsStore` lays files out on disk, and the small steps every part of it shares: one folder per
 * scope (named by a hash of the scope), `<id>` (bytes) beside `<id>.json` (metadata record), temp
 * names for anything renamed into place, and the errors a disk failure becomes.
 */

import { mkdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { isId } from "../internal/ids.js";
import { createHash, randomBytes } from "../internal/node-builtins.js";
import { FsSmallWrites, type SmallWrites } from "./fs-small-writes.js";
import { isExpired } from "./kit/list-page.js";
import { metadataRecordBytes, parseStoredRecord, type StoredRecord } from "./kit/metadata-record.js";
import type { StoredFile } from "./types.js";

/** A scope folder's name: the first 32 hex digits of the scope's sha256. */
export const SCOPE_DIR = /^[0-9a-f]{32}$/;
export const META_SUFFIX = ".json";
export const PART_SUFFIX = ".part";
export const TMP_SUFFIX = ".tmp";
export const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
/** Scope folders one store remembers having made (so a put makes none); past this it forgets all. */
const MADE_FOLDERS_LIMIT = 4096;

export { openAsync as openFdAsync } from "../internal/fs-callbacks.js";

/** The `code` of a Node system error (`"ENOENT"`, …), if any. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as NodeJS.ErrnoException).code : undefined;
}

/** A disk failure as `STORAGE_ERROR` ("the file store could not <action>"); coded errors pass through. */
export function storageError(action: string, error: unknown): FileBridgeError {
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", `the file store could not ${action}`, { cause: error });
}

/** Removes a file; `false` if it was not there. */
export async function unlinkQuiet(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return false;
    throw error;
  }
}

/** A temp name beside `path`, unique to this write. */
export function tempPath(path: string): string {
  return `${path}.${randomBytes(6).toString("hex")}${TMP_SUFFIX}`;
}

/** The id of a metadata file's name (`<id>.json`), or `undefined` for any other name. */
export function metaIdOf(name: string): string | undefined {
  if (!name.endsWith(META_SUFFIX)) return undefined;
  const id = name.slice(0, -META_SUFFIX.length);
  return isId(id) ? id : undefined;
}

/** What the layout tells the list index of a store (`FsListIndex`, fs-list-index.ts). */
export interface ListIndexNotes {
  /** A commit is about to write its record; `false` when the folder has no index yet. */
  committing(folder: string, id: string): boolean;
  /** A commit wrote its record after {@link committing} found no index. */
  committed(folder: string, id: string): void;
  /** A record was removed. */
  removed(folder: string, id: string): void;
  /** The folder was removed. */
  forget(folder: string): void;
}

/**
 * One store's view of its folder: where a scope's files are, their metadata records, and the scope
 * folders it has made (so a put into one of them makes no folder).
 */
export class FsLayout {
  /** Records and small files, written on the writer thread (or the thread pool). */
  readonly small: FsSmallWrites;
  readonly #made = new Set<string>();
  readonly #folders = new Map<string, string>();

  /**
   * @param smallWrites Where records and small files are written (see {@link FsSmallWrites}).
   * @param index The list index, told of every commit and removal (`FsListIndex`).
   */
  constructor(
    readonly root: string,
    readonly now: () => number,
    smallWrites: SmallWrites,
    readonly index: ListIndexNotes,
  ) {
    this.small = new FsSmallWrites(smallWrites);
  }

  /** The folder of a scope's files (a put asks three times: the hash is kept per scope). */
  scopeDir(scope: string): string {
    let folder = this.#folders.get(scope);
    if (folder === undefined) {
      folder = join(this.root, createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32));
      if (this.#folders.size >= MADE_FOLDERS_LIMIT) this.#folders.clear();
      this.#folders.set(scope, folder);
    }
    return folder;
  }

  /** Forgets having made `folder` (a sweep removed it). */
  forget(folder: string): void {
    this.#made.delete(folder);
  }

  /**
   * Runs `create` (which creates one file in `folder`), making the folder first if this store has not
   * made it yet, and again if a sweep (of any instance) removed it meanwhile (`ENOENT`).
   */
  async inFolder<T>(folder: string, create: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (!this.#made.has(folder)) {
        await mkdir(folder, { recursive: true, mode: DIR_MODE });
        if (this.#made.size >= MADE_FOLDERS_LIMIT) this.#made.clear();
        this.#made.add(folder);
      }
      try {
        return await create();
      } catch (error) {
        if (errorCode(error) !== "ENOENT" || attempt >= 3) throw error;
        this.#made.delete(folder);
      }
    }
  }

  /** The record of a file in a scope (metadata, and inline bytes if any), expired or not; `null` when missing. */
  async readRecord(scope: string, id: string): Promise<StoredRecord | null> {
    let text: string;
    try {
      text = await readFile(join(this.scopeDir(scope), id + META_SUFFIX), "utf8");
    } catch (error) {
      const code = errorCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      throw storageError("read metadata", error);
    }
    const record = parseStoredRecord(text, id);
    return record && record.file.scope === scope ? record : null;
  }

  /** Metadata of a file in a scope, expired or not; `null` when missing. */
  async readMeta(scope: string, id: string): Promise<StoredFile | null> {
    return (await this.readRecord(scope, id))?.file ?? null;
  }

  /** The live record (not expired, right scope, well-formed id), or `null`. */
  async liveRecord(scope: unknown, id: unknown): Promise<StoredRecord | null> {
    if (typeof scope !== "string" || scope.length === 0 || !isId(id)) return null;
    const record = await this.readRecord(scope, id);
    return record && !isExpired(record.file, this.now()) ? record : null;
  }

  /** Live metadata (not expired, right scope, well-formed id), or `null`. */
  async liveMeta(scope: unknown, id: unknown): Promise<StoredFile | null> {
    return (await this.liveRecord(scope, id))?.file ?? null;
  }

  /**
   * Writes the record that makes a file visible. A record holding the bytes (a small file) is
   * written straight under its own name with `O_EXCL`: one create, no rename. A reader that meets it
   * half written parses nothing (JSON text is not complete before its closing brace, and the inline
   * bytes must match the size), so the file is not there until the write is done; what a crash
   * leaves is such an unparseable record, which the sweep removes once it is stale. Other records
   * go through a temp name and one rename.
   */
  async writeMeta(file: StoredFile, inline?: Uint8Array): Promise<void> {
    const folder = this.scopeDir(file.scope);
    const path = join(folder, file.id + META_SUFFIX);
    const record = metadataRecordBytes(file, inline);
    // The list index hears of the file before it can be found (see fs-list-index.ts).
    const indexed = this.index.committing(folder, file.id);
    try {
      if (inline !== undefined) {
        try {
          // The first file of a scope: make the folder if needed.
          await this.inFolder(folder, () => this.small.write(path, record, FILE_MODE));
        } catch (error) {
          // Never remove a record this call did not create (the id was taken: not ours).
          if (errorCode(error) !== "EEXIST") await unlinkQuiet(path).catch(() => {});
          throw error;
        }
      } else {
        const temp = tempPath(path);
        try {
          await this.small.write(temp, record, FILE_MODE);
          await this.small.rename(temp, path);
        } catch (error) {
          await unlinkQuiet(temp).catch(() => {});
          throw error;
        }
      }
    } catch (error) {
      if (indexed && errorCode(error) !== "EEXIST") this.index.removed(folder, file.id);
      throw error;
    }
    if (!indexed) this.index.committed(folder, file.id);
  }

  /** Removes a file: metadata first (the file is invisible from there on), then the bytes. */
  async removeFile(folder: string, id: string): Promise<boolean> {
    const removed = await unlinkQuiet(join(folder, id + META_SUFFIX));
    if (removed) this.index.removed(folder, id);
    await unlinkQuiet(join(folder, id));
    return removed;
  }
}
