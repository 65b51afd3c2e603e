/**
 * The scope inside a signed URL, sealed: a token's payload is only base64url, readable by anyone who
 * holds the URL, and a scope is often a bearer value (an MCP session id). So the scope travels
 * encrypted with AES-256-GCM under a key derived (HKDF-SHA256) from the signing secret. The seal is
 * deterministic, as the scope references in resource URIs are (`ScopeRefs`): its IV is synthetic, an
 * HMAC-SHA256 of the scope under a second derived key (the SIV construction), so one scope always
 * seals to the same text under one secret, on every replica, and two scopes never share an IV.
 * The JWS signature covers the sealed scope as every other claim: it cannot be moved into a token
 * without the secret.
 *
 * The sealed scope is padded (issue 40): its UTF-8 bytes, one 0x80 byte, then zeros up to a size
 * class — 64 bytes for every scope up to 63 bytes (session ids, subjects, user names: all one length),
 * then 128, 256, 512 or 1024 bytes, so the longest scope `assertScope` lets through (256 characters,
 * at most 768 bytes) fits. One fixed length for all would cost every token ~1 KB; the classes show
 * only which of five a scope is in. A seal made before the padding (the scope's bytes alone, with its
 * own IV) still opens, so tokens minted by an older version stay good until they expire.
 *
 * Being deterministic is what lets a process remember what it sealed and opened: minting and checking
 * a token then cost no cipher at all for a scope seen before (an AES-GCM cipher object is the largest
 * CPU cost of a small upload's ticket). What it shows is what a resource URI's scope reference
 * already shows: whether two links belong to the same scope, never which scope that is.
 */
import { createHmac, hkdfSync, nodeCrypto, timingSafeEqual } from "../internal/node-builtins.js";

const KEY_INFO = "mcp-file-bridge/signed-url/scope-seal/v2";
const IV_INFO = "mcp-file-bridge/signed-url/scope-seal/iv/v2";
/** Associated data: binds a sealed scope to this use of the key. */
const AAD = Buffer.from(KEY_INFO, "utf8");
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The sizes a padded scope takes (bytes of plaintext); the first that holds the scope and the 0x80 marker. */
export const SEAL_SIZE_CLASSES: readonly number[] = [64, 128, 256, 512, 1024];
/** The marker after the scope's bytes (never in a scope's UTF-8 as its last byte of padding: zeros follow). */
const PAD_MARK = 0x80;

/** The size class of a scope of `length` bytes (its bytes and the marker), or `undefined` past the last. */
function sizeClass(length: number): number | undefined {
  return SEAL_SIZE_CLASSES.find((size) => size > length);
}

/** `scope`'s bytes, the marker, zeros up to its size class. */
function pad(scope: Buffer): Buffer {
  const size = sizeClass(scope.length);
  if (size === undefined) throw new RangeError("scope too long to seal");
  const padded = Buffer.alloc(size);
  scope.copy(padded);
  padded[scope.length] = PAD_MARK;
  return padded;
}

/** The scope's bytes in a canonically padded plaintext, or `undefined` when it is not one. */
function unpad(plain: Buffer): Buffer | undefined {
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  if (end < 1 || plain[end] !== PAD_MARK || sizeClass(end) !== plain.length) return undefined;
  return plain.subarray(0, end);
}
/** Scopes remembered each way; a full cache is dropped whole (no per-entry LRU), as `ScopeRefs`' is. */
const CACHE_LIMIT = 10_000;

/**
 * Seals and opens scopes under one signing secret, remembering the last {@link CACHE_LIMIT} scopes
 * each way. Only what this instance sealed or opened is remembered, so a text it was never shown is
 * always opened (and checked) in full.
 *
 * @example
 * ```ts
 * const seal = new ScopeSeal(secretBytes);
 * const sealed = seal.seal("user-42"); // the same text every time, on every replica
 * seal.open(sealed); // "user-42"
 * seal.open("forged"); // null
 * ```
 */
export class ScopeSeal {
  readonly #key: Buffer;
  readonly #ivKey: Buffer;
  /** Scope → sealed text. */
  readonly #sealed = new Map<string, string>();
  /** Sealed text → scope. */
  readonly #opened = new Map<string, string>();

  /** @param secret The signing secret whose tokens carry these seals. */
  constructor(secret: Uint8Array) {
    this.#key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), KEY_INFO, 32));
    this.#ivKey = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), IV_INFO, 32));
  }

  /** The sealed text of `scope`: base64url of IV ‖ ciphertext ‖ tag. */
  seal(scope: string): string {
    const known = this.#sealed.get(scope);
    if (known !== undefined) return known;
    const bytes = Buffer.from(scope, "utf8");
    const iv = this.#ivOf(bytes);
    const cipher = nodeCrypto().createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(pad(bytes)), cipher.final()]);
    const sealed = Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
    this.#remember(scope, sealed);
    return sealed;
  }

  /**
   * The scope `sealed` carries, or `null` when {@link seal} under this secret did not make it (any
   * other key, a changed byte, a non-canonical spelling, an IV that is not the scope's own).
   */
  open(sealed: string): string | null {
    const known = this.#opened.get(sealed);
    if (known !== undefined) return known;
    const raw = Buffer.from(sealed, "base64url");
    if (raw.length < IV_BYTES + TAG_BYTES + 1 || raw.toString("base64url") !== sealed) return null;
    const iv = raw.subarray(0, IV_BYTES);
    let plain: Buffer;
    try {
      const decipher = nodeCrypto().createDecipheriv("aes-256-gcm", this.#key, iv);
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      plain = Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      return null;
    }
    // Authentic, and sealed as `seal` seals: padded, with the scope's own IV (one text per scope) —
    // or as the version before the padding sealed (the scope alone, its own IV), until those expire.
    const padded = unpad(plain);
    let bytes: Buffer;
    if (padded !== undefined && timingSafeEqual(iv, this.#ivOf(padded))) bytes = padded;
    else if (timingSafeEqual(iv, this.#ivOf(plain))) bytes = plain;
    else return null;
    const scope = bytes.toString("utf8");
    this.#remember(scope, sealed);
    return scope;
  }

  #ivOf(scope: Buffer): Buffer {
    return createHmac("sha256", this.#ivKey).update(scope).digest().subarray(0, IV_BYTES);
  }

  #remember(scope: string, sealed: string): void {
    if (this.#sealed.size >= CACHE_LIMIT) this.#sealed.clear();
    if (this.#opened.size >= CACHE_LIMIT) this.#opened.clear();
    this.#sealed.set(scope, sealed);
    this.#opened.set(sealed, scope);
  }
}
