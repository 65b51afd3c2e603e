import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type ScopeRefs, scopeRefsOf } from "./scope-refs.js";

/**
 * The parts of an MCP request context (the SDK's `RequestHandlerExtra`) a scope can come from.
 * Structural, so any SDK version's `extra` fits: SDK v1's `extra` as it is, and an SDK v2 context
 * either as the pieces hand it to scope functions (normalized once by the host adapter or by
 * `withFiles` / `withArtifacts`, with these fields added) or raw (auth in `http.authInfo`).
 *
 * @example
 * ```ts
 * const source: ScopeSource = { authInfo: { token, clientId: "app-1", scopes: [], extra: { sub: "user-42" } } };
 * defaultScope(source); // "user-42": the authenticated user, never the client application
 * ```
 */
export interface ScopeSource {
  /** MCP session id (stateful Streamable HTTP). */
  sessionId?: string | undefined;
  /**
   * Verified auth info, if the transport authenticated the caller. The user is read from
   * `extra.sub` (a string), which is where a token verifier should put the token's subject.
   */
  authInfo?: { clientId?: string | undefined; extra?: Record<string, unknown> | undefined } | undefined;
  /** The raw HTTP request info. Its presence means the request came over HTTP. */
  requestInfo?: { headers?: Record<string, string | string[] | undefined> } | undefined;
  /**
   * How the request arrived, when the host knows: `"http"` (Streamable HTTP or SSE) or `"local"`
   * (stdio, in-process). Without it, a request with `requestInfo` counts as HTTP.
   */
  transport?: "http" | "local" | undefined;
  /**
   * A raw SDK v2 context's HTTP part: present exactly when the request came over HTTP, with the
   * verified auth info. Read only when `transport` is absent (a context nobody normalized).
   */
  http?: { authInfo?: ScopeSource["authInfo"] } | undefined;
}

/** The verified auth info of a source: `authInfo`, or a raw SDK v2 context's `http.authInfo`. */
function authOf(extra: ScopeSource): ScopeSource["authInfo"] {
  return extra.authInfo ?? (extra.transport === undefined ? extra.http?.authInfo : undefined);
}

/**
 * Derives the scope of a request: the access boundary. It must come from verified identity (the
 * authenticated user, a session the caller proved it holds, a header checked against the caller's
 * credentials), never from a bare client-supplied value. Return a non-empty string, or throw
 * `FORBIDDEN` to refuse the call.
 *
 * @example
 * ```ts
 * // A tenant id your token verifier put in authInfo.extra, checked there, not taken from a header.
 * const scope: ScopeFunction = (extra) => {
 *   const tenant = extra.authInfo?.extra?.tenantId;
 *   if (typeof tenant !== "string") throw new FileBridgeError("FORBIDDEN", "no tenant in the token");
 *   return tenant;
 * };
 * const artifacts = new Artifacts({ store, scope });
 * ```
 */
export type ScopeFunction = (extra: ScopeSource) => string;

/**
 * The one scope of a single-connection transport (stdio, in-process): there is exactly one client.
 * Never used over HTTP.
 *
 * @example
 * ```ts
 * defaultScope({}) === DEFAULT_SCOPE; // true: a stdio server has one client, no session, no auth
 * ```
 */
export const DEFAULT_SCOPE = "default";

/** The authenticated user of a request (`authInfo.extra.sub`), if the verifier recorded one. */
export function subjectOf(extra: ScopeSource): string | undefined {
  const sub = authOf(extra)?.extra?.sub;
  return typeof sub === "string" && sub.length > 0 ? sub : undefined;
}

/** True when the request came over HTTP (many clients can reach the server). */
export function isHttpRequest(extra: ScopeSource): boolean {
  if (extra.transport !== undefined) return extra.transport === "http";
  return extra.requestInfo !== undefined || extra.http !== undefined;
}

/**
 * The default scope function. It fails closed:
 * 1. the authenticated user (`authInfo.extra.sub`), when the transport verified a token;
 * 2. else the MCP session id (stateful Streamable HTTP: the caller proved it holds the session);
 * 3. else, over HTTP, the call is refused with `FORBIDDEN` — a stateless server without auth
 *    cannot tell two clients apart, and a shared constant would let one read the other's files;
 * 4. else (stdio, in-process: one client) `"default"`.
 * The OAuth client id is never a scope: it names the application, shared by all its users.
 *
 * @example
 * ```ts
 * defaultScope({ sessionId: "3f2a…", requestInfo: { headers: {} } }); // "3f2a…"
 * defaultScope({ requestInfo: { headers: {} } }); // throws FORBIDDEN: configure a scope
 * defaultScope({}); // "default" (stdio)
 * ```
 */
