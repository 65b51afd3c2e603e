/**
 * A writable over an open file descriptor that writes from the start of the file with positioned
 * `writev` calls (queued chunks go out together, up to {@link SINK_HIGH_WATER_MARK} bytes) and
 * reports how many bytes the file holds after each write: what lets `FileSha256` hash a file as it
 * fills, off the main thread.
 */
import { close, writev } from "node:fs";
import { Writable } from "node:stream";

/** Bytes queued before the writer waits; queued chunks are written together in one `writev`. */
const SINK_HIGH_WATER_MARK = 1024 * 1024;

/**
 * Writes every chunk to `fd` in order from offset 0, calls `onWritten(total)` once each write is
 * in the file, and closes `fd` when it finishes or is destroyed (like `fs.createWriteStream` with
 * `fd`).
 *
 * @example
 * ```ts
 * const fd = openSync(path, "wx");
 * await pipeline(source, new FileSink(fd, (bytes) => hash.written(bytes)));
 * ```
 */
export class FileSink extends Writable {
  /** Bytes in the file so far. */
  written = 0;
  readonly #fd: number;
  readonly #onWritten: (bytes: number) => void;
  #closed = false;
  /** A write is with the thread pool: closing must wait for it (the fd number could be reused). */
  #busy = false;
  #afterWrite: (() => void) | null = null;

  constructor(fd: number, onWritten: (bytes: number) => void) {
    super({ highWaterMark: SINK_HIGH_WATER_MARK });
    this.#fd = fd;
    this.#onWritten = onWritten;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#writeAll([chunk], callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.#writeAll(
      chunks.map(({ chunk }) => chunk),
      callback,
    );
  }

  /** Writes `buffers` at the current end, again for what a short write left. */
  #writeAll(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    this.#busy = true;
    writev(this.#fd, buffers, this.written, (error, bytes) => {
      this.#busy = false;
      const after = this.#afterWrite;
      if (after) {
        this.#afterWrite = null;
        after();
        return;
      }
      if (error) {
        callback(error);
        return;
      }
      this.written += bytes;
      this.#onWritten(this.written);
      let left = bytes;
      let i = 0;
      while (i < buffers.length && left >= (buffers[i] as Buffer).length)
        left -= (buffers[i++] as Buffer).length;
      if (i === buffers.length) {
        callback();
        return;
      }
      const rest = buffers.slice(i);
      rest[0] = (rest[0] as Buffer).subarray(left);
      this.#writeAll(rest, callback);
    });
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#close(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const close = () => this.#close((closeError) => callback(error ?? closeError));
    if (this.#busy) this.#afterWrite = close;
    else close();
  }

  #close(callback: (error?: Error | null) => void): void {
    if (this.#closed) {
      callback();
      return;
    }
    this.#closed = true;
    close(this.#fd, (error) => callback(error));
  }
}
