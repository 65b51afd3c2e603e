import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { Readable, Transform, type TransformCallback, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import { durationToMs } from "../../internal/duration.js";
import { sanitizeRelativePath } from "../../internal/file-name.js";
import { newId } from "../../internal/ids.js";
import { chooseMediaType, SNIFF_BYTES } from "../../media/media-type.js";
import { assertScope } from "../../scope/scope.js";
import type { FileKind, PutOptions, PutSource, StoredFile } from "../types.js";
import type { StreamLimits } from "./quota.js";

const KINDS: ReadonlySet<FileKind> = new Set(["upload", "artifact", "file"]);
const SHA256_HEX = /^[0-9a-f]{64}$/;
/**
 * Most metadata entries kept with one file.
 *
 * @example
 * ```ts
 * planPut({ scope, name, metadata: tooMany }, now); // INVALID_OPTION past MAX_METADATA_ENTRIES
 * ```
 */
export const MAX_METADATA_ENTRIES = 64;
/**
 * Longest metadata key or value, in UTF-16 code units.
 *
 * @example
 * ```ts
 * planPut({ scope, name, metadata: { note: "x".repeat(MAX_METADATA_LENGTH + 1) } }, now); // INVALID_OPTION
 * ```
 */
export const MAX_METADATA_LENGTH = 1024;

/** Bytes a {@link PutMeter} may hold for a slow sink (bounded memory per put). */
const METER_BUFFER_BYTES = 1024 * 1024;

/**
 * Everything about a put that is known before the first byte arrives.
 *
 * @example
 * ```ts
 * const plan: PutPlan = planPut({ scope: "s1", name: "report.pdf", maxBytes: 1 << 20 }, Date.now());
 * plan.id; // the random id the driver stores the bytes under
 * ```
 */
export interface PutPlan {
  readonly id: string;
  readonly scope: string;
  readonly name: string;
  readonly declaredMimeType: string | undefined;
  readonly kind: FileKind;
  readonly createdAt: number;
  readonly expiresAt: number | undefined;
  readonly maxBytes: number | undefined;
  readonly expectedSha256: string | undefined;
  readonly expectedSize: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly metadata: Readonly<Record<string, string>> | undefined;
}

/**
 * What streaming measured.
 *
 * @example
 * ```ts
 * const measure: PutMeasure = await streamPut(source, plan, sink);
 * console.log(measure.size, measure.sha256);
 * ```
 */
export interface PutMeasure {
  readonly size: number;
  readonly sha256: string;
  /** The first few bytes, for media-type sniffing. */
  readonly head: Uint8Array;
}

function isSafeNonNegativeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Validates put options and fixes the id, name, kind and times. Throws `INVALID_INPUT` for a bad
 * scope or bad declared size/digest, `INVALID_OPTION` (naming the option) for a bad cap, kind, TTL or
 * metadata, and `ABORTED` if the signal already fired.
 *
 * @example
 * ```ts
 * const plan = planPut(options, now()); // validate first: nothing is written for bad options
 * ```
 */
export function planPut(options: PutOptions, now: number): PutPlan {
  if (typeof options !== "object" || options === null) {
    throw new FileBridgeError("INVALID_OPTION", "put options must be an object");
  }
  assertScope(options.scope);
  const name = sanitizeRelativePath(options.name);
  const kind = options.kind ?? "file";
  if (!KINDS.has(kind)) {
    throw new FileBridgeError("INVALID_OPTION", `kind must be "upload", "artifact" or "file"`);
  }
  if (options.maxBytes !== undefined && !isSafeNonNegativeInteger(options.maxBytes)) {
    throw new FileBridgeError("INVALID_OPTION", "maxBytes must be a non-negative integer");
  }
  const expectedSha256 = options.expectedSha256;
  if (
    expectedSha256 !== undefined &&
    (typeof expectedSha256 !== "string" || !SHA256_HEX.test(expectedSha256))
  ) {
    throw new FileBridgeError("INVALID_INPUT", "expectedSha256 must be 64 lower-case hex characters");
  }
  if (options.expectedSize !== undefined && !isSafeNonNegativeInteger(options.expectedSize)) {
    throw new FileBridgeError("INVALID_INPUT", "expectedSize must be a non-negative integer");
  }
  if (
    options.expectedSize !== undefined &&
    options.maxBytes !== undefined &&
    options.expectedSize > options.maxBytes
  ) {
    throw new FileBridgeError(
      "FILE_TOO_LARGE",
      `declared size exceeds the limit of ${options.maxBytes} bytes`,
      {
        data: { limit: options.maxBytes },
      },
    );
  }
  const expiresAt = options.ttl === undefined ? undefined : now + durationToMs(options.ttl, "ttl");
  const metadata = checkMetadata(options.metadata);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new FileBridgeError("INVALID_OPTION", "signal must be an AbortSignal");
  }
  if (options.signal?.aborted) {
    throw new FileBridgeError("ABORTED", "the put was aborted before it started", {
      cause: options.signal.reason,
    });
  }
  return {
    id: newId(now),
    scope: options.scope,
    name,
    declaredMimeType: options.mimeType,
    kind,
    createdAt: now,
    expiresAt,
    maxBytes: options.maxBytes,
    expectedSha256,
    expectedSize: options.expectedSize,
    signal: options.signal,
    metadata,
  };
}

