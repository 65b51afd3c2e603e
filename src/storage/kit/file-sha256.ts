/**
 * sha256 of a file while it is being written, with no byte of it copied on the main thread: the
 * first bytes are hashed in place; once a body passes {@link LOCAL_BYTES}, the hashing worker reads
 * the written part of the file itself (from the page cache, in its own thread) as the writer reports
 * progress. The digest is of the bytes the file holds, so it is exactly what was stored.
 */
import type { Hash } from "node:crypto";
import { createHash } from "../../internal/node-builtins.js";
import { type HashWorker, hashWorker } from "./sha256-stream.js";

/** Bodies up to this size are hashed in place on the main thread (no worker round trip). */
const LOCAL_BYTES = 1024 * 1024;
/** The worker hears of written bytes at most once per this many (256 tiny messages per GiB). */
const REPORT_BYTES = 4 * 1024 * 1024;

/**
 * The sha256 of a file as a writer fills it from the start: call {@link update} with each chunk as
 * it is accepted for writing, {@link written} each time the file holds more bytes, then
 * {@link digest} once the writer has finished. Past {@link LOCAL_BYTES} the worker hashes the file
 * (`update` only counts); if no worker can be started the bytes are hashed in place all the way.
 * A failing worker or a file shorter than reported rejects the digest: never a wrong one.
 *
 * @example
 * ```ts
 * const hash = new FileSha256(path);
 * // The file's writer calls written(), its tally update() (see `streamPutToFile`).
 * const measure = await streamPutToFile(source, plan, openSync(path, "wx"), limits, hash);
 * ```
 */
export class FileSha256 {
  readonly #path: string;
  #local: Hash | null = createHash("sha256");
  #seen = 0;
  #worker: HashWorker | null = null;
  #tried = false;
  #id = 0;
  #written = 0;
  #reported = 0;
  #failure: Error | null = null;
  #settle: { resolve(digest: string): void; reject(error: Error): void } | null = null;
  #result: Promise<string> | null = null;

  constructor(path: string) {
    this.#path = path;
  }

  /** A chunk accepted for writing (the caller keeps it; nothing is copied). */
  update(chunk: Uint8Array): void {
    this.#seen += chunk.byteLength;
    if (this.#id !== 0) return;
    this.#local?.update(chunk);
    if (this.#seen > LOCAL_BYTES && !this.#tried) this.#start();
  }

  /**
   * For a file that already holds `bytes` bytes never given to {@link update} (a staged upload
   * resumed in another process): hands the file to the worker at once, which reads them itself. Call
   * before anything else. False when no worker could be started: this hash then cannot cover them.
   */
  startAt(bytes: number): boolean {
    if (this.#seen !== 0 || this.#tried) throw new Error("startAt() comes before any other call");
    this.#seen = bytes;
    this.#written = bytes;
    if (bytes === 0) return true;
    this.#start();
    return this.#id !== 0;
  }

  /** The file now holds its first `bytes` bytes. */
  written(bytes: number): void {
    this.#written = bytes;
    if (this.#id !== 0 && bytes - this.#reported >= REPORT_BYTES) this.#report(false);
  }

  /** The hex sha256 of the file's first `size` bytes (every byte written). Call once, at the end. */
  digest(size: number): Promise<string> {
    if (this.#result) return this.#result;
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#id === 0) {
      const local = this.#local;
      this.#local = null;
      if (!local || this.#seen !== size) {
        return Promise.reject(new Error(`the sha256 covers ${this.#seen} bytes, not ${size}`));
      }
      return Promise.resolve(local.digest("hex"));
    }
    this.#result = new Promise<string>((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    this.#written = size;
    this.#report(true);
    return this.#result;
  }

  /** Drops a hash that will not be finished (a failed put), freeing its worker job. */
  dispose(): void {
    this.#local = null;
    if (this.#id !== 0 && !this.#result) {
      this.#worker?.post(this.#id, { file: true, cancel: true });
      this.#id = 0;
    }
  }

  #report(end: boolean): void {
    this.#reported = this.#written;
    this.#worker?.post(
      this.#id,
      end ? { file: true, upTo: this.#written, end: true } : { file: true, upTo: this.#written },
    );
  }

  /** Hands the file to the worker (which reads it from the start), or keeps hashing in place. */
  #start(): void {
    this.#tried = true;
    let worker: HashWorker;
    let id: number;
    try {
      worker = hashWorker();
      id = worker.open({
        onDigest: (digest) => this.#settle?.resolve(digest),
        onError: (error) => {
          this.#failure = error;
          this.#settle?.reject(error);
        },
      });
    } catch {
      return; // no worker: the local hash goes on
    }
    this.#worker = worker;
    this.#id = id;
    this.#local = null;
    worker.post(id, { file: true, path: this.#path });
    if (this.#written > 0) this.#report(false);
  }
}
