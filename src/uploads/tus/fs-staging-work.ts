/**
 * What an `fsTusStaging`'s async methods run (`fs-staging.ts`): staging files and their expiry
 * sidecars in a private folder, written at the verified offset, read back, cut back, removed and swept.
 * Loaded at the staging's first call (issue 39), so a server whose routes offer tus compiles none of
 * it at start.
 */
import { constants } from "node:fs";
import { type FileHandle, lstat, open, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { type FolderRole, privateDir } from "../../internal/temp-dir.js";
import type { StagingObserver, TusStaging } from "./staging-types.js";

/** Bytes one write of the sink gathers (Node batches queued chunks into one `writev`). */
const SINK_HIGH_WATER_MARK = 1 << 20;

/**
 * Writes at a position of an open file, batching queued chunks into one `writev`, and hands each
 * stored chunk to an observer before taking the next: `written` is what reached the file.
 */
class StagingSink extends Writable {
  written = 0;
  readonly #handle: FileHandle;
  #position: number;
  readonly #observe: StagingObserver | undefined;

  constructor(handle: FileHandle, position: number, observe: StagingObserver | undefined) {
    super({ highWaterMark: SINK_HIGH_WATER_MARK });
    this.#handle = handle;
    this.#position = position;
    this.#observe = observe;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#settle(this.#store([chunk]), callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.#settle(this.#store(chunks.map(({ chunk }) => chunk)), callback);
  }

  /** A write that fails after the sink was destroyed (its handle closed) is no news to anyone. */
  #settle(stored: Promise<void>, callback: (error?: Error | null) => void): void {
    stored.then(
      () => callback(),
      (error: Error) => callback(this.destroyed ? null : error),
    );
  }

  async #store(chunks: Buffer[]): Promise<void> {
    let pending = chunks;
    while (pending.length > 0) {
      const { bytesWritten } = await this.#handle.writev(pending, this.#position);
      // Destroyed meanwhile: the caller has read `written` already; these bytes are past the
      // recorded offset (cut off by the next write) and must not reach the observer.
      if (this.destroyed) return;
      this.#position += bytesWritten;
      this.written += bytesWritten;
      // A short write (rare on files): observe what was stored and write the rest.
      let left = bytesWritten;
      const rest: Buffer[] = [];
      for (const chunk of pending) {
        if (this.destroyed) return;
        if (left >= chunk.length) {
          left -= chunk.length;
          await this.#observe?.(chunk);
        } else {
          if (left > 0) await this.#observe?.(chunk.subarray(0, left));
          rest.push(chunk.subarray(left));
          left = 0;
        }
      }
      pending = rest;
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#handle.close().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#handle.close().then(
      () => callback(error),
      () => callback(error),
    );
  }
}

/** Writes `text` to a new file at `path` (`O_EXCL`, mode 0600, never through a symlink). */
async function writeNew(path: string, text: string): Promise<void> {
  const handle = await open(path, CREATE, 0o600);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

const SIDECAR = ".expires";
/** The staging folder's role, for the error when it is not ours. */
const STAGING_ROLE: FolderRole = {
  what: "the tus staging folder",
  option: "tus.staging (fsTusStaging(dir))",
};
/** Never through a symlink: a staging file is a regular file of the private folder, or nothing. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** A new staging file or sidecar: made exclusively (`O_EXCL`), so nothing planted is written through. */
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW;
/** An existing staging file, read and written. */
const UPDATE = constants.O_RDWR | NOFOLLOW;
/** A staging file without a sidecar older than this is an orphan of a crash between the two writes. */
const ORPHAN_MS = 24 * 60 * 60_000;

/**
 * Whether the upload of sidecar `path` is over at `now`: its expiry passed, or the sidecar is not
 * ours to read. An empty (or unreadable as a number) sidecar is a creation under way — `create`
 * makes it exclusively, then writes it — and counts as over only once older than {@link ORPHAN_MS}
 * (a crash between the two); a sidecar gone meanwhile was removed with its upload.
 */
async function sidecarExpired(path: string, now: number): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(path, { encoding: "utf8", flag: constants.O_RDONLY | NOFOLLOW });
  } catch (error) {
    return (error as NodeJS.ErrnoException)?.code !== "ENOENT";
  }
  const expiresAt = text.length > 0 ? Number(text) : Number.NaN;
  if (Number.isFinite(expiresAt)) return expiresAt <= now;
  const info = await lstat(path).catch(() => undefined);
  return info !== undefined && now - info.mtimeMs > ORPHAN_MS;
}