function checkMetadata(input: unknown): Readonly<Record<string, string>> | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new FileBridgeError("INVALID_OPTION", "metadata must be an object of strings");
  }
  const entries = Object.entries(input);
  if (entries.length > MAX_METADATA_ENTRIES) {
    throw new FileBridgeError("INVALID_OPTION", `metadata must have at most ${MAX_METADATA_ENTRIES} entries`);
  }
  const copy: Record<string, string> = Object.create(null);
  for (const [key, value] of entries) {
    if (typeof value !== "string" || key.length > MAX_METADATA_LENGTH || value.length > MAX_METADATA_LENGTH) {
      throw new FileBridgeError(
        "INVALID_OPTION",
        `metadata values must be strings of at most ${MAX_METADATA_LENGTH} characters`,
      );
    }
    copy[key] = value;
  }
  return Object.freeze({ ...copy });
}

/**
 * Builds the frozen metadata record of a finished put.
 *
 * @example
 * ```ts
 * const measure = await streamPut(source, plan, sink);
 * const file = storedFileOf(plan, measure); // then commit the staged bytes and return `file`
 * ```
 */
export function storedFileOf(plan: PutPlan, measure: PutMeasure): StoredFile {
  const file: {
    -readonly [K in keyof StoredFile]: StoredFile[K];
  } = {
    id: plan.id,
    scope: plan.scope,
    name: plan.name,
    mimeType: chooseMediaType(plan.declaredMimeType, plan.name, measure.head),
    size: measure.size,
    sha256: measure.sha256,
    createdAt: plan.createdAt,
    kind: plan.kind,
  };
  if (plan.expiresAt !== undefined) file.expiresAt = plan.expiresAt;
  if (plan.metadata !== undefined) file.metadata = plan.metadata;
  return Object.freeze(file);
}

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

/**
 * Measures bytes already in memory with the same checks as {@link PutMeter}, without a stream: the
 * fast path for `Uint8Array` sources in drivers that keep bytes in memory.
 *
 * @example
 * ```ts
 * const measure = source instanceof Uint8Array ? measureBytes(source, plan) : await streamPut(source, plan, sink);
 * ```
 */
export function measureBytes(bytes: Uint8Array, plan: MeterLimits): PutMeasure {
  const grown = growthError(plan, bytes.byteLength);
  if (grown) throw grown;
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const failed = finalError(plan, bytes.byteLength, sha256);
  if (failed) throw failed;
  return { size: bytes.byteLength, sha256, head: bytes.slice(0, SNIFF_BYTES) };
}

/**
 * A pass-through that counts bytes, hashes sha256, keeps the first bytes for sniffing and enforces
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
  private readonly hash: Hash = createHash("sha256");
  private readonly headBytes = Buffer.alloc(SNIFF_BYTES);
  private headLength = 0;

  constructor(
    private readonly plan: MeterLimits,
    private readonly limits?: StreamLimits,
  ) {
    // Object mode on the writable side so a stream of non-bytes is refused here with a clear error
    // instead of throwing inside Node's pipe machinery.
    // A 1 MiB readable buffer lets the next chunks be hashed while earlier ones are being written.
    super({ writableObjectMode: true, readableHighWaterMark: METER_BUFFER_BYTES });
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
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.sha256 = this.hash.digest("hex");
    callback(finalError(this.plan, this.size, this.sha256));
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
  const meter = new PutMeter(plan, limits);
  let readable: Readable;
  try {
    readable = toReadable(source);
  } catch (error) {
    sink.destroy();
    throw toPutError(error, plan.signal);
  }
  try {
    await pipeline(readable, meter, sink, plan.signal ? { signal: plan.signal } : {});
  } catch (error) {
    throw toPutError(error, plan.signal);
  }
  return { size: meter.size, sha256: meter.sha256, head: meter.head };
}

/**
 * True when a file with this expiry is gone at `now`.
 *
 * @example
 * ```ts
 * return file && !isExpired(file, now()) ? file : null;
 * ```
 */
