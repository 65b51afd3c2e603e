/**
 * The put pipeline: a source (`put-source.ts`) through a meter (`put-meter.ts`) into a sink, or
 * straight into a file whose writer does the meter's checks, with the plan's signal; what was
 * measured comes back once the sink has finished.
 */
import type { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { PutSource } from "../types.js";
import type { FileSha256 } from "./file-sha256.js";
import { FileSink } from "./file-sink.js";
import { finalError, PutMeter, PutTally } from "./put-meter.js";
import type { PutMeasure, PutPlan } from "./put-plan.js";
import { toPutError, toReadable } from "./put-source.js";
import type { StreamLimits } from "./quota.js";

/** `source` as a stream; a source that cannot be one destroys `sink` and fails as the put's error. */
function readableOrDestroy(source: PutSource, sink: Writable, plan: PutPlan): Readable {
  try {
    return toReadable(source);
  } catch (error) {
    sink.destroy();
    throw toPutError(error, plan.signal);
  }
}

/**
 * Streams `source` through a {@link PutMeter} into `sink`, honouring the plan's signal. Resolves
 * with what was measured once the sink has finished; rejects with a `FileBridgeError` (see
 * {@link toPutError}). `limits` adds driver-known caps (see {@link StreamLimits}). The caller owns
 * cleanup of whatever the sink wrote.
 *
 * @example
 * ```ts
 * const plan = planPut(options, now());
 * const sink = createWriteStream(stagingPath, { flags: "wx" });
 * try {
 *   const file = storedFileOf(plan, await streamPut(source, plan, sink));
 *   await rename(stagingPath, finalPath); // commit only after every check passed
 *   return file;
 * } catch (error) {
 *   await rm(stagingPath, { force: true }); // nothing partial is left
 *   throw error;
 * }
 * ```
 */
export async function streamPut(
  source: PutSource,
  plan: PutPlan,
  sink: Writable,
  limits?: StreamLimits,
): Promise<PutMeasure> {
  const meter = new PutMeter(plan, limits);
  const readable = readableOrDestroy(source, sink, plan);
  try {
    await pipeline(readable, meter, sink, plan.signal ? { signal: plan.signal } : {});
  } catch (error) {
    throw toPutError(error, plan.signal);
  }
  return { size: meter.size, sha256: meter.sha256, head: meter.head };
}

/** The error `stream.pipeline` fails with when a stream closes before its end. */
function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

/**
 * `readable` written into `sink` until `sink` has finished: what `pipeline(readable, sink, { signal })`
 * does for two streams (back-pressure, the first error or early close of either, or the signal,
 * destroys both and rejects), with one listener per event it needs and nothing else. Everything a
 * put's wiring makes at its start lives until the put ends, so V8 promotes it during a big upload;
 * `stream.pipeline` made an `AbortController`, an end-of-stream watcher per stream and `pipe`'s
 * state, 13 listeners on the source and 16 on the sink (docs/performance.md, Session 20). The
 * listeners are bound methods, not closures: esbuild's `keepNames` (the CommonJS build; tsx) gives
 * every named closure its own `name` property, a dictionary-mode object of ~370 bytes instead of ~100.
 */
class SinkPipe {
  readonly promise: Promise<void>;
  #resolve!: () => void;
  #reject!: (error: unknown) => void;
  #settled = false;
  readonly #onData = this.#data.bind(this);
  readonly #onDrain = this.#drain.bind(this);
  readonly #onEnd = this.#end.bind(this);
  readonly #onFinish = this.#settle.bind(this, undefined);
  readonly #onError = this.#settle.bind(this);
  readonly #onReadableClose = this.#readableClose.bind(this);
  readonly #onSinkClose = this.#sinkClose.bind(this);
  readonly #onAbort = this.#abort.bind(this);

  constructor(
    readonly readable: Readable,
    readonly sink: Writable,
    readonly signal: AbortSignal | undefined,
  ) {
    this.promise = new Promise<void>(this.#start.bind(this));
  }

  #start(resolve: () => void, reject: (error: unknown) => void): void {
    this.#resolve = resolve;
    this.#reject = reject;
    const { readable, sink, signal } = this;
    if (signal?.aborted) {
      this.#abort();
      return;
    }
    signal?.addEventListener("abort", this.#onAbort, { once: true });
    readable.on("error", this.#onError);
    readable.on("end", this.#onEnd);
    readable.on("close", this.#onReadableClose);
    sink.on("error", this.#onError);
    sink.on("drain", this.#onDrain);
    sink.on("finish", this.#onFinish);
    sink.on("close", this.#onSinkClose);
    readable.on("data", this.#onData);
    // A source paused before (the store's read-ahead pauses it) flows only when resumed, as `pipe` does.
    readable.resume();
  }

  #data(chunk: unknown): void {
    if (!this.sink.write(chunk)) this.readable.pause();
  }

  #drain(): void {
    this.readable.resume();
  }

  #end(): void {
    this.sink.end();
  }

  #readableClose(): void {
    if (!this.readable.readableEnded) this.#settle(prematureClose());
  }

  #sinkClose(): void {
    if (!this.sink.writableFinished) this.#settle(prematureClose());
  }

  #abort(): void {
    this.#settle(this.signal?.reason ?? prematureClose());
  }

  #settle(error?: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    const { readable, sink } = this;
    readable.off("data", this.#onData);
    readable.off("end", this.#onEnd);
    readable.off("close", this.#onReadableClose);
    sink.off("drain", this.#onDrain);
    sink.off("finish", this.#onFinish);
    sink.off("close", this.#onSinkClose);
    this.signal?.removeEventListener("abort", this.#onAbort);
    // The `error` listeners stay (they do nothing once settled): an error either stream emits
    // later is not an uncaught exception.
    if (error === undefined) {
      this.#resolve();
      return;
    }
    readable.destroy();
    sink.destroy();
    this.#reject(error);
  }
}

/**
 * {@link streamPut} into the file open as `fd` (written from its start by a `FileSink`, closed when
 * the put ends either way), whose progress goes to `fileHash`: the sha256 is taken from the file by
 * the hashing worker as it fills (no copy of the body on the main thread), then checked like a
 * streamed one once every byte is in the file. The sink does the meter's checks itself (`PutTally`),
 * so the source is piped straight into it: no stream in between holds a chunk of its own while a
 * write runs (docs/performance.md, Session 19), by a `SinkPipe`. Disposes `fileHash` on failure.
 *
 * @example
 * ```ts
 * const hash = new FileSha256(path);
 * const measure = await streamPutToFile(source, plan, openSync(path, "wx"), limits, hash);
 * ```
 */
export async function streamPutToFile(
  source: PutSource,
  plan: PutPlan,
  fd: number,
  limits: StreamLimits | undefined,
  fileHash: FileSha256,
): Promise<PutMeasure> {
  const tally = new PutTally(plan, limits, (chunk) => fileHash.update(chunk));
  const sink = new FileSink(
    fd,
    (bytes) => fileHash.written(bytes),
    (chunk) => tally.add(chunk),
  );
  try {
    const readable = readableOrDestroy(source, sink, plan);
    try {
      await new SinkPipe(readable, sink, plan.signal).promise;
      const sha256 = await fileHash.digest(tally.size);
      const failed = finalError(plan, tally.size, sha256);
      if (failed) throw failed;
      return { size: tally.size, sha256, head: tally.head };
    } catch (error) {
      throw toPutError(error, plan.signal);
    }
  } finally {
    fileHash.dispose();
  }
}
