/**
 * The put of an `r2Store` whose size is declared but whose sha-256 is not, from a web stream (a
 * Worker's `request.body`): one R2 `put` of a `FixedLengthStream` of the declared size, fed with the
 * source read in large chunks and hashed on the way. A request body is read 1 MiB at a time with a
 * BYOB reader, into two buffers in turn (a chunk's buffer is read into again once R2 has taken it).
 * Reading a request body in its own small chunks costs more than the put; 1 MiB reads cost almost
 * nothing, and a stream fed 1 MiB at a time reaches R2 about as fast as a request body. At most two
 * chunks are held. A byte more or less than declared stops the put and leaves nothing; the record
 * is written by the caller only once the put has ended.
 */
import { createHash } from "node:crypto";
import type { FileBridgeError } from "../errors/file-bridge-error.js";
import { type ChunkReads, largeChunks } from "../internal/web-chunks.js";
import { finalError } from "../storage/kit/put-meter.js";
import { PUT_HEAD_BYTES, type PutMeasure, type PutPlan } from "../storage/kit/put-plan.js";
import { toPutError } from "../storage/kit/put-source.js";
import type { PutSource } from "../storage/types.js";
import type { R2BucketBinding } from "./bindings.js";
import { nativePutAvailable } from "./r2-native-put.js";

const MiB = 1024 * 1024;
/** R2's largest single `put` (5 GiB less 5 MiB); a larger file goes up in parts. */
export const MAX_SINGLE_PUT = 5 * 1024 * MiB - 5 * MiB;
/** Bytes read from the source at a time. */
const READ_BYTES = MiB;

/** workerd's `FixedLengthStream` (checked present by {@link nativePutAvailable}). */
type FixedLengthStreamClass = new (length: number) => { readable: ReadableStream; writable: WritableStream };

/**
 * Whether a put can go as one hashed single put: a web stream of a declared size (at most R2's
 * single-put limit) with no declared sha-256, on workerd.
 *
 * @example
 * ```ts
 * if (hashedPutFits(source, plan)) return hashedPut(bucket, key, source, plan, storageError);
 * ```
 */
export function hashedPutFits(source: PutSource, plan: PutPlan): source is ReadableStream<Uint8Array> {
  return (
    plan.expectedSha256 === undefined &&
    plan.expectedSize !== undefined &&
    plan.expectedSize > 0 &&
    plan.expectedSize <= MAX_SINGLE_PUT &&
    typeof (source as ReadableStream).getReader === "function" &&
    nativePutAvailable()
  );
}

/**
 * Stores `source` under `key` as one put of `plan.expectedSize` bytes, hashing them on the way.
 * Nothing is left after a failure: a byte more or less than declared is `DIGEST_MISMATCH` (as the
 * streamed put's meter answers), an abort `ABORTED`, a failing R2 `STORAGE_ERROR`; a failing
 * source's own `FileBridgeError` comes through as it is.
 *
 * @example
 * ```ts
 * const measure = await hashedPut(bucket, key, request.body, plan, storageError);
 * ```
 */
export async function hashedPut(
  bucket: R2BucketBinding,
  key: string,
  source: ReadableStream<Uint8Array>,
  plan: PutPlan,
  error: (action: string, cause: unknown) => FileBridgeError,
): Promise<PutMeasure> {
  const size = plan.expectedSize as number;
  // The source is locked before R2's put starts: one that cannot be read (already locked) fails
  // as with any other store, and leaves no put waiting for bytes.
  let next: ChunkReads;
  try {
    next = largeChunks(source, READ_BYTES);
  } catch (cause) {
    throw toPutError(cause, plan.signal);
  }
  const Fixed = (globalThis as unknown as { FixedLengthStream: FixedLengthStreamClass }).FixedLengthStream;
  const fixed = new Fixed(size);
  const writer = fixed.writable.getWriter();
  const putting = bucket.put(key, fixed.readable);
  // Observed below; a put that fails early must not be an unhandled rejection meanwhile.
  const put = putting.then(
    (object) => ({ object, failure: undefined }),
    (failure: unknown) => ({ object: null, failure: failure ?? new Error("the put failed") }),
  );
  // A write waits for R2 to read it: a put that fails without reading must end the wait.
  const putFailed = put.then(({ failure }) =>
    failure === undefined ? new Promise<never>(() => {}) : Promise.reject(failure),
  );
  putFailed.catch(() => {});
  // Nor may an abort (the route's timeout) wait for a write R2 is slow to take.
  const signal = plan.signal;
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal?.reason ?? new Error("aborted"));
  });
  aborted.catch(() => {});
  const untilPutFails = (step: Promise<void>) => Promise.race([step, putFailed, aborted]);
  const hash = createHash("sha256");
  const head = new Uint8Array(Math.min(PUT_HEAD_BYTES, size));
  let total = 0;
  // The write R2 is taking in while the next chunk is read, and its chunk: once R2 has taken it,
  // its buffer goes back to the reads.
  let writing: Promise<void> = Promise.resolve();
  let written: Uint8Array | undefined;
  const stop = () => {
    onAbort();
    void next.cancel(signal?.reason);
  };
  signal?.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      if (plan.signal?.aborted) throw plan.signal.reason ?? new Error("aborted");
      const chunk = await next.read();
      if (plan.signal?.aborted) throw plan.signal.reason ?? new Error("aborted");
      if (chunk === undefined) break;
      if (total + chunk.byteLength > size) throw finalError(plan, total + chunk.byteLength, "");
      if (total < head.byteLength) head.set(chunk.subarray(0, head.byteLength - total), total);
      total += chunk.byteLength;
      hash.update(chunk);
      await untilPutFails(writing);
      if (written) next.release(written);
      written = chunk;
      writing = writer.write(chunk);
      writing.catch(() => {});
    }
    if (total !== size) throw finalError(plan, total, "");
    await untilPutFails(writing);
    await untilPutFails(writer.close());
    const { object, failure } = await Promise.race([put, aborted]);
    if (failure !== undefined) throw error("store the file", failure);
    if (plan.signal?.aborted) throw plan.signal.reason ?? new Error("aborted");
    if (object?.size !== size) throw finalError(plan, object?.size ?? 0, "");
  } catch (cause) {
    await next.cancel(cause);
    // Not awaited: an abort waits for a write R2 may never read. R2's put cannot be cancelled; it
    // fails on the aborted stream (a readable R2 left unread is cancelled); whatever it stored goes
    // once it settles. An abort does not wait for that (R2 may be slow to take the stream): the
    // removal then runs when the put settles, as the declared-digest put's does.
    writer.abort(cause).catch(() => {});
    if (!fixed.readable.locked) await fixed.readable.cancel(cause).catch(() => {});
    const removed = put.then(() => bucket.delete(key)).catch(() => {});
    if (!signal?.aborted) await removed;
    throw toPutError(cause, signal);
  } finally {
    signal?.removeEventListener("abort", stop);
  }
  return { size, sha256: hash.digest("hex"), head };
}