/**
 * The staging of {@link fsTusStaging} in folder `dir` (see there), made at its first call.
 *
 * @example
 * ```ts
 * const staging = fsStagingWork("/srv/tus");
 * ```
 */
export function fsStagingWork(dir: string): TusStaging {
  // Checked on each use, not once per process (issue 40): one `lstat`, and a `mkdir` when missing.
  const folder = () => privateDir(dir, STAGING_ROLE);
  const pathOf = (id: string) => join(dir, id);
  return {
    async create(id, expiresAt) {
      await folder();
      await writeNew(pathOf(id) + SIDECAR, String(expiresAt));
      await writeNew(pathOf(id), "");
    },
    async write(id, offset, source, observe) {
      let handle: FileHandle;
      try {
        await folder();
        handle = await open(pathOf(id), UPDATE);
      } catch (error) {
        source.resume();
        return { written: 0, error };
      }
      try {
        // Bytes past the offset (the tail of a write a crash cut) are cut off. Fewer bytes than the
        // offset (a crash that lost written pages the record had counted) cannot be filled in: the
        // body is refused rather than written over a hole (the upload's owner reads the offset the
        // file really has, see `shortfall`, and resumes from there).
        const { size } = await handle.stat();
        if (size < offset) {
          throw new FileBridgeError(
            "STORAGE_ERROR",
            `The staged upload holds ${size} bytes, fewer than its offset ${offset}`,
          );
        }
        if (size > offset) await handle.truncate(offset);
      } catch (error) {
        await handle.close().catch(() => undefined);
        source.resume();
        return { written: 0, error };
      }
      const sink = new StagingSink(handle, offset, observe);
      try {
        await pipeline(source, sink);
        return { written: sink.written };
      } catch (error) {
        return { written: sink.written, error };
      }
    },
    async truncate(id, length) {
      await folder();
      const handle = await open(pathOf(id), UPDATE);
      try {
        await handle.truncate(length);
      } finally {
        await handle.close();
      }
    },
    read(id, length) {
      if (length === 0) return Readable.from([]);
      async function* bytes(): AsyncGenerator<Buffer> {
        await folder();
        const handle = await open(pathOf(id), constants.O_RDONLY | NOFOLLOW);
        yield* handle.createReadStream({ start: 0, end: length - 1, highWaterMark: 1 << 20 });
      }
      return Readable.from(bytes(), { objectMode: false });
    },
    localPath: pathOf,
    async shortfall(id, offset) {
      try {
        await folder();
        const { size } = await lstat(pathOf(id));
        return size < offset ? size : undefined;
      } catch {
        // Missing or unreadable: nothing to say here (a write reports it).
        return undefined;
      }
    },
    async remove(id) {
      await folder();
      await rm(pathOf(id), { force: true });
      await rm(pathOf(id) + SIDECAR, { force: true });
    },
    async sweep(now) {
      let entries: string[];
      try {
        await folder();
        entries = await readdir(dir);
      } catch {
        return 0;
      }
      const names = new Set(entries);
      let removed = 0;
      for (const entry of entries) {
        if (entry.endsWith(SIDECAR)) {
          const id = entry.slice(0, -SIDECAR.length);
          if (!(await sidecarExpired(join(dir, entry), now))) continue;
          await this.remove(id);
          removed++;
        } else if (!names.has(entry + SIDECAR)) {
          const info = await lstat(join(dir, entry)).catch(() => undefined);
          if (info && now - info.mtimeMs > ORPHAN_MS) {
            await rm(join(dir, entry), { force: true });
            removed++;
          }
        }
      }
      return removed;
    },
  };
}
