/**
 * A `SignedUrlMinter`'s signing and checking, once a call's arguments are checked: its HMAC keys and
 * scope seals (built from its checked secrets on the first `mint` or `verify`), the HS256 signature,
 * the sealed scope, and this package's claims read back from a verified token. Loaded on the first
 * `mint` or `verify` (issue 39: importing the package does not compile it; docs/architecture.md,
 * "loaded on first use"); the class, its option checks and each call's argument checks stay in
 * signed-url-minter.ts.
 */
import type { JWTPayload } from "jose";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type BridgeClaims, invalidToken, readExtraClaims } from "./claims.js";
import { HmacSha256 } from "./hmac.js";
import { signHs256, verifyHs256 } from "./hs256.js";
import { ScopeSeal } from "./scope-seal.js";
import type { SignedAction, SignedClaimValue, VerifiedToken } from "./types.js";

/** One of a minter's keys, its secret checked and copied. */
export interface MinterSecret {
  kid: string;
  bytes: Uint8Array<ArrayBuffer>;
}

/** What a minted token says, besides the sealed scope and the issuer. */
export interface TokenFields {
  scope: string;
  fileId: string;
  action: SignedAction;
  singleUse: boolean;
  extra: Record<string, SignedClaimValue> | undefined;
  jti: string;
  /** Seconds since the epoch. */
  iat: number;
  exp: number;
  /** Seconds since the epoch; no `nbf` claim when absent. */
  nbf?: number;
}

/** What a token must carry besides a valid signature (the minter's settings and clock). */
export interface TokenChecks {
  typ: string;
  issuer: string;
  /** Current time, in milliseconds. */
  now: number;
  toleranceMs: number;
}

/**
 * The HMAC keys and scope seals of one minter, by `kid` (synchronous: signing and verifying take no
 * thread-pool trip). The first key signs.
 *
 * @example
 * ```ts
 * const keys = new MinterKeys([{ kid: "default", bytes }]);
 * const token = keys.sign(fields, "app", "mcp-file-bridge+jwt");
 * ```
 */
export class MinterKeys {
  readonly #hmacKeys: ReadonlyMap<string, HmacSha256>;
  readonly #signingKid: string;
  readonly #seals: ReadonlyMap<string, ScopeSeal>;

  constructor(list: readonly MinterSecret[]) {
    this.#hmacKeys = new Map(list.map(({ kid, bytes }) => [kid, new HmacSha256(bytes)]));
    this.#signingKid = (list[0] as MinterSecret).kid;
    this.#seals = new Map(list.map(({ kid, bytes }) => [kid, new ScopeSeal(bytes)]));
  }

  /** A compact JWS of `fields` (the scope sealed) with the signing key, issued by `issuer`. */
  sign(fields: TokenFields, issuer: string, typ: string): string {
    const payload: BridgeClaims = {
      scs: (this.#seals.get(this.#signingKid) as ScopeSeal).seal(fields.scope),
      fid: fields.fileId,
      act: fields.action,
    };
    if (fields.singleUse) payload.one = true;
    if (fields.extra !== undefined) payload.ext = fields.extra;
    const claims: Record<string, unknown> = {
      ...payload,
      iss: issuer,
      jti: fields.jti,
      iat: fields.iat,
      exp: fields.exp,
    };
    if (fields.nbf !== undefined) claims.nbf = fields.nbf;
    const key = this.#hmacKeys.get(this.#signingKid) as HmacSha256;
    return signHs256(claims, key, { typ, kid: this.#signingKid });
  }

  /**
   * A canonical token's signature, `kid`, `typ`, issuer, required claims, `nbf` and expiry (as jose
   * checks them), then this package's claims.
   */
  verify(token: string, checks: TokenChecks): VerifiedToken {
    const { payload, kid } = verifyHs256(token, this.#hmacKeys, {
      typ: checks.typ,
      issuer: checks.issuer,
      requiredClaims: ["iat", "exp", "jti"],
      now: checks.now,
      clockToleranceSeconds: Math.floor(checks.toleranceMs / 1000),
    });
    return readBridgeClaims(payload, kid, checks.now, this.#seals.get(kid) as ScopeSeal, checks.toleranceMs);
  }
}

/**
 * This package's claims of a signature-checked payload: shape, sealed scope (opened with
 * `seal`, the scope seal of the token's `kid`), `iat` (not after `now` + `toleranceMs`) and `exp`.
 */
export function readBridgeClaims(
  payload: JWTPayload,
  kid: string,
  now: number,
  seal: ScopeSeal,
  toleranceMs: number,
): VerifiedToken {
  const { scs, fid, act, one, jti, iat, exp } = payload as Partial<BridgeClaims>;
  const extra = readExtraClaims(payload.ext);
  const scp = typeof scs === "string" ? seal.open(scs) : null;
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
  if (iat * 1000 > now + toleranceMs) throw invalidToken("The token is not valid yet.");
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
