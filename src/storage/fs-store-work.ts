/**
 * What an `fsStore`'s async methods run: writing, committing, reading and listing files, scope
 * usage and the sweep, with the parts they use (the on-disk layout, the writer thread, the list
 * index, the quota and the sweep). Loaded at a store's first call (`loadFsStoreWork()` in
 * fs-store.ts; issue 39), so a server that makes a store does not compile it at start. The store
 * checks what it checked before its first await (a put's plan, a list's limit, kind and cursor, the
 * shape of a scope and an id) before the load, and hands over the results.
 */

import { link, open, stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import {
  errorCode,
  FILE_MODE,
  FsLayout,
  openFdAsync,
  storageError,
  tempPath,
  unlinkQuiet,
} from "./fs-layout.js";
import { FsListIndex } from "./fs-list-index.js";
import { FsQuota } from "./fs-quota.js";
import { type FsSettings, SMALL_PUT_BYTES } from "./fs-store-options.js";
import { fsSweep } from "./fs-sweep.js";
import { resolveRange } from "./kit/byte-range.js";
import { fileRangeStream } from "./kit/file-range.js";
import { FileSha256 } from "./kit/file-sha256.js";
import { encodeCursor, isExpired } from "./kit/list-page.js";
import { checkMeasured, measureBytes } from "./kit/put-meter.js";
import { PUT_HEAD_BYTES, type PutPlan, storedFileOf } from "./kit/put-plan.js";
import { readSmall } from "./kit/put-source.js";
import { stagedFile } from "./kit/staged-file.js";
import { loadPutPipeline } from "./load-put-pipeline.js";
import type {
  AdoptSource,
  ByteRange,
  FileKind,
  ListPage,
  PutSource,
  ScopeUsage,
  StagedFile,
  StoredFile,
} from "./types.js";

/** Read chunk size: fewer, larger reads for downloads. */
const READ_HIGH_WATER_MARK = 256 * 1024;
/**
 * Puts up to this size keep their bytes inside the metadata record (one file on disk, written once
 * and renamed into place); `localPath()` writes the bytes out beside it on first use.
 */
const INLINE_BYTES = 8 * 1024;
/** Metadata files read at once while listing. */
const LIST_READ_BATCH = 32;

/** A put's verified bytes: where they are (or will be) on disk, or the bytes for an inline record. */
interface Written {
  readonly file: StoredFile;
  readonly data: string;
  readonly inline?: Uint8Array;
}

/**
 * One store's files on disk (see `fsStore` for the rules they keep). Made at the store's first
 * call, with the store's checked settings.
 */
export class FsStoreWork {
  readonly #now: () => number;
  readonly #index = new FsListIndex();
  readonly #layout: FsLayout;
  readonly #usage: FsQuota;
  /** The store's sweep (see fs-sweep.ts). */
  readonly sweep: () => Promise<number>;

  constructor({ root, now, staleMs, quota, smallWrites }: FsSettings) {
    this.#now = now;
    this.#layout = new FsLayout(root, now, smallWrites, this.#index);
    this.#usage = new FsQuota(this.#layout, quota);
    this.sweep = fsSweep(this.#layout, staleMs);
  }

  /**
   * Writes a put's verified bytes under its final name `<id>` (created exclusively; invisible until
   * its metadata exists) and returns the metadata and that path. A source that ends within
   * {@link SMALL_PUT_BYTES} is measured in memory and written in one write; a larger one streams
   * through the meter. On any failure the bytes written so far are removed.
   */
  async #writeData(source: PutSource, plan: PutPlan): Promise<Written> {
    const usage = this.#usage;
    const layout = this.#layout;
    const limits = usage.quota ? await usage.limits(plan) : undefined;
    const folder = layout.scopeDir(plan.scope);
    const data = join(folder, plan.id);
    // Bytes in memory need no read (the common small put: no stream, no promise).
    const read =
      source instanceof Uint8Array && source.byteLength <= SMALL_PUT_BYTES
        ? { bytes: source }
        : await readSmall(source, SMALL_PUT_BYTES, plan.signal);
    if ("bytes" in read) {
      const file = storedFileOf(plan, measureBytes(read.bytes, plan, limits));
      if (read.bytes.byteLength <= INLINE_BYTES) return { file, data, inline: read.bytes };
      try {
        await layout.inFolder(folder, () => layout.small.write(data, read.bytes, FILE_MODE));
      } catch (error) {
        await unlinkQuiet(data).catch(() => {});
        throw storageError("write the file", error);
      }
      return { file, data };
    }
    let fd: number;
    try {
      fd = await layout.inFolder(folder, () => openFdAsync(data, "wx", FILE_MODE));
    } catch (error) {
      read.stream.destroy();
      throw storageError("create a file", error);
    }
    // Bytes go to their final name once; the hashing worker reads them back from the file as they
    // land (off the main thread, no copy here), so the digest is of exactly what was stored. The
    // file's writer closes `fd` however the put ends.
    const hash = new FileSha256(data);
    try {
      const measure = await (await loadPutPipeline()).streamPutToFile(read.stream, plan, fd, limits, hash);
      return { file: storedFileOf(plan, measure), data };
    } catch (error) {
      await unlinkQuiet(data).catch(() => {});
      throw error;
    }
  }

  /**
   * Takes over a measured local file at `path` (its `source.path`; the store has checked it is
   * larger than {@link SMALL_PUT_BYTES}): checks it as a streamed put would be checked, then hard-links it under
   * its final name (invisible until its metadata exists; the caller's file stays as it was, so a
   * refused commit leaves it to retry). `null` when the link cannot be made (another filesystem).
   */
  async #adoptData(source: AdoptSource, path: string, plan: PutPlan): Promise<Written | null> {
    checkMeasured(plan, source.size, source.sha256, await this.#usage.limits(plan));
    const head = Buffer.alloc(PUT_HEAD_BYTES);
    let bytesRead: number;
    try {
      const handle = await open(path, "r");
      try {
        const info = await handle.stat();
        if (!info.isFile() || info.size !== source.size) {
          throw new FileBridgeError(
            "INVALID_INPUT",
            "the adopted file does not have the size it was measured at",
          );
        }
        ({ bytesRead } = await handle.read(head, 0, PUT_HEAD_BYTES, 0));
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw storageError("read the adopted file", error);
    }
    const folder = this.#layout.scopeDir(plan.scope);
    const data = join(folder, plan.id);
    try {
      await this.#layout.inFolder(folder, () => link(path, data));
    } catch (error) {
      const code = errorCode(error);
      if (code === "EXDEV" || code === "EPERM" || code === "ENOTSUP" || code === "EMLINK") return null;
      throw storageError("adopt the file", error);
    }
    const measure = { size: source.size, sha256: source.sha256, head: head.subarray(0, bytesRead) };
    return { file: storedFileOf(plan, measure), data };
  }

  /**
   * Makes verified bytes visible: writes their metadata (under the scope's commit lock when there is
   * a quota, see {@link FsQuota.commit}). A refused or failed commit removes the bytes.
   */
  async #commitData({ file, data, inline }: Written): Promise<void> {
    await this.#usage.commit(file, data, async () => {
      try {
        await this.#layout.writeMeta(file, inline);
      } catch (error) {
        await unlinkQuiet(data).catch(() => {});
        throw storageError("write metadata", error);
      }
    });
  }

  /**
   * Writes an inline file's bytes out to `<id>` (temp name + rename, so a reader never sees part of
   * it) unless they are there already; returns the path.
   */
  async #writeOut(path: string, inline: string): Promise<string> {
    try {
      await stat(path);
      return path;
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw storageError("find the file", error);
    }
    const temp = tempPath(path);
    try {
      await this.#layout.small.write(temp, Buffer.from(inline, "base64"), FILE_MODE);
      await this.#layout.small.rename(temp, path);
    } catch (error) {
      await unlinkQuiet(temp).catch(() => {});
      throw storageError("write the file out", error);
    }
    return path;
  }

  /** `put()` with its plan made. */
  async put(source: PutSource, plan: PutPlan): Promise<StoredFile> {
    const written = await this.#writeData(source, plan);
    await this.#commitData(written);
    return written.file;
  }

  /** `stage()` with its plan made. */
  async stage(source: PutSource, plan: PutPlan): Promise<StagedFile> {
    const { file, data, inline } = await this.#writeData(source, plan);
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
        await this.#commitData({ file: staged, data, ...(inline ? { inline } : {}) });
      },
      () => unlinkQuiet(data),
    );
  }

  /** `adopt()` of a file the store can take over (see {@link #adoptData}), with its plan made. */
  async adopt(source: AdoptSource, path: string, plan: PutPlan): Promise<StagedFile | null> {
    const written = await this.#adoptData(source, path, plan);
    if (!written) return null;
    const { file, data } = written;
    return stagedFile(
      file,
      async (staged) => {
        try {
          await stat(data);
        } catch (error) {
          throw storageError("find the adopted bytes", error);
        }
        await this.#commitData({ file: staged, data });
      },
      () => unlinkQuiet(data),
    );
  }

  async head(scope: string, id: string): Promise<StoredFile | null> {
    return this.#layout.liveMeta(scope, id);
  }

  async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
    const record = await this.#layout.liveRecord(scope, id);
    if (!record) return null;
    const { file, inline } = record;
    const bounds = resolveRange(range, file.size);
    if (inline !== undefined) {
      const bytes = Buffer.from(inline, "base64");
      return Readable.from([bounds ? bytes.subarray(bounds.start, bounds.end + 1) : bytes], {
        objectMode: false,
      });
    }
    const path = join(this.#layout.scopeDir(scope), file.id);
    let fd: number;
    try {
      // Opened before returning, so a delete after this point cannot cut the read short.
      fd = await openFdAsync(path, "r");
    } catch (error) {
      if (errorCode(error) === "ENOENT") return null; // deleted meanwhile
      throw storageError("open the file", error);
    }
    return fileRangeStream(path, fd, bounds, file.size, READ_HIGH_WATER_MARK);
  }

  /** A list page of a non-empty scope, with `limit`, `kind` and the cursor's id checked. */
  async list(
    scope: string,
    limit: number,
    kind: FileKind | undefined,
    after: string | undefined,
  ): Promise<ListPage> {
    const layout = this.#layout;
    // The scope's ids from its list index (fs-list-index.ts): no walk of the folder.
    const order = (await this.#index.ids(layout.scopeDir(scope))).after(after);
    const at = this.#now();
    const files: StoredFile[] = [];
    for (;;) {
      // Read metadata in small parallel batches, one more than needed to know if a page follows.
      const batch: string[] = [];
      const want = Math.min(limit + 1 - files.length, LIST_READ_BATCH);
      for (let next = order.next(); ; next = order.next()) {
        if (next.done) break;
        batch.push(next.value);
        if (batch.length === want) break;
      }
      if (batch.length === 0) break;
      const metas = await Promise.all(batch.map((id) => layout.readMeta(scope, id)));
      for (const file of metas) {
        if (!file || isExpired(file, at) || (kind && file.kind !== kind)) continue;
        if (files.length === limit) {
          return { files, nextCursor: encodeCursor((files[files.length - 1] as StoredFile).id) };
        }
        files.push(file);
      }
    }
    return { files };
  }

  async delete(scope: string, id: string): Promise<boolean> {
    const file = await this.#layout.liveMeta(scope, id);
    if (!file) return false;
    try {
      return await this.#layout.removeFile(this.#layout.scopeDir(scope), file.id);
    } catch (error) {
      throw storageError("delete the file", error);
    }
  }

  /** What a non-empty scope's live files hold. */
  async usage(scope: string): Promise<ScopeUsage> {
    return this.#usage.usage(scope);
  }

  async localPath(scope: string, id: string): Promise<string | null> {
    const record = await this.#layout.liveRecord(scope, id);
    if (!record) return null;
    const path = join(this.#layout.scopeDir(scope), record.file.id);
    if (record.inline !== undefined) return this.#writeOut(path, record.inline);
    try {
      await stat(path);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return null;
      throw storageError("find the file", error);
    }
    return path;
  }
}
