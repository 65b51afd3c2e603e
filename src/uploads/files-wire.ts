/**
 * The wire shapes of the MCP files extension (SEP-2631 "File Objects and Transfer", a draft; and the
 * Codex CLI variant of it), written down from the draft's text: `FileValue`, the transfer
 * descriptor, the client's `files` capability in every spelling the revisions used, and the
 * `-32602` errors with the draft's `data.reason`. See docs/files-extension.md.
 */
import { FileBridgeError, type FileBridgeErrorCode } from "../errors/file-bridge-error.js";
import type { StoredFile } from "../storage/types.js";

/** The extension id servers advertise under `capabilities.extensions` (the key the variant clients probe). */
export const FILES_EXTENSION_ID = "io.modelcontextprotocol/files";

/**
 * A file as the files extension names it: an opaque URI plus what is known about its bytes.
 *
 * @example
 * ```ts
 * const file: FileValue = { uri: "upload://sessions/q3X0…/01j…", name: "a.pdf", mimeType: "application/pdf", size: 1024, digest: { algorithm: "sha-256", value: "n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg" } };
 * ```
 */
export interface FileValue {
  [key: string]: unknown;
  uri: string;
  name?: string;
  mimeType?: string;
  size?: number;
  /**
   * `algorithm` is `"sha-256"`; `value` the 32-byte digest in **unpadded base64url** (43 characters,
   * RFC 4648 §5 without `=`), as the draft's `FileDigest` says. `StoredFile.sha256` stays hex.
   */
  digest?: { algorithm: string; value: string };
}

/**
 * How to move a file's bytes over HTTPS: the method, URL, headers, multipart field and expiry.
 *
 * @example
 * ```ts
 * const upload: FileTransferDescriptor = { transport: "https", method: "PUT", url, headers: { "content-type": "application/pdf" }, expiresAt };
 * ```
 */
export interface FileTransferDescriptor {
  [key: string]: unknown;
  transport: "https";
  method: "PUT" | "POST" | "GET";
  url: string;
  headers?: Record<string, string>;
  multipart?: { fileField: string; fields?: Record<string, string> };
  /** ISO 8601. */
  expiresAt?: string;
}

export {
  type ClientFilesCapability,
  clientFilesCapability,
  type FilesSpelling,
} from "../mcp/client-files.js";

/**
 * A `-32602` refusal with the draft's `data.reason` (the port turns a `FileBridgeError` under 500
 * into `-32602` with its `data`).
 */
export function filesError(
  code: FileBridgeErrorCode,
  reason: string,
  message: string,
  data: Record<string, unknown> = {},
): FileBridgeError {
  return new FileBridgeError(code, message, { data: { ...data, reason } });
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i;
const BASE64_SHA256 = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * A declared digest as lower-case hex (how the stores keep it): `{ algorithm: "sha-256" | "sha256", value }`
 * with the value in unpadded base64url (the draft's encoding), hex, or base64 (padded or not). Other
 * algorithms are refused. What goes back on the wire is {@link wireDigest}.
 */
export function declaredDigest(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const digest = value as { algorithm?: unknown; value?: unknown } | null;
  const algorithm = typeof digest?.algorithm === "string" ? digest.algorithm.toLowerCase() : undefined;
  if (algorithm !== "sha-256" && algorithm !== "sha256") {
    throw filesError("INVALID_INPUT", "unsupportedDigestAlgorithm", "digest.algorithm must be sha-256", {
      algorithms: ["sha-256"],
    });
  }
  const text = typeof digest?.value === "string" ? digest.value.trim() : "";
  if (HEX_SHA256.test(text)) return text.toLowerCase();
  if (BASE64_SHA256.test(text)) return Buffer.from(text, "base64").toString("hex");
  throw filesError("INVALID_INPUT", "invalidDigest", "digest.value must be a sha-256 in hex or base64");
}

/**
 * The draft's `FileDigest` of a hex sha-256 (how `StoredFile.sha256` keeps it): the same 32 bytes as
 * unpadded base64url ("Digest values use unpadded base64url encoding").
 */
export function wireDigest(sha256Hex: string): { algorithm: "sha-256"; value: string } {
  return { algorithm: "sha-256", value: Buffer.from(sha256Hex, "hex").toString("base64url") };
}

/** The `FileValue` of a stored file under `uri`, with its sha-256 in the draft's encoding. */
export function fileValueOf(
  file: Pick<StoredFile, "name" | "mimeType" | "size" | "sha256">,
  uri: string,
): FileValue {
  return {
    uri,
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    digest: wireDigest(file.sha256),
  };
}

/** An optional string param, or `INVALID_INPUT` naming it. */
export function optionalString(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > 1024) {
    throw filesError("INVALID_INPUT", "invalidParams", `${name} must be a non-empty string`);
  }
  return value;
}

/** The `uri` param of `authorizeDownload` / `completeUpload` / `getDownload`. */
export function uriParam(params: Record<string, unknown>): string {
  const uri = params.uri;
  if (typeof uri !== "string" || uri.length === 0) {
    throw filesError("INVALID_INPUT", "invalidParams", "uri must be a file URI this server returned");
  }
  return uri;
}
