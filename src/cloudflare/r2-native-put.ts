/**
 * The put of an `r2Store` whose size and sha-256 are declared and whose bytes come as a web stream
 * (a Worker's `request.body`): the stream goes to R2 as it is and R2 checks the digest itself
 * (`put(key, body, { sha256 })`). No byte is read in JavaScript. A request body has a known length
 * and goes to R2 directly (its size is checked on the stored object); any other stream (R2 refuses
 * one of unknown length before reading it) goes through a `FixedLengthStream` of the declared size,
 * which fails on a byte more or less. Only the first bytes (the media-type sniff) are read back.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { finalError } from "../storage/kit/put-meter.js";
import { PUT_HEAD_BYTES, type PutMeasure, type PutPlan } from "../storage/kit/put-plan.js";
import { toPutError } from "../storage/kit/put-source.js";
import type { PutSource } from "../storage/types.js";
import type { R2BucketBinding, R2ObjectLike } from "./bindings.js";

/** workerd's `FixedLengthStream`: an identity transform of a known length (absent outside workerd). */
type FixedLengthStreamClass = new (length: number) => { readable: ReadableStream; writable: WritableStream };

const fixedLengthStream = (): FixedLengthStreamClass | undefined =>
  (globalThis as { FixedLengthStream?: FixedLengthStreamClass }).FixedLengthStream;

/** What R2 (and miniflare's simulation of it) answers a put whose sha-256 is not the one given. */
const BAD_DIGEST = /\(10037\)|checksum you specified did not match/i;
/** What a `FixedLengthStream` fails with when it sees more or fewer bytes than its length. */
const WRONG_LENGTH = /FixedLengthStream/;
/** What R2's `put` throws, before reading, for a stream whose length it cannot know. */
const UNKNOWN_LENGTH = /must have a known length/;

/** Why the pipe into a `FixedLengthStream` was stopped when the put failed (not a failure of its own). */
const PUT_FAILED = Symbol("the put failed");

const messageOf = (cause: unknown) => String((cause as Error)?.message ?? cause);

/** The refusal of stored bytes that are not the declared size (as the streamed put's meter answers). */
const wrongSize = (size: number) =>
  new FileBridgeError("DIGEST_MISMATCH", `the content is not the declared ${size} bytes`, {
    data: { expectedSize: size },
  });

/**
 * Whether this runtime can put natively at all (workerd: `FixedLengthStream` is there). Elsewhere an
 * `r2Store` reads the bytes in JavaScript like any other store, so it must not claim `nativeDigest`:
 * the routes would hand it the body with the idle and rate clocks off.
 *
 * @example
 * ```ts
 * const store = { driver: "r2", nativeDigest: nativePutAvailable() };
 * ```
 */
export function nativePutAvailable(): boolean {
  return fixedLengthStream() !== undefined;
}

/**
 * Whether a put can go natively: a web stream with a declared size and sha-256, on workerd.
 *
 * @example
 * ```ts
 * if (nativePutFits(source, plan)) return nativeDigestPut(bucket, key, source, plan, storageError);
 * ```
 */
export function nativePutFits(source: PutSource, plan: PutPlan): source is ReadableStream<Uint8Array> {
  return (
    plan.expectedSha256 !== undefined &&
    plan.expectedSize !== undefined &&
    typeof (source as ReadableStream).getReader === "function" &&
    typeof (source as ReadableStream).pipeTo === "function" &&
    nativePutAvailable()
  );
}

/**
 * Stores `source` under `key` with R2 checking the declared sha-256; nothing is left after a failure.
 * A wrong digest or length is `DIGEST_MISMATCH` (as the streamed put's meter answers), an abort
 * `ABORTED`, a failing source or R2 `STORAGE_ERROR`.
 *
 * @example
 * ```ts
 * const measure = await nativeDigestPut(bucket, key, request.body, plan, storageError);
 * ```
 */
export async function nativeDigestPut(
  bucket: R2BucketBinding,
  key: string,
  source: ReadableStream<Uint8Array>,
  plan: PutPlan,
  error: (action: string, cause: unknown) => FileBridgeError,
): Promise<PutMeasure> {
  const size = plan.expectedSize as number;
  const sha256 = plan.expectedSha256 as string;
  let piped: Promise<unknown> = Promise.resolve(undefined);
  try {
    let object: R2ObjectLike | null;
    try {
      // A request body: straight to R2, no stream in between. R2's put cannot be cancelled and
      // holds the body, so an abort (timeout, client gone) ends the wait at once; whatever the put
      // still stores afterwards is removed when it settles.
      const putting = bucket.put(key, source, { sha256 });
      object = await untilAborted(putting, plan.signal, () => {
        putting.then(() => bucket.delete(key)).catch(() => {});
      });
    } catch (cause) {
      if (!UNKNOWN_LENGTH.test(messageOf(cause)) || source.locked) throw cause;
      const Fixed = fixedLengthStream() as FixedLengthStreamClass;
      const fixed = new Fixed(size);
      // The pipe stops on an abort, and when the put fails: a put that fails without reading the
      // stream to its end would otherwise leave the pipe (and so this put) waiting forever.
      const stop = new AbortController();
      const follow = () => stop.abort(plan.signal?.reason);
      plan.signal?.addEventListener("abort", follow, { once: true });
      // The pipe's own failure (the source's, or the length's) is read once the put has settled.
      piped = source.pipeTo(fixed.writable, { signal: stop.signal }).then(
        () => undefined,
        (failure: unknown) =>
          failure === PUT_FAILED ? undefined : (failure ?? new Error("the source failed")),
      );
      try {
        object = await bucket.put(key, fixed.readable, { sha256 });
      } catch (cause) {
        // A pipe stopped waits for its write in progress, which waits for the readable half to be
        // read: cancelled here when the put left it unread (R2 reads it to its end, or releases it).
        stop.abort(PUT_FAILED);
        if (!fixed.readable.locked) await fixed.readable.cancel(PUT_FAILED).catch(() => {});
        throw cause;
      } finally {
        plan.signal?.removeEventListener("abort", follow);
      }
    }
    const pipeError = await piped;
    if (pipeError !== undefined) throw pipeError;
    if (plan.signal?.aborted) throw plan.signal.reason ?? new Error("aborted");
    if (object?.size !== size) throw wrongSize(size);
  } catch (cause) {
    await bucket.delete(key).catch(() => {});
    const pipeError = await piped;
    if (plan.signal?.aborted) throw toPutError(cause, plan.signal);
    if (cause instanceof FileBridgeError) throw cause;
    if (BAD_DIGEST.test(messageOf(cause))) throw finalError(plan, size, "") as FileBridgeError;
    // The length's failure reaches the put (the readable half) or the pipe (the writable half).
    if (WRONG_LENGTH.test(messageOf(cause)) || WRONG_LENGTH.test(messageOf(pipeError ?? ""))) {
      throw wrongSize(size);
    }
    if (pipeError !== undefined) throw toPutError(pipeError, plan.signal);
    throw error("store the file", cause);
  }
  let head: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  if (size > 0) {
    try {
      const first = await bucket.get(key, { range: { offset: 0, length: Math.min(PUT_HEAD_BYTES, size) } });
      if (first) head = new Uint8Array(await first.arrayBuffer());
    } catch (cause) {
      await bucket.delete(key).catch(() => {});
      throw error("read the file's first bytes", cause);
    }
  }
  return { size, sha256, head };
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts (then `onAbort` runs). */
function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: () => void,
): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(signal.reason ?? new Error("aborted"));
    };
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
