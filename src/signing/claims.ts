/**
 * The claim checks of signed URL tokens: the binding a caller gives to `mint` and `verify` (action,
 * file id, extra claims), the token's shape before its signature is checked, and the claims this
 * package writes (read back from a signature-checked payload by minter-keys.ts).
 */
import type { JWTPayload } from "jose";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { assertScope } from "../scope/scope.js";
import type { SignedAction, SignedClaimValue, VerifyOptions } from "./types.js";

const MAX_TOKEN_LENGTH = 8192;
const MAX_ID_LENGTH = 256;
const MAX_EXTRA_CLAIMS = 32;
const MAX_CLAIM_STRING = 1024;
const CLAIM_KEY_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The `INVALID_TOKEN` error (the message never quotes the token). */
export function invalidToken(message: string, cause?: unknown): FileBridgeError {
  return new FileBridgeError("INVALID_TOKEN", message, cause === undefined ? {} : { cause });
}

/** `action` is `"download"` or `"upload"`, else `INVALID_INPUT` naming `name`. */
export function assertAction(action: unknown, name: string): asserts action is SignedAction {
  if (action !== "download" && action !== "upload") {
    throw new FileBridgeError("INVALID_INPUT", `${name} must be "download" or "upload"`);
  }
}

/** A file or ticket id: 1–256 characters, no control characters, else `INVALID_INPUT` naming `name`. */
export function assertFileId(fileId: unknown, name: string): asserts fileId is string {
  if (
    typeof fileId !== "string" ||
    fileId.length === 0 ||
    fileId.length > MAX_ID_LENGTH ||
    CONTROL.test(fileId)
  ) {
    throw new FileBridgeError(
      "INVALID_INPUT",
      `${name} must be a non-empty string of at most ${MAX_ID_LENGTH} characters without control characters`,
    );
  }
}

function isClaimValue(value: unknown): value is SignedClaimValue {
  return (
    typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value)) ||
    (typeof value === "string" && value.length <= MAX_CLAIM_STRING)
  );
}

/**
 * The `claims` given to `mint`: at most 32 entries, keys of `A-Z a-z 0-9 . _ -`, values a boolean, a
 * finite number or a string of at most 1024 characters, else `INVALID_INPUT`; `undefined` when empty.
 */
export function checkExtraClaims(claims: unknown): Record<string, SignedClaimValue> | undefined {
  if (claims === undefined) return undefined;
  if (typeof claims !== "object" || claims === null || Array.isArray(claims)) {
    throw new FileBridgeError("INVALID_INPUT", "claims must be a plain object");
  }
  const entries = Object.entries(claims);
  if (entries.length > MAX_EXTRA_CLAIMS) {
    throw new FileBridgeError("INVALID_INPUT", `claims must have at most ${MAX_EXTRA_CLAIMS} entries`);
  }
  for (const [key, value] of entries) {
    if (!CLAIM_KEY_PATTERN.test(key)) {
      throw new FileBridgeError("INVALID_INPUT", "claims keys must be 1-64 characters of A-Z a-z 0-9 . _ -");
    }
    if (!isClaimValue(value)) {
      throw new FileBridgeError(
        "INVALID_INPUT",
        `claims.${key} must be a boolean, a finite number or a string of at most ${MAX_CLAIM_STRING} characters`,
      );
    }
  }
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/** The `ext` claim of a verified payload, held to the same rules as at mint time; `null` when it breaks them. */
export function readExtraClaims(value: unknown): Record<string, SignedClaimValue> | null {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const entries = Object.entries(value);
  if (entries.length > MAX_EXTRA_CLAIMS) return null;
  for (const [key, item] of entries) {
    if (!CLAIM_KEY_PATTERN.test(key) || !isClaimValue(item)) return null;
  }
  return Object.fromEntries(entries);
}

/** `verify`'s options, checked before the token is looked at. */
export function assertVerifyOptions(options: VerifyOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new FileBridgeError("INVALID_INPUT", "verify options must be an object");
  }
  assertAction(options.action, "action");
  if (options.scope !== undefined) assertScope(options.scope);
  if (options.fileId !== undefined) assertFileId(options.fileId, "fileId");
}

/** A compact JWS of bounded length, each segment in canonical base64url, else `INVALID_TOKEN`. */
export function assertCanonicalToken(token: unknown): asserts token is string {
  if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) {
    throw invalidToken("The token is malformed.");
  }
  // Only the canonical base64url spelling is accepted, so a token cannot be re-spelled (e.g. by
  // flipping unused trailing bits) into a different string that still verifies.
  let start = 0;
  for (let dot = token.indexOf("."); ; dot = token.indexOf(".", start)) {
    const end = dot === -1 ? token.length : dot;
    if (!isCanonicalBase64url(token, start, end)) throw invalidToken("The token is malformed.");
    if (dot === -1) return;
    start = dot + 1;
  }
}

/** Value of a base64url character (the caller checked the alphabet). */
function base64urlValue(code: number): number {
  if (code >= 97) return code - 71; // a-z: 26-51
  if (code >= 65) return code === 95 ? 63 : code - 65; // A-Z: 0-25, "_": 63
  if (code >= 48) return code + 4; // 0-9: 52-61
  return 62; // "-"
}

/**
 * Whether `text[start, end)`, unpadded base64url of the alphabet, is the one spelling its bytes
 * encode to (what decoding and encoding again gives): no length that leaves a lone character, and
 * no bits set in the last character beyond the last whole byte.
 */
function isCanonicalBase64url(text: string, start: number, end: number): boolean {
  const rest = (end - start) % 4;
  if (rest === 0) return true;
  if (rest === 1) return false;
  const last = base64urlValue(text.charCodeAt(end - 1));
  return (last & (rest === 2 ? 0x0f : 0x03)) === 0;
}

/** The private claims this package writes, next to `iss`, `iat`, `exp`, `nbf` and `jti`. */
export interface BridgeClaims extends JWTPayload {
  /** The scope, sealed (see scope-seal.ts): never readable from the URL. */
  scs: string;
  fid: string;
  act: SignedAction;
  one?: true;
  ext?: Record<string, SignedClaimValue>;
}
