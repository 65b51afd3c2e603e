import { createHash, type Hash } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { SNIFF_BYTES } from "../media/media-type.js";

/** How many bytes may wait for the disk before {@link TempFileWriter.write} waits too. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Bytes hashed between two turns of the event loop. */
const HASH_SLICE_BYTES = 128 * 1024;

/** What a finished {@link TempFileWriter} knows about the bytes it wrote. */
export interface WrittenFile {
  readonly size: number;
  readonly sha256: string;
  /** The first bytes, for media-type sniffing. */
  readonly head: Buffer;
}

/**
 * Writes a new private file chunk by chunk while hashing it and enforcing a size cap. Chunks queue
 * behind the file's opening and each other's writes (up to {@link MAX_QUEUED_BYTES}), so decoding and
 * hashing on this thread overlap with making the folder, opening the file and writing on the thread
 * pool.
 */
export class TempFileWriter {
  readonly #handle: Promise<FileHandle>;
  #hash: Hash = createHash("sha256");
  /** Bytes handed to write() whose disk write has not finished. */
  #queued = 0;
  /** The first failed write, reported to the caller by the next write() or finish(). */
  #failure: unknown;
  #position = 0;
  readonly #maxBytes: number;
  readonly #signal: AbortSignal | undefined;
  #pending: Promise<void> = Promise.resolve();
  #size = 0;
  #head: Buffer = Buffer.alloc(0);
  #closed = false;

  private constructor(handle: Promise<FileHandle>, maxBytes: number, signal: AbortSignal | undefined) {
    this.#handle = handle;
    // Errors surface on the first write or on finish(); never as an unhandled rejection.
    handle.catch(() => {});
    this.#maxBytes = maxBytes;
    this.#signal = signal;
  }

  /**
   * A writer for a file that is being created (it must not exist; mode 0600) at a path that may still
   * be being worked out — e.g. while its folder is made. The caller can decode its first chunk
   * meanwhile; the first write waits for the file.
   */
  static deferred(path: Promise<string>, maxBytes: number, signal?: AbortSignal): TempFileWriter {
    return new TempFileWriter(
      path.then((p) => open(p, "wx", 0o600)),
      maxBytes,
      signal,
    );
  }

  /** Bytes accepted so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Adds a chunk: checks the cap (`FILE_TOO_LARGE`), the signal (`ABORTED`) and earlier write
   * failures, queues the chunk behind the writes already under way (the first one also waits for the
   * file to be opened) and hashes it meanwhile. It waits only when more than
   * {@link MAX_QUEUED_BYTES} are queued, so a producer can decode ahead while the folder is made and
   * the file opened on the thread pool. The chunk must not be changed afterwards.
   */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#signal?.aborted) throw new FileBridgeError("ABORTED", "the transfer was aborted");
    if (this.#failure !== undefined) throw this.#failure;
    if (chunk.length === 0) return;
    const size = this.#size + chunk.length;
    if (size > this.#maxBytes) {
      throw new FileBridgeError("FILE_TOO_LARGE", `the file is larger than ${this.#maxBytes} bytes`, {
        data: { limit: this.#maxBytes },
      });
    }
    this.#size = size;
    this.#queued += chunk.length;
    const previous = this.#pending;
    this.#pending = (async () => {
      await previous;
      await this.#writeAll(await this.#handle, chunk);
      this.#queued -= chunk.length;
    })();
    // A failed write is reported by the next write() or by finish(), never as an unhandled rejection.
    this.#pending.catch((error: unknown) => {
      this.#failure ??= error;
    });
    // Hash in slices and let the event loop turn between them, so the thread pool's callbacks (the
    // folder made, the file opened, a write done) are serviced at once and the next write starts
    // while this thread is still hashing.
    for (let offset = 0; offset < chunk.length; offset += HASH_SLICE_BYTES) {
      await nextTurn();
      this.#hash.update(chunk.subarray(offset, offset + HASH_SLICE_BYTES));
    }
    if (this.#head.length < SNIFF_BYTES) {
      this.#head = Buffer.concat([
        this.#head,
        Buffer.from(chunk.subarray(0, SNIFF_BYTES - this.#head.length)),
      ]);
    }
    if (this.#queued > MAX_QUEUED_BYTES) await this.#pending;
  }

  async #writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset, this.#position);
      offset += bytesWritten;
      this.#position += bytesWritten;
    }
  }

  /** Throws away everything written so far (to start over after a failed fast path). */
  async reset(): Promise<void> {
    await this.#pending;
    await (await this.#handle).truncate(0);
    this.#position = 0;
    this.#size = 0;
    this.#hash = createHash("sha256");
    this.#queued = 0;
    this.#head = Buffer.alloc(0);
  }

  /** Waits for the last write, closes the file and returns size, sha256 and the first bytes. */
  async finish(): Promise<WrittenFile> {
    await this.#pending;
    const handle = await this.#handle;
    this.#closed = true;
    await handle.close();
    return { size: this.#size, sha256: this.#hash.digest("hex"), head: this.#head };
  }

  /** Closes the file without finishing (after an error); safe to call more than once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pending.catch(() => {});
    const handle = await this.#handle.catch(() => undefined);
    await handle?.close();
  }
}
