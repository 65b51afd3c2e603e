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

  constructor(body: Readable) {
    super({ highWaterMark: 0 });
    this.#body = body;
    body.on("data", this.#onData);
    body.once("end", this.#onEnd);
  }

  override _read(): void {
    this.#body.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#release();
    this.#body.pause();
    callback(error);
  }

  // Bound methods, not arrow functions: the build's `keepNames` gives every named closure its own
  // `name`, which makes it a dictionary-mode object of ~370 bytes (docs/performance.md, Session 20).
  readonly #onData = this.#data.bind(this);
  readonly #onEnd = this.#end.bind(this);

  #data(chunk: unknown): void {
    if (!this.push(chunk)) this.#body.pause();
  }

  #end(): void {
    this.#release();
    this.push(null);
  }

  #release(): void {
    this.#body.off("data", this.#onData);
    this.#body.off("end", this.#onEnd);
  }
}
