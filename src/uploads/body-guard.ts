/**
 * The stream a raw upload body is handed to the store as: the body's chunks, without the store's
 * failure reaching the socket and without a buffer of its own.
 */
import { Readable } from "node:stream";

/**
 * A request body as the store's source. The store destroys its source when a put fails; this stream
 * then only lets go of the body (stops listening, pauses it) instead of destroying it, so the client
 * still gets its answer (a 413, a 400). It replaces `body.pipe(new PassThrough())`: a
 * `PassThrough` held up to three 64 KiB socket chunks of its own whenever the file's writer made the
 * body wait, and every chunk alive when V8 runs a scavenge is promoted to the old generation, where
 * only a full collection frees it (docs/performance.md, Session 19). This one passes each chunk on
 * as it comes and holds at most the one that came while its reader was waiting; the body is paused
 * then, as `pipe` pauses it.
 *
 * @example
 * ```ts
 * const staged = await store.stage(new BodyGuard(req), { scope, name: "upload.bin" });
 * ```
 */
export class BodyGuard extends Readable {
  readonly #body: Readable;
  readonly #measure: ((chunk: Buffer) => Error | null) | undefined;
  #released = false;

  /**
   * @param measure - Sees each chunk before it is passed on (a tus body's count, cap and checksum);
   *   an error it returns destroys the guard with it, and that chunk is not passed on.
   */
  constructor(body: Readable, measure?: (chunk: Buffer) => Error | null) {
    super({ highWaterMark: 0 });
    this.#body = body;
    this.#measure = measure;
    body.on("data", this.#onData);
    body.once("end", this.#onEnd);
  }

  /**
   * Ends the stream with what the body still buffers, for a body whose client went away (the bytes
   * that arrived count); `false` when it had ended or been destroyed already.
   *
   * @example
   * ```ts
   * request.once("aborted", () => guard.finish());
   * ```
   */
  finish(): boolean {
    if (this.#released || this.destroyed) return false;
    this.#release();
    for (
      let chunk = this.#body.read() as Buffer | null;
      chunk !== null;
      chunk = this.#body.read() as Buffer | null
    ) {
      if (!this.#pass(chunk)) return true;
      this.push(chunk);
    }
    this.push(null);
    return true;
  }

  override _read(): void {
    if (!this.#released) this.#body.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#release();
    this.#body.pause();
    callback(error);
  }

  // Bound methods, not arrow functions: esbuild's `keepNames` (the CommonJS build) gives every named
  // closure its own `name`, a dictionary-mode object of ~370 bytes (docs/performance.md, Session 20).
  readonly #onData = this.#data.bind(this);
  readonly #onEnd = this.#end.bind(this);

  #data(chunk: Buffer): void {
    if (this.#pass(chunk) && !this.push(chunk)) this.#body.pause();
  }

  /** Whether `chunk` passed the check (else the guard is destroyed with its error). */
  #pass(chunk: Buffer): boolean {
    const refused = this.#measure?.(chunk);
    if (!refused) return true;
    this.destroy(refused);
    return false;
  }

  #end(): void {
    this.#release();
    this.push(null);
  }

  #release(): void {
    this.#released = true;
    this.#body.off("data", this.#onData);
    this.#body.off("end", this.#onEnd);
  }
}
