/**
 * `SignedUrlMinter`: mints and verifies the signed URL tokens (its options, `mint`, `verify` and
 * `consume`). Its public types live in types.ts, the claim checks in claims.ts, the sealed scope
 * claim in scope-seal.ts. The keys, the signature and the claims read back from a token are
 * minter-keys.ts, loaded on the first `mint` or `verify` (issue 39).
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import { DEFAULT_URL_TTL } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { pooledRandomBytes } from "../internal/random-pool.js";
import { assertScope } from "../scope/scope.js";
import { ScopeRefs } from "../scope/scope-refs.js";
import type { StateStore, StoredFile } from "../storage/types.js";
import {
  assertAction,
  assertCanonicalToken,
  assertFileId,
  assertVerifyOptions,
  checkExtraClaims,
} from "./claims.js";
import type { MinterKeys, MinterSecret } from "./minter-keys.js";
import type {
  DownloadUrlOptions,
  MintedUrl,
  MintOptions,
  SignedUrlMinterOptions,
  VerifiedToken,
  VerifyOptions,
} from "./types.js";

// Only for src/artifacts/artifacts.ts, which still imports it from here; remove once it imports ./types.js.
export type { DownloadClaimsFunction } from "./types.js";

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

const DEFAULT_KID = "default";
const MIN_SECRET_BYTES = 32;
const KID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const BASE_PATH_PATTERN = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*\/?$/;

const check = optionCheck("SignedUrlMinter");

/** The keys and the signature, loaded on the first `mint` or `verify` (issue 39). */
const loadKeys = firstUse(() => import("./minter-keys.js"));

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
  /**
   * How scopes become their opaque references in URIs and handles: an HMAC under a key derived
   * from this minter's secrets (the signing key first, older keys still match). Every piece given
   * this minter uses it, so they agree; replicas with the same keys agree too.
   */
  readonly scopeRefs: ScopeRefs;

  readonly #baseUrl: string | (() => string);
  /** The secrets by `kid`, checked; the first signs. */
  readonly #secrets: readonly MinterSecret[];
  /** The HMAC keys and scope seals, built from `#secrets` on the first `mint` or `verify`. */
  #keys: MinterKeys | undefined;
  readonly #ttlMs: number;
  readonly #toleranceMs: number;
  readonly #state: StateStore | undefined;
  readonly #now: () => number;

  constructor(options: SignedUrlMinterOptions) {
    if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
    const { secret, keys } = options;
    if (secret !== undefined && keys !== undefined)
      throw check.error("secret", "and keys must not both be given");
    let list: MinterSecret[];
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

    this.#secrets = list;
    this.scopeRefs = new ScopeRefs(list.map(({ bytes }) => bytes));
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

  /**
   * The minter's clock (its `now` option), in ms since the epoch: its tokens expire by it.
   *
   * @example
   * ```ts
   * const live = ticket.expiresAt > minter.now();
   * ```
   */
  now(): number {
    return this.#clock();
  }

  /**
   * The keys, loaded and built on the first call (two first calls at once share the one load and
   * the first build). Callers take `this.#keys` when it is there: after the first call, signing and
   * verifying wait on nothing.
   */
  async #loadedKeys(): Promise<MinterKeys> {
    const { MinterKeys } = await loadKeys();
    this.#keys ??= new MinterKeys(this.#secrets);
    return this.#keys;
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
    const jti = pooledRandomBytes(16).toString("base64url");
    const fields = {
      scope: options.scope,
      fileId: options.fileId,
      action: options.action,
      singleUse,
      extra,
      jti,
      iat,
      exp,
    };
    const nbf = delay > 0 ? { nbf: Math.floor((now + delay) / 1000) } : {};
    const keys = this.#keys ?? (await this.#loadedKeys());
    const token = keys.sign({ ...fields, ...nbf }, this.issuer, SIGNED_URL_TOKEN_TYPE);
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
    const keys = this.#keys ?? (await this.#loadedKeys());
    const checks = { typ: SIGNED_URL_TOKEN_TYPE, issuer: this.issuer, now, toleranceMs: this.#toleranceMs };
    const verified = keys.verify(token, checks);
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