export function defaultScope(extra: ScopeSource): string {
  // Reads the fields as they are (a raw SDK v2 context through `http`): normalizing is the
  // adapters' job, done once per call before any piece runs.
  const subject = subjectOf(extra);
  if (subject !== undefined) return subject;
  if (extra.sessionId) return extra.sessionId;
  if (isHttpRequest(extra) || authOf(extra) !== undefined) {
    adviseAuthor();
    throw new FileBridgeError(
      "FORBIDDEN",
      "files on this server belong to a signed-in user or to an MCP session, and this request has neither: " +
        "sign in (send an access token) or connect with a session, then try again",
      { data: { reason: "no_scope" } },
    );
  }
  return DEFAULT_SCOPE;
}

/** What the server's author can do about a `no_scope` refusal: logged, never sent to the client. */
export const NO_SCOPE_ADVICE =
  "mcp-file-bridge refused an HTTP request that has neither an MCP session nor an authenticated user " +
  "(FORBIDDEN, reason no_scope). Use a stateful Streamable HTTP server (sessionIdGenerator), authenticate " +
  "callers and put the user id in authInfo.extra.sub, or pass a `scope` function that derives the scope " +
  "from verified identity.";

let advised = false;

/** Logs {@link NO_SCOPE_ADVICE} once per process as a Node warning (`MCP_FILE_BRIDGE_NO_SCOPE`). */
function adviseAuthor(): void {
  if (advised) return;
  advised = true;
  process.emitWarning(NO_SCOPE_ADVICE, { code: "MCP_FILE_BRIDGE_NO_SCOPE" });
}

/**
 * The opaque reference that stands for a scope in anything shareable: resource URIs, upload
 * handles, artifact URIs, tool text, upload replies. A scope is often a bearer value (an MCP
 * session id is one when the transport has no auth), so it never appears there itself.
 *
 * Given a `SignedUrlMinter` (anything with its `scopeRefs`), the reference is an HMAC under a key
 * derived from the minter's secret: the same on every replica sharing the secret and after a
 * restart, and nobody without the secret can compute the reference of a guessable scope (a user
 * name). Without one, it is the unkeyed SHA-256 of the scope (128 bits, base64url), which reveals
 * nothing about a random scope such as a session id but can be computed for a guessable one. The
 * pieces use their minter's references. A reference is only ever compared with the reference of
 * the caller's own scope; it grants nothing.
 *
 * @example
 * ```ts
 * const ref = scopeRef("user-42", minter); // "q3X0…", 22 characters, keyed by the minter's secret
 * `upload://sessions/${ref}/${file.id}`;
 * ```
 */
export function scopeRef(scope: string, minter?: { readonly scopeRefs?: ScopeRefs }): string {
  return scopeRefsOf(minter).of(scope);
}

/** Longest scope string accepted. */
export const MAX_SCOPE_LENGTH = 256;

/**
 * Checks that a scope is usable: a non-empty string of at most 256 characters, well-formed Unicode
 * (no lone surrogate), without control characters. Scopes are never used as paths as they are
 * (stores hash them), but they appear in URIs. A lone surrogate has no UTF-8 spelling: hashed or
 * sealed it becomes U+FFFD, so two such scopes (or one and a scope holding U+FFFD) would share a
 * folder, a reference and a seal.
 */
export function assertScope(scope: unknown): asserts scope is string {
  if (typeof scope !== "string" || scope.length === 0 || scope.length > MAX_SCOPE_LENGTH) {
    throw new FileBridgeError("INVALID_INPUT", "scope must be a non-empty string of at most 256 characters");
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(scope)) {
    throw new FileBridgeError("INVALID_INPUT", "scope must not contain control characters");
  }
  if (!(scope as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new FileBridgeError("INVALID_INPUT", "scope must be well-formed Unicode (it has a lone surrogate)");
  }
}
