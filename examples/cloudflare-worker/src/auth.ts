import type { Env } from "./env.js";

const encoder = new TextEncoder();

async function digest(value: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

/** Compares two digests in time independent of where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length && i < b.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/**
 * The user a request's bearer token stands for, or `undefined`. The token is checked against the
 * `USER_TOKENS` secret here, in the Worker: this is the only place a user id comes from. A real
 * deployment puts an OAuth provider (`@cloudflare/workers-oauth-provider`) or a JWT check here.
 */
export async function verifiedUser(request: Request, env: Env): Promise<string | undefined> {
  const match = /^Bearer ([^\s]+)$/.exec(request.headers.get("authorization") ?? "");
  if (!match) return undefined;
  const presented = await digest(match[1] as string);
  let user: string | undefined;
  for (const pair of env.USER_TOKENS.split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    // Every pair is compared, so the time taken says nothing about which one matched.
    if (sameBytes(await digest(pair.slice(0, at).trim()), presented)) user ??= pair.slice(at + 1).trim();
  }
  return user || undefined;
}
