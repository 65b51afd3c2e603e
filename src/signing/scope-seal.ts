/**
 * The scope inside a signed URL, sealed: a token's payload is only base64url, readable by anyone who
 * holds the URL, and a scope is often a bearer value (an MCP session id). So the scope travels
 * encrypted with AES-256-GCM under a key derived (HKDF-SHA256) from the same signing secret, with a
 * fresh IV per token and the token's `jti` as associated data (a sealed scope cannot be moved into
 * another token). The JWS signature still covers it, as every other claim.
 */
import { createCipheriv, createDecipheriv, hkdfSync } from "node:crypto";
import { pooledRandomBytes } from "../internal/random-pool.js";

const INFO = "mcp-file-bridge/signed-url/scope-seal/v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key that seals scopes for one signing key. */
export type SealKey = Buffer;

/** Derives the sealing key of one signing secret. */
export function sealKeyFor(secret: Uint8Array): SealKey {
  return Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), INFO, 32));
}

/** Seals `scope` for the token with this `jti`: base64url of IV ‖ ciphertext ‖ tag. */
export function sealScope(key: SealKey, scope: string, jti: string): string {
  const iv = pooledRandomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(jti, "utf8"));
  const body = Buffer.concat([cipher.update(scope, "utf8"), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** Opens a sealed scope, or returns `null` when it was not sealed by this key for this `jti`. */
export function openScope(key: SealKey, sealed: string, jti: string): string | null {
  const raw = Buffer.from(sealed, "base64url");
  if (raw.length < IV_BYTES + TAG_BYTES + 1 || raw.toString("base64url") !== sealed) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(jti, "utf8"));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    return null;
  }
}
