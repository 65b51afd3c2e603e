/**
 * The put's streaming half: any source to a Node stream, the meter that counts, hashes and enforces
 * caps while bytes flow, and the error mapping. Options are validated first by `put-plan.ts`.
 */
import * as nodeCrypto from "node:crypto";
import { createReadStream } from "node:fs";
import { addAbortSignal, Readable, Transform, type TransformCallback, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import { SNIFF_BYTES } from "../../media/media-type.js";
import type { PutSource } from "../types.js";
import type { FileSha256 } from "./file-sha256.js";
import type { PutMeasure, PutPlan } from "./put-plan.js";
import type { StreamLimits } from "./quota.js";
import { Sha256Stream } from "./sha256-stream.js";

export type { PutMeasure };

/** Bytes a {@link PutMeter} may hold for a slow sink (bounded memory per put). */
const METER_BUFFER_BYTES = 1024 * 1024;

function isNodeReadable(value: unknown): value is Readable {
  return (
    value instanceof Readable ||
    (typeof value === "object" &&
      value !== null &&
      typeof (value as Readable).pipe === "function" &&
      typeof (value as Readable).on === "function" &&
      typeof (value as Readable).read === "function")
  );
}

function isWebReadable(value: unknown): value is ReadableStream<Uint8Array> {
  return (
    typeof value === "object" && value !== null && typeof (value as ReadableStream).getReader === "function"
  );
}

/**
 * Turns any {@link PutSource} into a Node `Readable` of bytes without reading it whole: streams pass
 * through, web streams are adapted, async iterables are pulled lazily, `{ path }` is a read stream.
 * An unusable source fails with `INVALID_INPUT`.
 *
 * @example
 * ```ts
 * for await (const chunk of toReadable(source)) sink.write(chunk);
 * ```
 */
export function toReadable(source: PutSource): Readable {
  if (source instanceof Uint8Array) {
    return Readable.from([source], { objectMode: false });
  }
  if (isNodeReadable(source)) return source;
  if (isWebReadable(source)) return Readable.fromWeb(source as import("node:stream/web").ReadableStream);
  if (typeof source === "object" && source !== null) {
    if (Symbol.asyncIterator in source || Symbol.iterator in source) {
      return Readable.from(source as AsyncIterable<Uint8Array>, { objectMode: false });
    }
    const path = (source as { path?: unknown }).path;
    if (typeof path === "string" && path.length > 0 && !path.includes("\0")) {
      return createReadStream(path);
    }
  }
  throw new FileBridgeError(
    "INVALID_INPUT",
    "put source must be a stream, an async iterable of bytes, bytes, or { path }",
  );
}

/** The error for a put that has grown to `size` bytes, or `null` while it is within its limits. */
function growthError(plan: MeterLimits, size: number, limits?: StreamLimits): FileBridgeError | null {
  const { maxBytes, expectedSize } = plan;
  if (maxBytes !== undefined && size > maxBytes) {
    return new FileBridgeError("FILE_TOO_LARGE", `the file exceeds the limit of ${maxBytes} bytes`, {
      data: { limit: maxBytes },
    });
  }
  const scopeQuota = limits?.scopeQuota;
  if (scopeQuota && size > scopeQuota.bytesLeft) {
    return new FileBridgeError("QUOTA_EXCEEDED", `this scope may hold at most ${scopeQuota.limit} bytes`, {
      data: { quota: "bytes", limit: scopeQuota.limit },
    });
  }
  if (expectedSize !== undefined && size > expectedSize) {
    return new FileBridgeError(
      "DIGEST_MISMATCH",
      `the content is larger than the declared ${expectedSize} bytes`,
      {
        data: { expectedSize },
      },
    );
  }
  return null;
}

/** The error for a finished put that does not match its declared size or digest, or `null`. */
function finalError(plan: MeterLimits, size: number, sha256: string): FileBridgeError | null {
  const { expectedSize, expectedSha256 } = plan;
  if (expectedSize !== undefined && size !== expectedSize) {
    return new FileBridgeError(
      "DIGEST_MISMATCH",
      `the content has ${size} bytes, ${expectedSize} were declared`,
      {
        data: { expectedSize, size },
      },
    );
  }
  if (expectedSha256 !== undefined && sha256 !== expectedSha256) {
    return new FileBridgeError("DIGEST_MISMATCH", "the content does not match the declared sha256", {
      data: { expectedSha256 },
    });
  }
  return null;
}

/**
 * The limits a put is measured against: the part of a {@link PutPlan} that bounds and checks bytes.
 *
 * @example
 * ```ts
 * const limits: MeterLimits = { maxBytes: 1024, expectedSize: undefined, expectedSha256: undefined };
 * measureBytes(new TextEncoder().encode("hi"), limits);
 * ```
 */
export type MeterLimits = Pick<PutPlan, "maxBytes" | "expectedSize" | "expectedSha256">;

/** `crypto.hash` where Node has it (20.12 and later); read off the module so older versions load. */
const oneShotHash = (nodeCrypto as { hash?: typeof nodeCrypto.hash }).hash;

/**
 * The sha256 (hex) of bytes in memory: one `crypto.hash` call, which makes no `Hash` object (about
 * 1 us less than `createHash().update().digest()` for 4 KiB), or the `Hash` object on older Node.
 */
function sha256Hex(bytes: Uint8Array): string {
  if (oneShotHash) return oneShotHash("sha256", bytes, "hex");
  return nodeCrypto.createHash("sha256").update(bytes).digest("hex");
}

/**
 * Measures bytes already in memory with the same checks as {@link PutMeter}, without a stream: the
 * fast path for `Uint8Array` sources in drivers that keep bytes in memory.
 *
 * @example
 * ```ts
 * const measure = source instanceof Uint8Array ? measureBytes(source, plan) : await streamPut(source, plan, sink);
 * ```
 */
export function measureBytes(bytes: Uint8Array, plan: MeterLimits, limits?: StreamLimits): PutMeasure {
  const grown = growthError(plan, bytes.byteLength, limits);
  if (grown) throw grown;
  const sha256 = sha256Hex(bytes);
  const failed = finalError(plan, bytes.byteLength, sha256);
  if (failed) throw failed;
  return { size: bytes.byteLength, sha256, head: bytes.slice(0, SNIFF_BYTES) };
}

/**
 * Checks a size and sha256 measured elsewhere (an adopted file, see `FileStore.adopt`) with the
 * same rules as {@link PutMeter}: the byte cap, the scope quota's streaming cut-off, the declared
 * size and digest. Throws the error a streamed put would have failed with.
 *
 * @example
 * ```ts
 * checkMeasured(plan, source.size, source.sha256, await usage.limits(plan));
 * ```
 */
export function checkMeasured(plan: MeterLimits, size: number, sha256: string, limits?: StreamLimits): void {
  const failed = growthError(plan, size, limits) ?? finalError(plan, size, sha256);
  if (failed) throw failed;
}

/**
 * A pass-through that counts bytes, hashes sha256 (off the main thread past 1 MiB, see
 * `Sha256Stream`), keeps the first bytes for sniffing and enforces
 * the byte cap and the declared size *while* the bytes flow: it fails on the first chunk that goes
 * over, so an endless source is cut off at the cap. At the end it checks the declared size and digest.
 *
 * @example
 * ```ts
 * await pipeline(toReadable(source), new PutMeter(plan), createWriteStream(stagingPath));
 * ```
 */
export class PutMeter extends Transform {
  size = 0;
  sha256 = "";
  private readonly hash: Sha256Stream | null;
  private readonly headBytes = Buffer.alloc(SNIFF_BYTES);
  private headLength = 0;

  /**
   * With `fileHash` (a driver that hashes the file it writes, as fsStore does) the meter only hands
   * it each chunk; the digest is taken from the file once the sink has finished, and checked there.
   */
  constructor(
    private readonly plan: MeterLimits,
    private readonly limits?: StreamLimits,
    private readonly fileHash?: { update(chunk: Uint8Array): void },
  ) {
    // Object mode on the writable side so a stream of non-bytes is refused here with a clear error
    // instead of throwing inside Node's pipe machinery.
    // A 1 MiB readable buffer lets the next chunks be hashed while earlier ones are being written.
    super({ writableObjectMode: true, readableHighWaterMark: METER_BUFFER_BYTES });
    this.hash = fileHash ? null : new Sha256Stream();
  }

  /** The first bytes seen (at most {@link SNIFF_BYTES}). */
  get head(): Uint8Array {
    return this.headBytes.subarray(0, this.headLength);
  }

  override _transform(chunk: unknown, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (!(chunk instanceof Uint8Array)) {
      callback(new FileBridgeError("INVALID_INPUT", "put sources must produce bytes (Uint8Array chunks)"));
      return;
    }
    const size = this.size + chunk.byteLength;
    const grown = growthError(this.plan, size, this.limits);
    if (grown) {
      callback(grown);
      return;
    }
    if (this.headLength < SNIFF_BYTES) {
      const take = Math.min(SNIFF_BYTES - this.headLength, chunk.byteLength);
      this.headBytes.set(chunk.subarray(0, take), this.headLength);
      this.headLength += take;
    }
    this.size = size;
    if (!this.hash) {
      this.fileHash?.update(chunk);
      callback(null, chunk);
      return;
    }
    // A large body is hashed off the main thread; wait only when the worker is behind.
    const behind = this.hash.update(chunk);
    if (!behind) {
      callback(null, chunk);
      return;
    }
    this.push(chunk);
    behind.then(() => callback(), callback);
  }

  override _flush(callback: TransformCallback): void {
    if (!this.hash) {
      callback();
      return;
    }
    this.hash.digest().then((sha256) => {
      this.sha256 = sha256;
      callback(finalError(this.plan, this.size, sha256));
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.hash?.dispose();
    callback(error);
  }
}

/**
 * Maps any failure of a put pipeline to a {@link FileBridgeError}: an aborted signal is `ABORTED`,
 * a `FileBridgeError` from the source or the meter stays as it is, anything else is `STORAGE_ERROR`
 * with the original as `cause`.
 *
 * @example
 * ```ts
 * try {
 *   await upload.done();
 * } catch (error) {
 *   throw toPutError(error, plan.signal); // ABORTED, the meter's own error, or STORAGE_ERROR
 * }
 * ```
 */
export function toPutError(error: unknown, signal: AbortSignal | undefined): FileBridgeError {
  if (signal?.aborted) {
    return new FileBridgeError("ABORTED", "the put was aborted", { cause: signal.reason ?? error });
  }
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", "the file could not be stored", { cause: error });
}

/**
 * Streams `source` through a {@link PutMeter} into `sink`, honouring the plan's signal. Resolves
 * with what was measured once the sink has finished; rejects with a {@link FileBridgeError} (see
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
  return runPut(source, plan, sink, limits, undefined);
}

/**
 * {@link streamPut} into a sink that writes a file from its start and reports its progress to
 * `fileHash` (see `FileSink`): the sha256 is taken from the file by the hashing worker as it fills
 * (no copy of the body on the main thread), then checked like a streamed one once the sink has
 * finished. Disposes `fileHash` on failure.
 *
 * @example
 * ```ts
 * const hash = new FileSha256(path);
 * const measure = await streamPutToFile(source, plan, new FileSink(fd, (n) => hash.written(n)), limits, hash);
 * ```
 */
export async function streamPutToFile(
  source: PutSource,
  plan: PutPlan,
  sink: Writable,
  limits: StreamLimits | undefined,
  fileHash: FileSha256,
): Promise<PutMeasure> {
  try {
    return await runPut(source, plan, sink, limits, fileHash);
  } finally {
    fileHash.dispose();
  }
}

async function runPut(
  source: PutSource,
  plan: PutPlan,
  sink: Writable,
  limits: StreamLimits | undefined,
  fileHash: FileSha256 | undefined,
): Promise<PutMeasure> {
  const meter = new PutMeter(plan, limits, fileHash);
  let readable: Readable;
  try {
    readable = toReadable(source);
  } catch (error) {
    sink.destroy();
    throw toPutError(error, plan.signal);
  }
  try {
    await pipeline(readable, meter, sink, plan.signal ? { signal: plan.signal } : {});
    if (fileHash) {
      meter.sha256 = await fileHash.digest(meter.size);
      const failed = finalError(plan, meter.size, meter.sha256);
      if (failed) throw failed;
    }
  } catch (error) {
    throw toPutError(error, plan.signal);
  }
  return { size: meter.size, sha256: meter.sha256, head: meter.head };
}

/**
 * What {@link readSmall} found: the whole source when it ended within the limit, or the bytes read so
 * far and a stream of the whole source (those bytes first, then the rest) to put the long way.
 *
 * @example
 * ```ts
 * const read = await readSmall(source, 64 * 1024, plan.signal);
 * if ("bytes" in read) writeInOneGo(read.bytes);
 * else await streamPut(read.stream, plan, sink);
 * ```
 */
export type SmallRead = { readonly bytes: Uint8Array } | { readonly stream: Readable };

/**
 * Reads a {@link PutSource} until it ends or passes `limit` bytes. A small source comes back whole,
 * so a driver can measure it with {@link measureBytes} and store it in one write instead of a
 * stream pipeline; a larger one comes back as a stream that yields every byte read so far and then
 * the rest, so nothing is read twice and memory stays bounded by `limit`. Chunks that are not bytes
 * fail with `INVALID_INPUT`, an aborted signal with `ABORTED`, like {@link streamPut}.
 *
 * @example
 * ```ts
 * const read = await readSmall(source, SMALL_PUT_BYTES, plan.signal);
 * const measure = "bytes" in read ? measureBytes(read.bytes, plan) : await streamPut(read.stream, plan, sink);
 * ```
 */
export async function readSmall(source: PutSource, limit: number, signal?: AbortSignal): Promise<SmallRead> {
  if (source instanceof Uint8Array) {
    return source.byteLength <= limit ? { bytes: source } : { stream: toReadable(source) };
  }
  let readable: Readable;
  try {
    readable = toReadable(source);
  } catch (error) {
    throw toPutError(error, signal);
  }
  if (signal) addAbortSignal(signal, readable);
  return readAhead(readable, limit, signal);
}

/**
 * Reads `readable` until it ends (the bytes come back whole) or passes `limit` bytes: then it is
 * paused, the chunks read are put back in front of it (`unshift`), and the stream itself comes back,
 * so the long way adds no stream of its own between the source and the sink.
 */
function readAhead(readable: Readable, limit: number, signal: AbortSignal | undefined): Promise<SmallRead> {
  return new Promise<SmallRead>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const stop = () => {
      readable.off("data", onData);
      readable.off("end", onEnd);
      readable.off("error", onError);
      readable.off("close", onClose);
    };
    const fail = (error: unknown) => {
      stop();
      readable.destroy();
      reject(toPutError(error, signal));
    };
    const onData = (chunk: unknown) => {
      if (!(chunk instanceof Uint8Array)) {
        fail(new FileBridgeError("INVALID_INPUT", "put sources must produce bytes (Uint8Array chunks)"));
        return;
      }
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size <= limit) return;
      readable.pause();
      stop();
      for (let i = chunks.length - 1; i >= 0; i--) readable.unshift(chunks[i]);
      resolve({ stream: readable });
    };
    const onEnd = () => {
      stop();
      resolve({ bytes: chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size) });
    };
    const onError = (error: Error) => fail(error);
    const onClose = () =>
      fail(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    readable.on("error", onError);
    readable.on("end", onEnd);
    readable.on("close", onClose);
    readable.on("data", onData);
  });
}
