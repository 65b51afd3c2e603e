/**
 * The put's plan: options validated before the first byte arrives, and the record of a finished put.
 * The streaming half (meter, sources, errors) is in `put-pipeline.ts`.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { durationToMs } from "../../internal/duration.js";
import { sanitizeRelativePath } from "../../internal/file-name.js";
import { newId } from "../../internal/ids.js";
import { CONTENT_SNIFF_BYTES, contentMediaType } from "../../media/content-type.js";
import { chooseMediaType, parseMediaType } from "../../media/media-type.js";
import { assertScope } from "../../scope/scope.js";
import type { FileKind, PutOptions, StoredFile } from "../types.js";
import { isSafeNonNegativeInteger } from "./byte-range.js";

/** The kinds a stored file may have. */
export const KINDS: ReadonlySet<FileKind> = new Set(["upload", "artifact", "file"]);
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
  /** Whether the stored type is checked against the first bytes (`PutOptions.typeFromBytes`). */
  readonly typeFromBytes: boolean;
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
  if (options.typeFromBytes !== undefined && typeof options.typeFromBytes !== "boolean") {
    throw new FileBridgeError("INVALID_OPTION", "typeFromBytes must be a boolean");
  }
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
    typeFromBytes: options.typeFromBytes === true,
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
  /** The first bytes (at most `PUT_HEAD_BYTES`, 4 KiB), for media-type sniffing. */
  readonly head: Uint8Array;
}

/**
 * How many leading bytes a put keeps for its media type (the content check's sample); the rest of
 * the file streams on without being held.
 *
 * @example
 * ```ts
 * const head = Buffer.alloc(PUT_HEAD_BYTES); // what an adopted file's first read fills
 * ```
 */
export const PUT_HEAD_BYTES = CONTENT_SNIFF_BYTES;

/**
 * The stored media type: the declared one (else the name's, else the first bytes'), and with
 * `typeFromBytes` what the first bytes show where the check can tell (parameters of the declared
 * type kept when the bytes agree with it).
 */
function storedMediaType(plan: PutPlan, head: Uint8Array): string {
  const chosen = chooseMediaType(plan.declaredMimeType, plan.name, head);
  if (!plan.typeFromBytes) return chosen;
  const actual = contentMediaType(head, chosen);
  return actual === parseMediaType(chosen)?.essence ? chosen : actual;
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
    mimeType: storedMediaType(plan, measure.head),
    size: measure.size,
    sha256: measure.sha256,
    createdAt: plan.createdAt,
    kind: plan.kind,
  };
  if (plan.expiresAt !== undefined) file.expiresAt = plan.expiresAt;
  if (plan.metadata !== undefined) file.metadata = plan.metadata;
  return Object.freeze(file);
}
