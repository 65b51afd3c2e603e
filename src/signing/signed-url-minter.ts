/**
 * `SignedUrlMinter`: one job, minting and verifying the signed URL tokens (its options, `mint`,
 * `verify`, `consume` and the claim checks they share), so it stays one file past ~600 lines.
 * The sealed scope claim lives in scope-seal.ts.
 */
import { randomBytes } from "node:crypto";
import { type JWTPayload, errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { DEFAULT_URL_TTL } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import type { ScopeSource } from "../scope/scope.js";
import { assertScope } from "../scope/scope.js";
import type { StateStore, StoredFile } from "../storage/types.js";
import { openScope, type SealKey, sealKeyFor, sealScope } from "./scope-seal.js";

/**
 * What a signed URL lets its holder do: fetch a stored file, or upload against a ticket.
 *
 * @example
 * ```ts
 * const action: SignedAction = "upload";
 * const ticket = await minter.verify(token, { action });
 * ```
 */
export type SignedAction = "download" | "upload";

/**
 * Value types allowed in the extra claims of a token (`ext`).
 *
 * @example
 * ```ts
 * const claims: Record<string, SignedClaimValue> = { key: "key_123", maxBytes: 10485760, trial: true };
 * const { url } = await minter.downloadUrl(file, { claims });
 * ```
 */
export type SignedClaimValue = string | number | boolean;

/**
 * One signing key of a {@link SignedUrlMinter}, for key rotation.
 *
 * @example
 * ```ts
 * const keys: SigningKey[] = [
 *   { kid: "2025-06", secret: newSecret }, // signs new tokens
 *   { kid: "2025-01", secret: oldSecret }, // still verifies older ones
 * ];
 * const minter = new SignedUrlMinter({ keys, baseUrl: "https://files.example.com" });
 * ```
 */
export interface SigningKey {
  /** Key id, written into the token's `kid` header: 1–64 characters of `A-Z a-z 0-9 . _ -`. */
  kid: string;
  /** HMAC secret, at least 32 bytes (a string counts its UTF-8 bytes). */
  secret: string | Uint8Array;
}

/**
 * Options of {@link SignedUrlMinter}. Give exactly one of `secret` or `keys`.
 *
 * @example
 * ```ts
 * const options: SignedUrlMinterOptions = {
 *   secret: process.env.FILE_URL_SECRET!, // at least 32 bytes
 *   baseUrl: "https://files.example.com",
 *   ttl: "10m",
 *   state: memoryState(),
 * };
 * ```
 */
export interface SignedUrlMinterOptions {
  /**
   * The one HMAC secret (key id `"default"`), at least 32 bytes. Use `keys` instead to rotate keys.
   * @default none — `secret` or `keys` is required
   */
  secret?: string | Uint8Array;
  /**
   * Signing keys for rotation: new tokens are signed with the FIRST key (put the newest first);
   * tokens signed with any listed key still verify. Remove a key to revoke every token it signed.
   * @default none — `secret` or `keys` is required
   */
  keys?: readonly SigningKey[];
  /**
   * Absolute `http:` or `https:` URL the routes are reachable at, e.g. `"https://files.example.com"`
   * or `"http://127.0.0.1:3000/mcp-files"`. No query, fragment or credentials. A trailing `/` is dropped.
   *
   * May also be a function returning that URL, called (and its result validated) each time a URL is
   * minted or {@link SignedUrlMinter.baseUrl} is read — for a server on port 0, whose URL is known
   * only after `listen()`: `baseUrl: () => server.url`. A bad result fails that call with
   * `INVALID_OPTION` (`data.option: "baseUrl"`).
   * @default none — required
   */
  baseUrl: string | (() => string);
  /**
   * Path prefix of the file routes, starting with `/` (a trailing `/` is dropped; `"/"` means no prefix).
   * @default "/files"
   */
  basePath?: string;
  /**
   * Lifetime of minted tokens: seconds, or a string such as `"90s"`, `"5m"`, `"1h"`. At least 1 second.
   * @default "5m"
   */
  ttl?: Duration;
  /**
   * Where single-use token ids (`jti`) are claimed. Required to mint or verify single-use tokens.
   * @default none — single-use tokens are refused with `INVALID_OPTION`
   */
  state?: StateStore;
  /**
   * Issuer (`iss` claim) written into and required from every token. Give each deployment that shares
   * a secret its own issuer so their tokens are not interchangeable.
   * @default "mcp-file-bridge"
   */
  issuer?: string;
  /**
   * Allowed clock difference between the minting and the verifying machine, applied to `nbf` and
   * `iat` (a token from "slightly in the future" is accepted). Expiry is enforced without tolerance.
   * @default "5s"
   */
  clockTolerance?: Duration;
  /**
   * Current time in milliseconds since the epoch; drives both minting and verifying.
   * @default Date.now
   */
  now?: () => number;
}

/**
 * Options of {@link SignedUrlMinter.mint}.
 *
 * @example
 * ```ts
 * const options: MintOptions = { scope, fileId: file.id, action: "download", ttl: "1h", singleUse: true };
 * const { url } = await minter.mint(options);
 * ```
 */
export interface MintOptions {
  /** Scope the file or ticket belongs to. */
  scope: string;
  /** Stored file id (for `download`) or upload ticket id (for `upload`). */
  fileId: string;
  /** What the URL allows. */
  action: SignedAction;
  /** Lifetime of this token. @default the minter's `ttl` */
  ttl?: Duration;
  /**
   * Delay before the token becomes valid (writes an `nbf` claim).
   * @default none — valid at once
   */
  notBefore?: Duration;
  /**
   * The token works once: the first successful `verify()` claims its `jti` in the minter's `state`,
   * later ones fail with `TOKEN_ALREADY_USED`. Needs the minter's `state` option.
   * @default false
   */
  singleUse?: boolean;
  /**
   * Extra signed data carried in the token (`ext` claim), e.g. `{ maxBytes: 10485760 }` for an upload
   * ticket. At most 32 entries; keys are 1–64 characters of `A-Z a-z 0-9 . _ -`; strings at most 1024
   * characters; numbers finite. The token is readable by its holder: put no secrets here.
   * @default {}
   */
  claims?: Readonly<Record<string, SignedClaimValue>>;
}

/**
 * Options of {@link SignedUrlMinter.downloadUrl}.
 *
 * @example
 * ```ts
 * const options: DownloadUrlOptions = { ttl: "15m", claims: { key: "key_123" } };
 * const { url } = await minter.downloadUrl(file, options);
 * ```
 */
export type DownloadUrlOptions = Omit<MintOptions, "scope" | "fileId" | "action">;

/**
 * What {@link SignedUrlMinter.mint} returns.
 *
 * @example
 * ```ts
 * const { url, expiresAt }: MintedUrl = await minter.downloadUrl(file);
 * const text = `Download: ${url} (until ${new Date(expiresAt).toISOString()})`;
 * ```
 */
export interface MintedUrl {
  /** `{baseUrl}{basePath}/{action}/{token}`. */
  url: string;
  /** The compact JWT. */
  token: string;
  /** When the token expires, milliseconds since the epoch (a whole second). */
  expiresAt: number;
  /** The token's unique id (`jti` claim). */
  jti: string;
}

/**
 * Options of {@link SignedUrlMinter.verify}: the binding the token must match.
 *
 * @example
 * ```ts
 * const options: VerifyOptions = { action: "download", scope: sessionId, fileId: file.id };
 * await minter.verify(token, options); // NOT_FOUND if the token is for another scope or file
 * ```
 */
export interface VerifyOptions {
  /** The action the caller is about to perform; a token for another action fails with `NOT_FOUND`. */
  action: SignedAction;
  /** Required scope; another scope fails with `NOT_FOUND`. @default any scope (read it from the result) */
  scope?: string;
  /** Required file or ticket id; another id fails with `NOT_FOUND`. @default any id (read it from the result) */
  fileId?: string;
  /**
   * Use up a single-use token now. With `false`, a token that was already used still fails with
   * `TOKEN_ALREADY_USED`, but this call does not use it: call {@link SignedUrlMinter.consume} once the
   * action succeeded (an upload route does, so a failed upload does not waste its ticket).
   * @default true
   */
  consume?: boolean;
}

/**
 * The verified content of a token.
 *
 * @example
 * ```ts
 * const verified: VerifiedToken = await minter.verify(token, { action: "download" });
 * const file = await store.head(verified.scope, verified.fileId);
 * ```
 */
export interface VerifiedToken {
  /** Scope the token is bound to. */
  scope: string;
  /** File id or upload ticket id the token is bound to. */
  fileId: string;
  /** Action the token allows. */
  action: SignedAction;
  /** Unique token id. */
  jti: string;
  /** Key id the token was signed with. */
  kid: string;
  /** Issue time, milliseconds since the epoch (the JWT `iat` × 1000). */
  iat: number;
  /** Expiry time, milliseconds since the epoch (the JWT `exp` × 1000). */
  exp: number;
  /** True for a single-use token (it has now been claimed). */
  singleUse: boolean;
  /** The extra claims given at mint time. */
  claims: Record<string, SignedClaimValue>;
}

/**
 * The JOSE `typ` header of every token this package mints; other JWTs are refused.
 *
 * @example
 * ```ts
 * import { decodeProtectedHeader } from "jose";
 * decodeProtectedHeader(token).typ === SIGNED_URL_TOKEN_TYPE; // true for tokens a SignedUrlMinter minted
 * ```
 */
export const SIGNED_URL_TOKEN_TYPE = "mcp-file-bridge+jwt";

const ALGORITHM = "HS256";
const DEFAULT_KID = "default";
const MIN_SECRET_BYTES = 32;
const MAX_TOKEN_LENGTH = 8192;
const MAX_ID_LENGTH = 256;
const MAX_EXTRA_CLAIMS = 32;
const MAX_CLAIM_STRING = 1024;
const KID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const CLAIM_KEY_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const BASE_PATH_PATTERN = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*\/?$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

const check = optionCheck("SignedUrlMinter");

function invalidToken(message: string, cause?: unknown): FileBridgeError {
  return new FileBridgeError("INVALID_TOKEN", message, cause === undefined ? {} : { cause });
}

function secretBytes(secret: unknown, name: string): Uint8Array<ArrayBuffer> {
  let bytes: Uint8Array<ArrayBuffer>;
  if (typeof secret === "string") bytes = new TextEncoder().encode(secret);
  else if (secret instanceof Uint8Array) bytes = Uint8Array.from(secret);
  else throw check.error(name, "must be a string or a Uint8Array");
  if (bytes.byteLength < MIN_SECRET_BYTES) {
    throw check.error(name, `must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return bytes;
}

function normalizeBaseUrl(value: unknown): string {
  if (typeof value !== "string" || value.length === 0)
    throw check.error("baseUrl", "must be an absolute URL");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw check.error("baseUrl", "must be an absolute http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw check.error("baseUrl", "must use http: or https:");
  }
  if (url.username !== "" || url.password !== "")
    throw check.error("baseUrl", "must not contain credentials");
  if (url.search !== "" || url.hash !== "" || value.includes("?") || value.includes("#")) {
    throw check.error("baseUrl", "must not have a query or fragment");
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

function normalizeBasePath(value: unknown): string {
  if (value === undefined) return "/files";
  if (typeof value !== "string" || !value.startsWith("/") || !BASE_PATH_PATTERN.test(value)) {
    throw check.error("basePath", "must be a path starting with / (no query, no empty segments)");
  }
  const trimmed = value.replace(/\/$/, "");
  if (trimmed.split("/").some((segment) => segment === "." || segment === "..")) {
    throw check.error("basePath", "must not contain . or .. segments");
  }
  return trimmed;
}

function ttlMs(value: Duration, name: string): number {
  const ms = durationToMs(value, name);
  if (ms < 1000) throw check.error(name, "must be at least 1 second");
  return ms;
}

function assertAction(action: unknown, name: string): asserts action is SignedAction {
  if (action !== "download" && action !== "upload") {
    throw new FileBridgeError("INVALID_INPUT", `${name} must be "download" or "upload"`);
  }
}

function assertFileId(fileId: unknown, name: string): asserts fileId is string {
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

function checkExtraClaims(claims: unknown): Record<string, SignedClaimValue> | undefined {
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

function readExtraClaims(value: unknown): Record<string, SignedClaimValue> | null {
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
function assertVerifyOptions(options: VerifyOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new FileBridgeError("INVALID_INPUT", "verify options must be an object");
  }
  assertAction(options.action, "action");
  if (options.scope !== undefined) assertScope(options.scope);
  if (options.fileId !== undefined) assertFileId(options.fileId, "fileId");
}

/** A compact JWS of bounded length, each segment in canonical base64url. */
function assertCanonicalToken(token: unknown): asserts token is string {
  if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) {
    throw invalidToken("The token is malformed.");
  }
  // Only the canonical base64url spelling is accepted, so a token cannot be re-spelled (e.g. by
  // flipping unused trailing bits) into a different string that still verifies.
  for (const segment of token.split(".")) {
    if (Buffer.from(segment, "base64url").toString("base64url") !== segment) {
      throw invalidToken("The token is malformed.");
    }
  }
}

/** The private claims this package writes, next to `iss`, `iat`, `exp`, `nbf` and `jti`. */
interface BridgeClaims extends JWTPayload {
  /** The scope, sealed (see scope-seal.ts): never readable from the URL. */
  scs: string;
  fid: string;
  act: SignedAction;
  one?: true;
  ext?: Record<string, SignedClaimValue>;
}

/**
 * Mints and verifies short-lived signed URLs for the upload and download routes. Each token is an
 * HS256 JWT bound to one scope, one file (or upload ticket) id and one action; `verify()` refuses
 * any other algorithm, unknown keys, tampering, expiry, a wrong binding and (for single-use tokens)
 * replays.
 *
 * @example
 * ```ts
 * import { memoryState, SignedUrlMinter } from "mcp-file-bridge";
 *
 * const minter = new SignedUrlMinter({
 *   secret: process.env.FILE_URL_SECRET!, // at least 32 bytes
 *   baseUrl: "https://files.example.com",
 *   state: memoryState(), // only needed for single-use tokens
 * });
 *
 * const { url, expiresAt } = await minter.downloadUrl(storedFile);
 * // → https://files.example.com/files/download/eyJhbGciOi…
 *
 * // in the route:
 * const claims = await minter.verify(token, { action: "download" });
 * const file = await store.head(claims.scope, claims.fileId);
 * ```
 */
export class SignedUrlMinter {
  /** Path prefix of the routes, without a trailing `/` (`""` when mounted at the root). */
  readonly basePath: string;
  /** Issuer written into and required from every token. */
  readonly issuer: string;

  readonly #baseUrl: string | (() => string);
  readonly #keys: ReadonlyMap<string, Promise<CryptoKey>>;
  readonly #signingKid: string;
  readonly #sealKeys: ReadonlyMap<string, SealKey>;
  readonly #ttlMs: number;
  readonly #toleranceMs: number;
  readonly #state: StateStore | undefined;
  readonly #now: () => number;

  constructor(options: SignedUrlMinterOptions) {
    if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
    const { secret, keys } = options;
    if (secret !== undefined && keys !== undefined)
      throw check.error("secret", "and keys must not both be given");
    let list: Array<{ kid: string; bytes: Uint8Array<ArrayBuffer> }>;
    if (secret !== undefined) {
      list = [{ kid: DEFAULT_KID, bytes: secretBytes(secret, "secret") }];
    } else if (keys !== undefined) {
      if (!Array.isArray(keys) || keys.length === 0) throw check.error("keys", "must be a non-empty array");
      list = keys.map((key: unknown, index) => {
        const name = `keys[${index}]`;
        if (typeof key !== "object" || key === null) throw check.error(name, "must be { kid, secret }");
        const { kid, secret: keySecret } = key as { kid?: unknown; secret?: unknown };
        if (typeof kid !== "string" || !KID_PATTERN.test(kid)) {
          throw check.error(`${name}.kid`, "must be 1-64 characters of A-Z a-z 0-9 . _ -");
        }
        return { kid, bytes: secretBytes(keySecret, `${name}.secret`) };
      });
      if (new Set(list.map((key) => key.kid)).size !== list.length) {
        throw check.error("keys", "must not repeat a kid");
      }
    } else {
      throw check.error("secret", "or keys is required");
    }

    // A function is validated when it is called: with port 0 the URL is not known yet.
    this.#baseUrl =
      typeof options.baseUrl === "function" ? options.baseUrl : normalizeBaseUrl(options.baseUrl);
    this.basePath = normalizeBasePath(options.basePath);
    this.#ttlMs = ttlMs(options.ttl ?? DEFAULT_URL_TTL, "ttl");
    this.#toleranceMs = durationToMs(options.clockTolerance ?? "5s", "clockTolerance");

    if (options.issuer !== undefined && (typeof options.issuer !== "string" || options.issuer.length === 0)) {
      throw check.error("issuer", "must be a non-empty string");
    }
    this.issuer = options.issuer ?? "mcp-file-bridge";

    if (options.state !== undefined) {
      const state = options.state as Partial<StateStore> | null;
      if (typeof state !== "object" || state === null || typeof state.setIfAbsent !== "function") {
        throw check.error("state", "must be a StateStore");
      }
    }
    this.#state = options.state;

    if (options.now !== undefined && typeof options.now !== "function") {
      throw check.error("now", "must be a function returning milliseconds");
    }
    this.#now = options.now ?? Date.now;

    const imported = new Map<string, Promise<CryptoKey>>();
    for (const { kid, bytes } of list) {
      const key = globalThis.crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
        "verify",
      ]);
      // Awaited on first use; this only keeps a (never expected) failure from being unhandled meanwhile.
      key.catch(() => {});
      imported.set(kid, key);
    }
    this.#keys = imported;
    this.#signingKid = (list[0] as { kid: string }).kid;
    this.#sealKeys = new Map(list.map(({ kid, bytes }) => [kid, sealKeyFor(bytes)]));
  }

  /**
   * Absolute URL the routes live under, without a trailing `/`. With a function `baseUrl` option,
   * the function's current answer, validated (`INVALID_OPTION` when it is not a usable URL).
   *
   * @example
   * ```ts
   * new SignedUrlMinter({ secret, baseUrl: "https://files.example.com/" }).baseUrl; // "https://files.example.com"
   * ```
   */
  get baseUrl(): string {
    const value = this.#baseUrl;
    if (typeof value === "string") return value;
    let result: unknown;
    try {
      result = value();
    } catch (cause) {
      if (isFileBridgeError(cause)) throw cause;
      throw new FileBridgeError("INVALID_OPTION", "baseUrl function threw", {
        cause,
        data: { option: "baseUrl" },
      });
    }
    return normalizeBaseUrl(result);
  }

  #clock(): number {
    const now = this.#now();
    if (typeof now !== "number" || !Number.isFinite(now)) {
      throw check.error("now", "must return a finite number of milliseconds");
    }
    return now;
  }

  /**
   * Mints a signed URL bound to `(scope, fileId, action)`.
   *
   * Errors: `INVALID_INPUT` (bad scope, file id, action or claims), `INVALID_OPTION` (bad `ttl` or
   * `notBefore`, `singleUse` without the minter's `state`, or a function `baseUrl` that gave no usable URL).
   *
   * @example
   * ```ts
   * const { url, token, expiresAt } = await minter.mint({
   *   scope: sessionId,
   *   fileId: ticketId,
   *   action: "upload",
   *   ttl: "10m",
   *   singleUse: true,
   *   claims: { maxBytes: 50 * 1024 * 1024 },
   * });
   * ```
   */
  async mint(options: MintOptions): Promise<MintedUrl> {
    if (typeof options !== "object" || options === null) {
      throw new FileBridgeError("INVALID_INPUT", "mint options must be an object");
    }
    assertScope(options.scope);
    assertFileId(options.fileId, "fileId");
    assertAction(options.action, "action");
    const extra = checkExtraClaims(options.claims);
    const lifetime = options.ttl === undefined ? this.#ttlMs : ttlMs(options.ttl, "ttl");
    const delay = options.notBefore === undefined ? 0 : durationToMs(options.notBefore, "notBefore");
    if (delay >= lifetime) throw check.error("notBefore", "must be shorter than ttl");
    const singleUse = options.singleUse === true;
    if (singleUse && this.#state === undefined) {
      throw check.error("state", "is required to mint single-use tokens");
    }

    const baseUrl = this.baseUrl; // before signing: a bad function baseUrl fails without minting
    const now = this.#clock();
    const iat = Math.floor(now / 1000);
    const exp = Math.floor((now + lifetime) / 1000);
    const jti = randomBytes(16).toString("base64url");
    const sealKey = this.#sealKeys.get(this.#signingKid) as SealKey;
    const payload: BridgeClaims = {
      scs: sealScope(sealKey, options.scope, jti),
      fid: options.fileId,
      act: options.action,
    };
    if (singleUse) payload.one = true;
    if (extra !== undefined) payload.ext = extra;

    const jwt = new SignJWT(payload)
      .setProtectedHeader({ alg: ALGORITHM, typ: SIGNED_URL_TOKEN_TYPE, kid: this.#signingKid })
      .setIssuer(this.issuer)
      .setJti(jti)
      .setIssuedAt(iat)
      .setExpirationTime(exp);
    if (delay > 0) jwt.setNotBefore(Math.floor((now + delay) / 1000));
    const key = await (this.#keys.get(this.#signingKid) as Promise<CryptoKey>);
    const token = await jwt.sign(key);
    return {
      url: `${baseUrl}${this.basePath}/${options.action}/${token}`,
      token,
      expiresAt: exp * 1000,
      jti,
    };
  }

  /**
   * Mints a download URL for a stored file: `mint({ scope: file.scope, fileId: file.id, action: "download" })`.
   *
   * @example
   * ```ts
   * const file = await store.put(bytes, { scope, name: "report.pdf" });
   * const { url } = await minter.downloadUrl(file, { ttl: "15m" });
   * ```
   */
  downloadUrl(file: Pick<StoredFile, "id" | "scope">, options: DownloadUrlOptions = {}): Promise<MintedUrl> {
    return this.mint({ ...options, scope: file.scope, fileId: file.id, action: "download" });
  }

  /**
   * Verifies a token and the binding the caller is about to act on. Checks, in order: shape,
   * signature (HS256 only, with a listed `kid`), `typ`, issuer, `nbf`/`iat` (with the clock
   * tolerance), expiry, the binding, and last claims a single-use token's `jti`.
   *
   * Errors: `INVALID_TOKEN` (malformed, bad signature, other algorithm, unknown key, wrong issuer or
   * type, not yet valid), `TOKEN_EXPIRED`, `NOT_FOUND` (other action, scope or file — the same answer
   * as a missing file), `TOKEN_ALREADY_USED` (single-use replay), `INVALID_OPTION` (a single-use token
   * reached a minter without `state`), `STORAGE_ERROR` (the state store failed).
   *
   * @example
   * ```ts
   * const claims = await minter.verify(token, { action: "upload" });
   * const maxBytes = Number(claims.claims.maxBytes);
   * ```
   */
  async verify(token: string, options: VerifyOptions): Promise<VerifiedToken> {
    assertVerifyOptions(options);
    assertCanonicalToken(token);
    const now = this.#clock();
    const { payload, kid } = await this.#verifySignature(token, now);
    const verified = this.#readClaims(payload, kid, now);
    if (
      verified.action !== options.action ||
      (options.scope !== undefined && verified.scope !== options.scope) ||
      (options.fileId !== undefined && verified.fileId !== options.fileId)
    ) {
      throw new FileBridgeError("NOT_FOUND", "No such file.");
    }
    if (verified.singleUse) {
      if (this.#state === undefined) throw check.error("state", "is required to verify single-use tokens");
      if (options.consume === false) await this.#assertUnused(verified.jti);
      else await this.#claim(verified.jti, verified.exp);
    }
    return verified;
  }

  /** The signature, `kid`, `typ`, issuer, required claims, `nbf` and expiry, as jose checks them. */
  async #verifySignature(token: string, now: number): Promise<{ payload: JWTPayload; kid: string }> {
    try {
      const result = await jwtVerify(
        token,
        async (header) => {
          const key = typeof header.kid === "string" ? this.#keys.get(header.kid) : undefined;
          if (key === undefined) throw invalidToken("The token was signed with an unknown key.");
          return key;
        },
        {
          algorithms: [ALGORITHM],
          typ: SIGNED_URL_TOKEN_TYPE,
          issuer: this.issuer,
          requiredClaims: ["iat", "exp", "jti"],
          currentDate: new Date(now),
          clockTolerance: Math.floor(this.#toleranceMs / 1000),
        },
      );
      return { payload: result.payload, kid: result.protectedHeader.kid as string };
    } catch (error) {
      if (isFileBridgeError(error)) throw error;
      if (error instanceof joseErrors.JWTExpired) {
        throw new FileBridgeError("TOKEN_EXPIRED", "The token has expired.", { cause: error });
      }
      throw invalidToken("The token is invalid.", error);
    }
  }

  /** This package's claims of a signature-checked payload: shape, sealed scope, `iat` and `exp`. */
  #readClaims(payload: JWTPayload, kid: string, now: number): VerifiedToken {
    const { scs, fid, act, one, jti, iat, exp } = payload as Partial<BridgeClaims>;
    const extra = readExtraClaims(payload.ext);
    const scp =
      typeof scs === "string" && typeof jti === "string"
        ? openScope(this.#sealKeys.get(kid) as SealKey, scs, jti)
        : null;
    if (
      scp === null ||
      typeof fid !== "string" ||
      (act !== "download" && act !== "upload") ||
      (one !== undefined && one !== true) ||
      typeof jti !== "string" ||
      jti.length === 0 ||
      typeof iat !== "number" ||
      typeof exp !== "number" ||
      extra === null
    ) {
      throw invalidToken("The token's claims are malformed.");
    }
    if (iat * 1000 > now + this.#toleranceMs) throw invalidToken("The token is not valid yet.");
    if (now >= exp * 1000) throw new FileBridgeError("TOKEN_EXPIRED", "The token has expired.");
    return {
      scope: scp,
      fileId: fid,
      action: act,
      jti,
      kid,
      iat: iat * 1000,
      exp: exp * 1000,
      singleUse: one === true,
      claims: extra,
    };
  }

  /**
   * Uses up a single-use token that was verified with `consume: false`. Fails with
   * `TOKEN_ALREADY_USED` when another request used it first (exactly one caller wins). Does nothing
   * for a token that is not single-use.
   *
   * @example
   * ```ts
   * const ticket = await minter.verify(token, { action: "upload", consume: false });
   * const staged = await store.stage(body, { scope: ticket.scope, name });
   * await minter.consume(ticket); // throws if the ticket was used meanwhile
   * await staged.commit();
   * ```
   */
  async consume(token: VerifiedToken): Promise<void> {
    if (!token.singleUse) return;
    if (this.#state === undefined) throw check.error("state", "is required to consume single-use tokens");
    await this.#claim(token.jti, token.exp);
  }

  async #claim(jti: string, expiresAtMs: number): Promise<void> {
    const state = this.#state as StateStore;
    // Remember the jti for as long as the token could otherwise still be accepted.
    const ttlSeconds = Math.max(1, (expiresAtMs - this.#clock() + this.#toleranceMs) / 1000);
    let claimed: boolean;
    try {
      claimed = await state.setIfAbsent(`jti:${jti}`, 1, { ttl: ttlSeconds });
    } catch (error) {
      if (isFileBridgeError(error)) throw error;
      throw new FileBridgeError("STORAGE_ERROR", "Could not record the single-use token.", { cause: error });
    }
    if (!claimed) throw new FileBridgeError("TOKEN_ALREADY_USED", "The token was already used.");
  }

  async #assertUnused(jti: string): Promise<void> {
    let used: unknown;
    try {
      used = await (this.#state as StateStore).get(`jti:${jti}`);
    } catch (error) {
      if (isFileBridgeError(error)) throw error;
      throw new FileBridgeError("STORAGE_ERROR", "Could not read the single-use token.", { cause: error });
    }
    if (used !== null) throw new FileBridgeError("TOKEN_ALREADY_USED", "The token was already used.");
  }
}

/**
 * Extra claims to sign into a download URL that a `ResourceRegistry` or `Artifacts` mints, e.g. the
 * id of the API key to charge. `extra` is the MCP request's `extra` (a `resources/read`, a tool call),
 * or what was passed to `link(file, { extra })` / `capture({ extra })` (`undefined` when not given). The download route hands the verified claims to its `onDownload` hook as `claims`.
 *
 * @example
 * ```ts
 * const downloadClaims: DownloadClaimsFunction = (file, extra) => ({ key: keyIdOf(extra) });
 * ```
 */
export type DownloadClaimsFunction = (
  file: StoredFile,
  extra: ScopeSource | undefined,
) =>
  | Record<string, string | number | boolean>
  | undefined
  | Promise<Record<string, string | number | boolean> | undefined>;
