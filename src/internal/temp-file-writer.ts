import { createHash, type Hash } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { SNIFF_BYTES } from "../media/media-type.js";

/** What a finished {@link TempFileWriter} knows about the bytes it wrote. */
export interface WrittenFile {
  readonly size: number;
  readonly sha256: string;
  /** The first bytes, for media-type sniffing. */
  readonly head: Buffer;
}

/**
 * Writes a new private file chunk by chunk while hashing it and enforcing a size cap. One write is
 * kept in flight while this thread hashes it and the caller produces the next chunk, so decoding and
 * hashing on the main thread overlap with disk writes on the thread pool.
 */
export class TempFileWriter {
  readonly #handle: Promise<FileHandle>;
  #hash: Hash = createHash("sha256");
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
   * Adds a chunk: checks the cap (`FILE_TOO_LARGE`) and the signal (`ABORTED`), waits for the
   * previous write, starts writing this one and hashes it meanwhile. The chunk must not be changed
   * afterwards.
   */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#signal?.aborted) throw new FileBridgeError("ABORTED", "the transfer was aborted");
    if (chunk.length === 0) return;
    const size = this.#size + chunk.length;
    if (size > this.#maxBytes) {
      throw new FileBridgeError("FILE_TOO_LARGE", `the file is larger than ${this.#maxBytes} bytes`, {
        data: { limit: this.#maxBytes },
      });
    }
    this.#size = size;
    await this.#pending;
    // Start the write first: the thread pool writes while this thread hashes the same bytes.
    this.#pending = this.#writeAll(chunk);
    // Surface a failed write on the next call instead of as an unhandled rejection.
    this.#pending.catch(() => {});
    this.#hash.update(chunk);
    if (this.#head.length < SNIFF_BYTES) {
      this.#head = Buffer.concat([
        this.#head,
        Buffer.from(chunk.subarray(0, SNIFF_BYTES - this.#head.length)),
      ]);
    }
  }

  async #writeAll(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const handle = await this.#handle;
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
