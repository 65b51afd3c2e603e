/**
 * The synchronous HS256 check of a compact JWS: the signature with `node:crypto` (one HMAC on the
 * calling thread), then the header and registered claims exactly as `jose`'s `jwtVerify` checks them
 * for the options `SignedUrlMinter` uses. WebCrypto's `subtle.verify` runs each HMAC as a thread-pool
 * job; for a 200-byte token that round trip cost more than the HMAC itself on every upload and
 * download request.
 */

import type { JWTPayload } from "jose";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { timingSafeEqual } from "../internal/node-builtins.js";
import { invalidToken } from "./claims.js";
import type { HmacSha256 } from "./hmac.js";

/** What a token must carry besides a valid signature. */
export interface Hs256Expectations {
  /** The `typ` header, compared as `jose` does (case-insensitive, `application/` optional). */
  typ: string;
  issuer: string;
  /** Claims that must be present (`iat`, `exp`, `jti`). */
  requiredClaims: readonly string[];
  /** Current time, in milliseconds. */
  now: number;
  /** Clock tolerance, in whole seconds. */
  clockToleranceSeconds: number;
}

function normalizeTyp(value: string): string {
  const lower = value.toLowerCase();
  return lower.startsWith("application/") ? lower.slice("application/".length) : lower;
}

function jsonObject(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch (cause) {
    throw invalidToken("The token is invalid.", cause);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidToken("The token is invalid.");
  }
  return value as Record<string, unknown>;
}

/** A numeric date claim: absent, or a number (`jose` refuses any other type). */
function numericDate(payload: Record<string, unknown>, claim: string): number | undefined {
  const value = payload[claim];
  if (value === undefined) return undefined;
  if (typeof value !== "number") throw invalidToken("The token is invalid.");
  return value;
}

/** The header segment `verifyHs256` read last, and what it parsed to. */
let lastHeader: { part: string; value: Record<string, unknown> } = { part: "", value: {} };

/**
 * Verifies a canonical compact JWS (the caller checked its shape) signed with HS256 by one of `keys`
 * (by `kid`), then its `typ`, issuer, required claims, `nbf` and `exp`. Fails with `INVALID_TOKEN`, or
 * `TOKEN_EXPIRED` for a token past its `exp` (beyond the tolerance), in the order `jose` checks.
 *
 * @example
 * ```ts
 * const { payload, kid } = verifyHs256(token, keys, { typ, issuer, requiredClaims: ["exp"], now: Date.now(), clockToleranceSeconds: 5 });
 * ```
 */
export function verifyHs256(
  token: string,
  keys: ReadonlyMap<string, HmacSha256>,
  expect: Hs256Expectations,
): { payload: JWTPayload; kid: string } {
  const [headerPart, payloadPart, signaturePart] = token.split(".") as [string, string, string];
  // Every token of one minter key has the same header: the last one read is kept (read-only).
  let header: Record<string, unknown>;
  if (headerPart === lastHeader.part) header = lastHeader.value;
  else {
    header = jsonObject(headerPart);
    lastHeader = { part: headerPart, value: header };
  }
  if (header.alg !== "HS256") throw invalidToken("The token is invalid.");
  // `crit` and `b64` change how a token is read; this package never sets them.
  if (header.crit !== undefined || header.b64 !== undefined) throw invalidToken("The token is invalid.");
  const key = typeof header.kid === "string" ? keys.get(header.kid) : undefined;
  if (key === undefined) throw invalidToken("The token was signed with an unknown key.");
  const expected = key.digest(`${headerPart}.${payloadPart}`);
  const signature = Buffer.from(signaturePart, "base64url");
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
    throw invalidToken("The token is invalid.");
  }
  const payload = jsonObject(payloadPart);
  if (typeof header.typ !== "string" || normalizeTyp(header.typ) !== normalizeTyp(expect.typ)) {
    throw invalidToken("The token is invalid.");
  }
  for (const claim of [...expect.requiredClaims, "iss"]) {
    if (!Object.hasOwn(payload, claim)) throw invalidToken("The token is invalid.");
  }
  if (payload.iss !== expect.issuer) throw invalidToken("The token is invalid.");
  const now = Math.floor(expect.now / 1000);
  const tolerance = expect.clockToleranceSeconds;
  numericDate(payload, "iat");
  const nbf = numericDate(payload, "nbf");
  if (nbf !== undefined && nbf > now + tolerance) throw invalidToken("The token is invalid.");
  const exp = numericDate(payload, "exp");
  if (exp !== undefined && exp <= now - tolerance) {
    throw new FileBridgeError("TOKEN_EXPIRED", "The token has expired.");
  }
  return { payload: payload as JWTPayload, kid: header.kid as string };
}

/**
 * Signs `payload` as a compact JWS with HS256 (the header `{alg, typ, kid}`), synchronously: the same
 * bytes `jose`'s `SignJWT` produces for the same header and claims.
 *
 * @example
 * ```ts
 * const token = signHs256({ iss: "app", exp: 1900000000 }, key, { typ: "mcp-file-bridge+jwt", kid: "default" });
 * ```
 */
export function signHs256(
  payload: Record<string, unknown>,
  key: HmacSha256,
  header: { typ: string; kid: string },
): string {
  const input = `${headerSegment(header.typ, header.kid)}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}`;
  return `${input}.${key.digest(input).toString("base64url")}`;
}

/** Encoded headers by `typ` and `kid` (a minter has a few keys, and one `typ`). */
const headerSegments = new Map<string, string>();

/** The base64url of the header `{alg: "HS256", typ, kid}`. */
function headerSegment(typ: string, kid: string): string {
  const key = `${typ}\n${kid}`;
  let segment = headerSegments.get(key);
  if (segment === undefined) {
    segment = Buffer.from(JSON.stringify({ alg: "HS256", typ, kid })).toString("base64url");
    if (headerSegments.size >= 64) headerSegments.clear();
    headerSegments.set(key, segment);
  }
  return segment;
}