export function isExpired(file: Pick<StoredFile, "expiresAt">, now: number): boolean {
  return file.expiresAt !== undefined && file.expiresAt <= now;
}

/**
 * Most files one list page returns.
 *
 * @example
 * ```ts
 * listLimit(5000) === MAX_LIST_LIMIT; // true: larger pages are clamped
 * ```
 */
export const MAX_LIST_LIMIT = 1000;
/**
 * Page size when none is given.
 *
 * @example
 * ```ts
 * listLimit(undefined) === DEFAULT_LIST_LIMIT; // true
 * ```
 */
export const DEFAULT_LIST_LIMIT = 100;

/**
 * Validates a list limit: a positive integer; larger than {@link MAX_LIST_LIMIT} is clamped.
 *
 * @example
 * ```ts
 * const limit = listLimit(options.limit); // INVALID_INPUT for 0, -1 or 2.5
 * ```
 */
export function listLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw new FileBridgeError("INVALID_INPUT", "limit must be a positive integer");
  }
  return Math.min(limit, MAX_LIST_LIMIT);
}

/**
 * Validates a list kind filter.
 *
 * @example
 * ```ts
 * const kind = listKind(options.kind); // "upload" | "artifact" | "file" | undefined
 * ```
 */
export function listKind(kind: unknown): FileKind | undefined {
  if (kind === undefined) return undefined;
  if (!KINDS.has(kind as FileKind)) {
    throw new FileBridgeError("INVALID_INPUT", `kind must be "upload", "artifact" or "file"`);
  }
  return kind as FileKind;
}

/**
 * The opaque cursor for "after this id".
 *
 * @example
 * ```ts
 * return { files, nextCursor: encodeCursor(files[files.length - 1].id) };
 * ```
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`v1:${lastId}`, "utf8").toString("base64url");
}

/**
 * The id a cursor made by {@link encodeCursor} points after; `INVALID_CURSOR` otherwise.
 *
 * @example
 * ```ts
 * const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
 * ```
 */
export function decodeCursor(cursor: unknown): string {
  if (
    typeof cursor !== "string" ||
    cursor.length === 0 ||
    cursor.length > 64 ||
    !/^[A-Za-z0-9_-]+$/.test(cursor)
  ) {
    throw new FileBridgeError("INVALID_CURSOR", "the list cursor is not valid");
  }
  const decoded = Buffer.from(cursor, "base64url").toString("utf8");
  const id = decoded.startsWith("v1:") ? decoded.slice(3) : "";
  if (!/^[0-9a-hjkmnp-tv-z]{26}$/.test(id) || encodeCursor(id) !== cursor) {
    throw new FileBridgeError("INVALID_CURSOR", "the list cursor is not valid");
  }
  return id;
}

/**
 * Index of the first element of sorted `ids` that is greater than `id` (binary search).
 *
 * @example
 * ```ts
 * const start = after === undefined ? 0 : upperBound(sortedIds, after);
 * ```
 */
export function upperBound(ids: readonly string[], id: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((ids[mid] as string) <= id) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * Validates a byte range against a size; returns inclusive `[start, end]`.
 *
 * @example
 * ```ts
 * const { start, end } = resolveRange(range, file.size) ?? { start: 0, end: file.size - 1 };
 * ```
 */
export function resolveRange(
  range: { start: number; end?: number } | undefined,
  size: number,
): { start: number; end: number } | null {
  if (range === undefined) return null;
  const { start, end } = typeof range === "object" && range !== null ? range : { start: -1, end: undefined };
  const bad =
    !isSafeNonNegativeInteger(start) ||
    (end !== undefined && !isSafeNonNegativeInteger(end)) ||
    start >= size ||
    (end !== undefined && end < start);
  if (bad) {
    throw new FileBridgeError("RANGE_NOT_SATISFIABLE", "the byte range is outside the file", {
      data: { size },
    });
  }
  return { start, end: Math.min(end ?? size - 1, size - 1) };
}

/**
 * An `unref`'d interval that does not keep the process alive; `null` when `ms` is 0/undefined.
 *
 * @example
 * ```ts
 * const timer = unrefInterval(sweepMs, sweep); // never keeps the process alive
 * ```
 */
export function unrefInterval(ms: number | undefined, task: () => unknown): NodeJS.Timeout | null {
  if (!ms) return null;
  const timer = setInterval(() => {
    Promise.resolve()
      .then(task)
      .catch(() => {});
  }, ms);
  timer.unref();
  return timer;
}
