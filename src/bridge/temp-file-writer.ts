import type { Hash } from "node:crypto";
import { closeSync, openSync, readSync, write } from "node:fs";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { closeAsync, ftruncateAsync, openAsync } from "../internal/fs-callbacks.js";
import { nextTurn } from "../internal/next-turn.js";
import { createHash } from "../internal/node-builtins.js";
import { SNIFF_BYTES } from "../media/media-type.js";

/** How many bytes may wait for the disk before {@link TempFileWriter.write} waits too. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Bytes hashed between two turns of the event loop. */
const HASH_SLICE_BYTES = 128 * 1024;
/** Bytes read at a time by {@link sha256OfFileSync}. */
const READ_BYTES = 1024 * 1024;

// The callback API on a plain descriptor: a write costs the main thread less than a `FileHandle`'s
// (no handle object, no promise machinery of its own), which a call with one small file feels.
function writeAt(fd: number, chunk: Uint8Array, offset: number, length: number, position: number) {
  return new Promise<number>((resolve, reject) => {
    write(fd, chunk, offset, length, position, (error, written) =>
      error ? reject(error) : resolve(written),
    );
  });
}

/** What a finished {@link TempFileWriter} knows about the bytes it wrote. */
export interface WrittenFile {
  readonly size: number;
  /** Lower-case hex sha256; `undefined` when the writer was made with `hash: false`. */
  readonly sha256: string | undefined;
  /** The first bytes, for media-type sniffing. */
  readonly head: Buffer;
}

/**
 * Options of {@link TempFileWriter.deferred}.
 *
 * @example
 * ```ts
 * const writer = TempFileWriter.deferred(dirReady.then((dir) => join(dir, "a.bin")), maxBytes, {
 *   signal,
 *   hash: false, // the caller hashes later, if ever (see sha256OfFileSync)
 * });
 * ```
 */
export interface TempFileWriterOptions {
  /** Aborts writing (`ABORTED` on the next write). @default none */
  signal?: AbortSignal | undefined;
  /**
   * Hash the bytes (sha256) as they are written. Without it, writing a file decoded in memory costs
   * about half as much: on a machine with SHA extensions hashing still takes longer than decoding and
   * writing together.
   * @default true
   */
  hash?: boolean;
}

/**
 * Writes a new private file chunk by chunk while (optionally) hashing it and enforcing a size cap.
 * Each chunk is written at its own offset as soon as the file is open, so writes run on the thread
 * pool side by side and overlap with decoding (and hashing) on this thread; up to
 * {@link MAX_QUEUED_BYTES} may be in flight before a write waits.
 */
export class TempFileWriter {
  /** The file's descriptor once it is open (the writer closes it). */
  readonly #fd: Promise<number>;
  #hash: Hash | undefined;
  /** Bytes handed to write() whose disk write has not finished. */
  #queued = 0;
  /** Disk writes under way, oldest first. */
  #inFlight: Array<Promise<void>> = [];
  /** The first failed write, reported to the caller by the next write() or finish(). */
  #failure: unknown;
  readonly #maxBytes: number;
  readonly #signal: AbortSignal | undefined;
  #size = 0;
  #head: Buffer = Buffer.alloc(0);
  #closed = false;

  private constructor(fd: Promise<number>, maxBytes: number, options: TempFileWriterOptions) {
    this.#fd = fd;
    // Errors surface on the first write or on finish(); never as an unhandled rejection.
    fd.catch(() => {});
    this.#maxBytes = maxBytes;
    this.#signal = options.signal;
    this.#hash = options.hash === false ? undefined : createHash("sha256");
  }

  /**
   * A writer for a file that is being created (it must not exist; mode 0600) at a path that may still
   * be being worked out — e.g. while its folder is made. The caller can decode its first chunk
   * meanwhile; the first write waits for the file. The third argument is the abort signal or the
   * options.
   */
  static deferred(
    path: Promise<string>,
    maxBytes: number,
    options?: AbortSignal | TempFileWriterOptions,
  ): TempFileWriter {
    const settings: TempFileWriterOptions =
      options instanceof AbortSignal ? { signal: options } : (options ?? {});
    return new TempFileWriter(
      path.then((p) => openAsync(p, "wx", 0o600)),
      maxBytes,
      settings,
    );
  }

  /**
   * A writer for a file being opened elsewhere (e.g. created in a pre-made call folder by
   * `createCallFile`), given as its descriptor; like {@link TempFileWriter.deferred}, the first
   * write waits for it. The writer closes the descriptor in {@link TempFileWriter.finish} /
   * {@link TempFileWriter.close}.
   */
  static opening(fd: Promise<number>, maxBytes: number, options: TempFileWriterOptions = {}): TempFileWriter {
    return new TempFileWriter(fd, maxBytes, options);
  }

