/**
 * A writable over an open file descriptor that writes from the start of the file with positioned
 * `writev` calls and reports how many bytes the file holds after each write: what lets `FileSha256`
 * hash a file as it fills, off the main thread. Chunks are copied into a few reused slots
 * (`WriteRing`, 256 KiB) and released at once, so no caller buffer stays referenced while a write runs.
 * With a `measure` function it also takes the place of the put's meter (`PutTally`): the chunk a
 * source hands it is the only one the path from the source to the file holds (docs/performance.md,
 * Session 19).
 */
import { close, writev } from "node:fs";
import { Writable } from "node:stream";
import { type RingBatch, WriteRing } from "./write-ring.js";

type Callback = (error?: Error | null) => void;

/**
 * Writes every chunk to `fd` in order from offset 0, calls `onWritten(total)` once each write is
 * in the file, and closes `fd` when it finishes or is destroyed (like `fs.createWriteStream` with
 * `fd`). A chunk's write callback comes as soon as it is copied into the sink's slots (256 KiB in
 * all); the source waits only while every slot is full or being written. A write error fails the
 * next chunk, or the end.
 *
 * With `measure`, every chunk is first passed to it (any value: the sink is in object mode, one chunk
 * at a time) and the error it returns fails the write; nothing of that chunk is written. The sink then
 * accepts one chunk at a time (`write()` returns `false` until it is copied), so a source piped into
 * it waits with at most that one chunk handed over, as the raw `pipeline(req, createWriteStream())`
 * waits with the one it is writing.
 *
 * @example
 * ```ts
 * const fd = openSync(path, "wx");
 * const tally = new PutTally(plan, limits);
 * await pipeline(source, new FileSink(fd, (bytes) => hash.written(bytes), (chunk) => tally.add(chunk)));
 * ```
 */
export class FileSink extends Writable {
  /** Bytes in the file so far. */
  written = 0;
  readonly #fd: number;
  readonly #onWritten: (bytes: number) => void;
  readonly #measure: ((chunk: unknown) => Error | null) | undefined;
  readonly #ring = new WriteRing();
  #closed = false;
  /** A write is with the thread pool: closing must wait for it (the fd number could be reused). */
  #busy = false;
  #afterWrite: (() => void) | null = null;
  /** A chunk not yet copied in full (every slot was taken), with its callback. */
  #pending: { chunk: Uint8Array; at: number; callback: Callback } | null = null;
  /** `_final`'s callback, once every byte is in the file. */
  #finish: Callback | null = null;
  #error: Error | null = null;

  constructor(fd: number, onWritten: (bytes: number) => void, measure?: (chunk: unknown) => Error | null) {
    super(measure ? { objectMode: true, highWaterMark: 1 } : {});
    this.#fd = fd;
    this.#onWritten = onWritten;
    this.#measure = measure;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: Callback): void {
    if (this.#error) {
      callback(this.#error);
      return;
    }
    const refused = this.#measure?.(chunk);
    if (refused) {
      callback(refused);
      return;
    }
    this.#pending = { chunk, at: 0, callback };
    this.#pump();
  }

  override _final(callback: Callback): void {
    if (this.#error) {
      callback(this.#error);
      return;
    }
    this.#finish = callback;
    this.#pump();
  }

  override _destroy(error: Error | null, callback: Callback): void {
    const close = () => this.#close((closeError) => callback(error ?? closeError));
    if (this.#busy) this.#afterWrite = close;
    else close();
  }

  /** Copies what fits of the pending chunk, starts a write when none runs, settles what is done. */
  #pump(): void {
    const pending = this.#pending;
    if (pending) {
      pending.at = this.#ring.copy(pending.chunk, pending.at);
      if (pending.at === pending.chunk.byteLength) this.#pending = null;
    }
    if (!this.#busy && this.#ring.hasBytes) this.#writeBatch(this.#ring.take());
    if (pending && this.#pending === null) pending.callback();
    else if (this.#finish && !this.#busy && !this.#pending && !this.#ring.hasBytes) {
      const finish = this.#finish;
      this.#finish = null;
      this.#close(finish);
    }
  }

  #writeBatch(batch: RingBatch): void {
    this.#writeAll(batch.views, (error) => {
      this.#ring.release(batch.slots);
      if (error) {
        this.#fail(error);
        return;
      }
      this.#pump();
    });
  }

  /** Writes `buffers` at the current end, again for what a short write left. */
  #writeAll(buffers: Buffer[], done: (error?: Error) => void): void {
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
        done(error);
        return;
      }
      this.written += bytes;
      this.#onWritten(this.written);
      let left = bytes;
      let i = 0;
      while (i < buffers.length && left >= (buffers[i] as Buffer).length)
        left -= (buffers[i++] as Buffer).length;
      if (i === buffers.length) {
        done();
        return;
      }
      const rest = buffers.slice(i);
      rest[0] = (rest[0] as Buffer).subarray(left);
      this.#writeAll(rest, done);
    });
  }

  /** A write failed: the pending chunk or the end fails with it, and so does every later chunk. */
  #fail(error: Error): void {
    this.#error = error;
    const pending = this.#pending;
    const finish = this.#finish;
    this.#pending = null;
    this.#finish = null;
    if (pending) pending.callback(error);
    else if (finish) finish(error);
  }

  #close(callback: Callback): void {
    if (this.#closed) {
      callback();
      return;
    }
    this.#closed = true;
    this.#ring.dispose();
    close(this.#fd, (error) => callback(error));
  }
}
