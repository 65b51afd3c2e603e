/**
 * The put's measuring stage: the meter that counts, hashes and enforces caps while bytes flow, and
 * the same checks for bytes held whole. Options are validated first by `put-plan.ts`.
 */

import { Transform, type TransformCallback } from "node:stream";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { createHash, oneShotHash } from "../../internal/node-builtins.js";
import { PUT_HEAD_BYTES, type PutMeasure, type PutPlan } from "./put-plan.js";
import type { StreamLimits } from "./quota.js";
import { Sha256Stream } from "./sha256-stream.js";

export type { PutMeasure };

/** Bytes a {@link PutMeter} may hold for a slow sink (bounded memory per put). */
const METER_BUFFER_BYTES = 1024 * 1024;

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
export function finalError(plan: MeterLimits, size: number, sha256: string): FileBridgeError | null {
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

/**
 * The sha256 (hex) of bytes in memory: one `crypto.hash` call, which makes no `Hash` object (about
 * 1 us less than `createHash().update().digest()` for 4 KiB), or the `Hash` object on older Node.
 */
function sha256Hex(bytes: Uint8Array): string {
  const hash = oneShotHash();
  if (hash) return hash("sha256", bytes, "hex");
  return createHash("sha256").update(bytes).digest("hex");
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
  return { size: bytes.byteLength, sha256, head: bytes.slice(0, PUT_HEAD_BYTES) };
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
 * The per-chunk checks of a put without a stream stage: counts bytes, keeps the first bytes for
 * sniffing, enforces the byte cap, the scope quota's cut-off and the declared size on the first chunk
 * that goes over, and hands each accepted chunk to `onBytes`. {@link PutMeter} is this as a
 * `Transform`; a sink that takes the chunks itself (`FileSink`) calls {@link add} from its own write,
 * so no stream sits between the source and the file holding a chunk of its own.
 *
 * @example
 * ```ts
 * const tally = new PutTally(plan, limits);
 * const failed = tally.add(chunk); // a FileBridgeError to fail the put with, or null
 * ```
 */
export class PutTally {
  size = 0;
  readonly #headBytes = Buffer.alloc(PUT_HEAD_BYTES);
  #headLength = 0;

  constructor(
    private readonly plan: MeterLimits,
    private readonly limits?: StreamLimits,
    private readonly onBytes?: (chunk: Uint8Array) => void,
  ) {}

  /** The first bytes seen (at most `PUT_HEAD_BYTES`, 4 KiB). */
  get head(): Uint8Array {
    return this.#headBytes.subarray(0, this.#headLength);
  }

  /**
   * Counts `chunk` in: `INVALID_INPUT` for a chunk that is not bytes, the cap's or the declared
   * size's error when it goes over (nothing counted then), else `null`.
   */
  add(chunk: unknown): FileBridgeError | null {
    if (!(chunk instanceof Uint8Array)) {
      return new FileBridgeError("INVALID_INPUT", "put sources must produce bytes (Uint8Array chunks)");
    }
    const size = this.size + chunk.byteLength;
    const grown = growthError(this.plan, size, this.limits);
    if (grown) return grown;
    if (this.#headLength < PUT_HEAD_BYTES) {
      const take = Math.min(PUT_HEAD_BYTES - this.#headLength, chunk.byteLength);
      this.#headBytes.set(chunk.subarray(0, take), this.#headLength);
      this.#headLength += take;
    }
    this.size = size;
    this.onBytes?.(chunk);
    return null;
  }
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
  sha256 = "";
  private readonly hash: Sha256Stream | null;
  private readonly tally: PutTally;

  /**
   * With `fileHash` (a driver that hashes the file it writes) the meter only hands it each chunk;
   * the digest is taken from the file once the sink has finished, and checked there.
   */
  constructor(
    private readonly plan: MeterLimits,
    limits?: StreamLimits,
    fileHash?: { update(chunk: Uint8Array): void },
  ) {
    // Object mode on the writable side so a stream of non-bytes is refused here with a clear error
    // instead of throwing inside Node's pipe machinery.
    // A 1 MiB readable buffer lets the next chunks be hashed while earlier ones are being written.
    // With `fileHash` the file is hashed, not the chunks: the meter then holds one chunk at a time.
    super(
      fileHash
        ? { writableObjectMode: true, writableHighWaterMark: 1, readableHighWaterMark: 0 }
        : { writableObjectMode: true, readableHighWaterMark: METER_BUFFER_BYTES },
    );
    this.hash = fileHash ? null : new Sha256Stream();
    this.tally = new PutTally(plan, limits, fileHash ? (chunk) => fileHash.update(chunk) : undefined);
  }

  /** Bytes seen so far. */
  get size(): number {
    return this.tally.size;
  }

  /** The first bytes seen (at most `PUT_HEAD_BYTES`, 4 KiB). */
  get head(): Uint8Array {
    return this.tally.head;
  }

  override _transform(chunk: unknown, _encoding: BufferEncoding, callback: TransformCallback): void {
    const failed = this.tally.add(chunk);
    if (failed) {
      callback(failed);
      return;
    }
    const bytes = chunk as Uint8Array;
    if (!this.hash) {
      callback(null, bytes);
      return;
    }
    // A large body is hashed off the main thread; wait only when the worker is behind.
    const behind = this.hash.update(bytes);
    if (!behind) {
      callback(null, bytes);
      return;
    }
    this.push(bytes);
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
