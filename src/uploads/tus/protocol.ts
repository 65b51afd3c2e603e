/**
 * The tus 1.0 wire format: the version and extensions this server speaks, the request headers it
 * parses (`Upload-Length`, `Upload-Offset`, `Upload-Metadata`, `Upload-Concat`, `Upload-Checksum`)
 * and the shape of its answers (every answer carries `Tus-Resumable`; a refusal carries the tus
 * status — 412, 415, 460 — next to the package's JSON error body).
 */
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import type { PlainAnswer, RequestView } from "../../http/request-view.js";

/** The one protocol version this server speaks. */
export const TUS_VERSION = "1.0.0";
/** The extensions, as `OPTIONS` announces them in `Tus-Extension`. */
export const TUS_EXTENSIONS = [
  "creation",
  "creation-with-upload",
  "creation-defer-length",
  "expiration",
  "termination",
  "checksum",
  "concatenation",
].join(",");
/** The `Upload-Checksum` algorithms, as `OPTIONS` announces them in `Tus-Checksum-Algorithm`. */
export const TUS_CHECKSUM_ALGORITHMS = ["sha256", "sha1"] as const;
export type TusChecksumAlgorithm = (typeof TUS_CHECKSUM_ALGORITHMS)[number];
/** The media type of a `PATCH` body. */
export const TUS_PATCH_TYPE = "application/offset+octet-stream";

/** Statuses tus uses that have no package error code of their own. */
export const TUS_STATUS = {
  /** `Tus-Resumable` missing or of another version. */
  preconditionFailed: 412,
  /** A `PATCH` body that is not `application/offset+octet-stream`. */
  unsupportedMediaType: 415,
  /** Another request holds the upload. */
  locked: 423,
  /** `Upload-Checksum` does not match the body. */
  checksumMismatch: 460,
} as const;

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/**
 * A refusal in tus terms: a package error (its `code` is what callers test) answered with the
 * status tus clients expect (`tusStatus`, else the code's own status).
 */
export function tusError(
  code: ConstructorParameters<typeof FileBridgeError>[0],
  message: string,
  tusStatus?: number,
  data: Record<string, unknown> = {},
): FileBridgeError {
  return new FileBridgeError(code, message, {
    data: tusStatus === undefined ? data : { ...data, tusStatus },
  });
}

/** The status a refusal is answered with. */
export function tusStatusOf(error: FileBridgeError): number {
  const status = error.data?.tusStatus;
  if (typeof status === "number") return status;
  // An expired or used ticket is an expired upload; an invalid one is an unknown upload.
  if (error.code === "INVALID_TOKEN") return 404;
  if (error.code === "UPLOAD_IN_PROGRESS") return TUS_STATUS.locked;
  return error.status;
}

/** The headers every tus answer carries. */
export function tusHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { "tus-resumable": TUS_VERSION, "cache-control": "no-store", ...extra };
}

/** A bodiless tus answer. */
export function tusAnswer(status: number, headers: Record<string, string> = {}): PlainAnswer {
  return { status, headers: tusHeaders(headers), text: "" };
}

/** A refusal: the tus status, `Tus-Resumable`, and the package's JSON error body. */
export function tusErrorAnswer(error: unknown): PlainAnswer {
  const known = isFileBridgeError(error) ? error : new FileBridgeError("STORAGE_ERROR", "Internal error");
  const status = tusStatusOf(known);
  // The files extension's reason (`digestMismatch`, `maxSizeExceeded`, …) travels with the code.
  const reason = known.data?.reason;
  const body = {
    error: {
      code: known.code,
      message: known.message,
      hint: known.hint,
      ...(typeof reason === "string" ? { reason } : {}),
    },
  };
  const headers: Record<string, string> = { ...JSON_HEADERS, "tus-resumable": TUS_VERSION };
  if (status === TUS_STATUS.preconditionFailed) headers["tus-version"] = TUS_VERSION;
  return { status, headers, text: JSON.stringify(body) };
}

/** Refuses a request without `Tus-Resumable: 1.0.0` (412, with `Tus-Version`). */
export function assertTusResumable(request: RequestView): void {
  if (request.header("tus-resumable")?.trim() !== TUS_VERSION) {
    throw tusError("INVALID_REQUEST", `Tus-Resumable must be ${TUS_VERSION}`, TUS_STATUS.preconditionFailed);
  }
}

/** A non-negative integer header (`Upload-Length`, `Upload-Offset`); `undefined` when absent. */
export function integerHeader(request: RequestView, name: string): number | undefined {
  const value = request.header(name);
  if (value === null) return undefined;
  const trimmed = value.trim();
  const parsed = Number(trimmed);
  if (!/^\d{1,16}$/.test(trimmed) || !Number.isSafeInteger(parsed)) {
    throw tusError("INVALID_REQUEST", `${name} must be a non-negative integer`);
  }
  return parsed;
}

/** `Upload-Metadata` as a key → value map (values base64-decoded as UTF-8). */
export function parseUploadMetadata(value: string | null): Record<string, string> {
  const metadata: Record<string, string> = {};
  if (value === null || value.trim() === "") return metadata;
  if (value.length > 4096) throw tusError("INVALID_REQUEST", "Upload-Metadata is too long");
  for (const pair of value.split(",")) {
    const [key, encoded, ...rest] = pair.trim().split(" ");
    if (!key || rest.length > 0 || !/^[\x21-\x7e]+$/.test(key) || key in metadata) {
      throw tusError("INVALID_REQUEST", "Upload-Metadata is malformed");
    }
    if (encoded !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) {
      throw tusError("INVALID_REQUEST", `Upload-Metadata ${key} is not base64`);
    }
    metadata[key] = encoded === undefined ? "" : Buffer.from(encoded, "base64").toString("utf8");
  }
  return metadata;
}

/** What `Upload-Concat` asks for. */
export type UploadConcat = { kind: "partial" } | { kind: "final"; urls: string[] };

/** `Upload-Concat`: `partial`, or `final;{url} {url}…`; `undefined` when absent. */
export function parseUploadConcat(value: string | null): UploadConcat | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (trimmed === "partial") return { kind: "partial" };
  if (trimmed.startsWith("final;")) {
    const urls = trimmed.slice("final;".length).trim().split(/\s+/).filter(Boolean);
    if (urls.length > 0 && urls.length <= 256) return { kind: "final", urls };
  }
  throw tusError("INVALID_REQUEST", "Upload-Concat must be partial or final;<urls>");
}

/** A parsed `Upload-Checksum`. */
export interface UploadChecksum {
  algorithm: TusChecksumAlgorithm;
  /** The expected digest, base64. */
  digest: string;
}

/** `Upload-Checksum: {algorithm} {base64 digest}`; an unknown algorithm is 400. */
export function parseUploadChecksum(value: string | null): UploadChecksum | undefined {
  if (value === null) return undefined;
  const [algorithm, digest, ...rest] = value.trim().split(" ");
  if (!(TUS_CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm ?? "")) {
    throw tusError("INVALID_REQUEST", `Upload-Checksum algorithm must be one of ${TUS_CHECKSUM_ALGORITHMS}`);
  }
  if (!digest || rest.length > 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(digest)) {
    throw tusError("INVALID_REQUEST", "Upload-Checksum must be <algorithm> <base64 digest>");
  }
  return { algorithm: algorithm as TusChecksumAlgorithm, digest };
}

/** The HTTP date of `Upload-Expires`. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
