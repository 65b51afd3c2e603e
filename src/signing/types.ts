/**
 * The public types of signed URLs: `SignedUrlMinter`'s options, what `mint` and `verify` take and
 * return, and the hook that adds claims to the download URLs other pieces mint.
 */
import type { Duration } from "../internal/duration.js";
import type { ScopeSource } from "../scope/scope.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { StateStore, StoredFile } from "../storage/types.js";

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
 * Options of `SignedUrlMinter.mint`.
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
 * Options of `SignedUrlMinter.downloadUrl`.
 *
 * @example
 * ```ts
 * const options: DownloadUrlOptions = { ttl: "15m", claims: { key: "key_123" } };
 * const { url } = await minter.downloadUrl(file, options);
 * ```
 */
export type DownloadUrlOptions = Omit<MintOptions, "scope" | "fileId" | "action">;

/**
 * What `SignedUrlMinter.mint` returns.
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
 * Options of `SignedUrlMinter.verify`: the binding the token must match.
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
   * `TOKEN_ALREADY_USED`, but this call does not use it: call `SignedUrlMinter.consume` once the
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

/**
 * The claims a verified token carries, as far as the routes need them.
 *
 * @example
 * ```ts
 * const { scope, fileId, claims }: VerifiedTokenClaims = await minter.verify(token, { action: "download" });
 * ```
 */
export interface VerifiedTokenClaims {
  /** Scope the token is bound to. */
  scope: string;
  /** File id (downloads) or upload ticket id (uploads). */
  fileId: string;
  /** Extra claims set at mint time (upload tickets carry `max_bytes`, `max_files`, `file_ttl`). */
  claims?: Record<string, string | number | boolean>;
  /** The token's unique id; an upload in progress claims it (else `fileId`). */
  jti?: string;
  /**
   * Whether the token works once. An upload with a single-use ticket claims it while it runs, so a
   * second upload with the same ticket gets `409 UPLOAD_IN_PROGRESS` at once.
   * @default true (treated as single-use when absent)
   */
  singleUse?: boolean;
  /**
   * Expiry, milliseconds since the epoch (a `SignedUrlMinter` sets it). A tus upload under the ticket
   * expires with it (`Upload-Expires`).
   */
  exp?: number;
}

/**
 * The one signer port: what the pieces ask of a URL signer. `SignedUrlMinter` is the built-in one;
 * each piece takes only the members it uses (`Pick<UrlSigner, "downloadUrl" | "scopeRefs">` for
 * `Artifacts` and the registry, `"mint" | "scopeRefs"` for upload tickets, `"verify" | "consume" |
 * "basePath" | "scopeRefs"` for the routes), so another token scheme can stand behind any of them.
 *
 * @example
 * ```ts
 * const signer: UrlSigner = new SignedUrlMinter({ secret, baseUrl: "https://files.example.com", state });
 * const artifacts = new Artifacts({ store, minter: signer });
 * ```
 */
export interface UrlSigner {
  /**
   * How scopes become opaque references in URIs and handles (`SignedUrlMinter` has one, keyed by
   * its secret). Without it, the unkeyed reference.
   */
  readonly scopeRefs?: ScopeRefs;
  /** Path prefix of the signed URLs, e.g. `/files` (the routes serve under it). */
  readonly basePath: string;
  /**
   * The signer's clock in ms since the epoch: tokens and tickets expire by it, so pieces that tell a
   * live ticket from an expired one ask it. Without it, `Date.now()`.
   */
  now?(): number;
  /** Mints an upload ticket: its URL, its token, and when it expires (ms since the epoch). */
  mint(options: {
    scope: string;
    fileId: string;
    action: "upload";
    ttl?: Duration;
    singleUse?: boolean;
    claims?: Record<string, SignedClaimValue>;
  }): Promise<{ url: string; token: string; expiresAt: number }>;
  /**
   * A short-lived URL that downloads `file`, and when it expires (ms since the epoch). `claims` are
   * extra data to sign into the URL.
   */
  downloadUrl(
    file: Pick<StoredFile, "scope" | "id">,
    options?: { ttl?: Duration; claims?: Record<string, SignedClaimValue> },
  ): Promise<{ url: string; expiresAt: number }>;
  /**
   * Verifies a token for an action. Fails with `INVALID_TOKEN`, `TOKEN_EXPIRED`,
   * `TOKEN_ALREADY_USED` or `NOT_FOUND`.
   */
  verify(
    token: string,
    expected: { action: "download" | "upload"; consume?: boolean },
  ): Promise<VerifiedTokenClaims>;
  /**
   * Uses up a single-use token verified with `consume: false`; fails with `TOKEN_ALREADY_USED` if
   * another request won. When absent, tokens are used up by `verify` itself.
   */
  consume?(claims: VerifiedTokenClaims): Promise<void>;
}
