/**
 * Static bearer tokens for the proxy's HTTP endpoint (`proxy.auth.tokensEnv`): each token stands for
 * a user, and that user is the scope of the caller's files. For a deployment with an identity
 * provider, pass `authenticate` to `createFileProxy` instead (verify a JWT there).
 */
import * as crypto from "node:crypto";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { authenticatesByHeader, type ProxyAuthenticate, type ProxyAuthInfo } from "./http-host.js";

const USER = /^[A-Za-z0-9_.@-]{1,128}$/;

/** Node's one-shot `crypto.hash` (20.12 and later): no `Hash` object per request. */
const oneShot = (crypto as { hash?: typeof crypto.hash }).hash;

/** SHA-256 of `value`. */
function digest(value: string): Buffer {
  return oneShot ? oneShot("sha256", value, "buffer") : crypto.createHash("sha256").update(value).digest();
}

/**
 * Parses `user:token` pairs separated by commas or new lines (`alice:s3cret,bob:0th3r`).
 *
 * @throws FileBridgeError `INVALID_OPTION` for an empty list, a malformed pair, a token shorter than
 *   16 characters, or a token given twice.
 * @example
 * ```ts
 * const users = parseBearerTokens("alice:0123456789abcdef0123", "MCP_PROXY_TOKENS"); // Map { token → "alice" }
 * ```
 */
export function parseBearerTokens(value: string, source: string): Map<string, string> {
  const users = new Map<string, string>();
  let position = 0;
  for (const entry of value.split(/[,\n]/)) {
    const pair = entry.trim();
    if (pair === "") continue;
    position++;
    const at = pair.indexOf(":");
    const user = pair.slice(0, at);
    const token = pair.slice(at + 1);
    if (at <= 0 || !USER.test(user)) {
      throw new FileBridgeError(
        "INVALID_OPTION",
        // Never repeat the entry: it may be all token.
        `${source}: entry ${position} must look like user:token (user: letters, digits, _ . @ -)`,
        { data: { option: source } },
      );
    }
    if (token.length < 16) {
      throw new FileBridgeError(
        "INVALID_OPTION",
        `${source}: the token of ${user} is shorter than 16 characters`,
        {
          data: { option: source },
        },
      );
    }
    if (users.has(token)) {
      throw new FileBridgeError("INVALID_OPTION", `${source}: a token is given twice`, {
        data: { option: source },
      });
    }
    users.set(token, user);
  }
  if (users.size === 0) {
    throw new FileBridgeError("INVALID_OPTION", `${source} lists no user:token pair`, {
      data: { option: source },
    });
  }
  return users;
}

/**
 * An `authenticate` for the proxy from a token table: `Authorization: Bearer <token>` of a listed
 * token → that user (in `extra.sub`); no `Authorization` → anonymous; anything else → 401. Tokens
 * are compared in constant time.
 *
 * @example
 * ```ts
 * const authenticate = bearerTokens(parseBearerTokens(process.env.MCP_PROXY_TOKENS ?? "", "MCP_PROXY_TOKENS"));
 * const proxy = await createFileProxy({ config, authenticate });
 * ```
 */
export function bearerTokens(users: ReadonlyMap<string, string>): ProxyAuthenticate {
  const table = [...users].map(([token, user]) => ({ digest: digest(token), token, user }));
  const verify = (header: string | null): ProxyAuthInfo | undefined | false => {
    if (header === null) return undefined;
    const token = /^Bearer +(\S+)\s*$/i.exec(header)?.[1];
    if (token === undefined) return false;
    const presented = digest(token);
    let found: (typeof table)[number] | undefined;
    for (const entry of table) if (crypto.timingSafeEqual(entry.digest, presented)) found = entry;
    if (!found) return false;
    const auth: ProxyAuthInfo = {
      token: found.token,
      clientId: "mcp-file-bridge-proxy",
      scopes: [],
      extra: { sub: found.user },
    };
    return auth;
  };
  return authenticatesByHeader((request) => verify(request.headers.get("authorization")), verify);
}