  /** Bytes accepted so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Adds a chunk: checks the cap (`FILE_TOO_LARGE`), the signal (`ABORTED`) and earlier write
   * failures, starts writing it at its offset (once the file is open) and hashes it meanwhile. It
   * waits only when more than {@link MAX_QUEUED_BYTES} are in flight, so a producer can decode ahead
   * while the folder is made and the file opened on the thread pool. The chunk must not be changed
   * afterwards.
   */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#signal?.aborted) throw new FileBridgeError("ABORTED", "the transfer was aborted");
    if (this.#failure !== undefined) throw this.#failure;
    if (chunk.length === 0) return;
    const position = this.#size;
    const size = position + chunk.length;
    if (size > this.#maxBytes) {
      throw new FileBridgeError("FILE_TOO_LARGE", `the file is larger than ${this.#maxBytes} bytes`, {
        data: { limit: this.#maxBytes },
      });
    }
    this.#size = size;
    this.#queued += chunk.length;
    const written = this.#fd.then((fd) => writeAll(fd, chunk, position));
    const done = written.then(
      () => {
        this.#queued -= chunk.length;
      },
      (error: unknown) => {
        this.#queued -= chunk.length;
        // Reported by the next write() or by finish(), never as an unhandled rejection.
        this.#failure ??= error;
      },
    );
    this.#inFlight.push(done);
    if (this.#head.length < SNIFF_BYTES) {
      this.#head = Buffer.concat([
        this.#head,
        Buffer.from(chunk.subarray(0, SNIFF_BYTES - this.#head.length)),
      ]);
    }
    if (this.#hash) {
      // Hash in slices and let the event loop turn between them, so the thread pool's callbacks (the
      // folder made, the file opened, a write done) are serviced at once.
      for (let offset = 0; offset < chunk.length; offset += HASH_SLICE_BYTES) {
        await nextTurn();
        this.#hash.update(chunk.subarray(offset, offset + HASH_SLICE_BYTES));
      }
    }
    while (this.#queued > MAX_QUEUED_BYTES && this.#inFlight.length > 0) {
      await this.#inFlight.shift();
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Waits for every write under way (never throws; a failure is kept in #failure). */
  async #settle(): Promise<void> {
    while (this.#inFlight.length > 0) {
      const batch = this.#inFlight;
      this.#inFlight = [];
      await Promise.all(batch);
    }
  }

  /** Throws away everything written so far (to start over after a failed fast path). */
  async reset(): Promise<void> {
    await this.#settle();
    if (this.#failure !== undefined) throw this.#failure;
    await ftruncateAsync(await this.#fd, 0);
    this.#size = 0;
    if (this.#hash) this.#hash = createHash("sha256");
    this.#queued = 0;
    this.#head = Buffer.alloc(0);
  }

  /**
   * Waits for the last write, closes the file and returns size, sha256 (unless made with
   * `hash: false`) and the first bytes.
   */
  async finish(): Promise<WrittenFile> {
    await this.#settle();
    const fd = await this.#fd;
    if (this.#failure !== undefined) throw this.#failure;
    this.#closed = true;
    await closeAsync(fd);
    return { size: this.#size, sha256: this.#hash?.digest("hex"), head: this.#head };
  }

  /** Closes the file without finishing (after an error); safe to call more than once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#settle();
    const fd = await this.#fd.catch(() => undefined);
    if (fd !== undefined) await closeAsync(fd);
  }
}

async function writeAll(fd: number, chunk: Uint8Array, position: number): Promise<void> {
  let offset = 0;
  while (offset < chunk.length) {
    offset += await writeAt(fd, chunk, offset, chunk.length - offset, position + offset);
  }
}

/**
 * The lower-case hex sha256 of a file, read synchronously a megabyte at a time. For a hash asked for
 * after the file was written (a `ResolvedFile.sha256` read on demand); it holds the thread for about
 * a millisecond per megabyte. A missing file is `NOT_FOUND`.
 *
 * @example
 * ```ts
 * const digest = sha256OfFileSync(file.path);
 * ```
 */
export function sha256OfFileSync(path: string): string {
  const hash = createHash("sha256");
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new FileBridgeError("NOT_FOUND", "the file is gone, so its sha256 cannot be computed", {
      cause: error,
    });
  }
  try {
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      hash.update(buffer.subarray(0, read));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}
