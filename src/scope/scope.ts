import { FileBridgeError } from "../errors/file-bridge-error.js";

/**
 * The parts of an MCP request context (the SDK's `RequestHandlerExtra`) a scope can come from.
 * Structural, so any SDK version's `extra` fits.
 *
 * @example
 * ```ts
 * const source: ScopeSource = { authInfo: { clientId: "client-42" } };
 * defaultScope(source); // "client-42" (no session id)
 * ```
 */
export interface ScopeSource {
  /** MCP session id (Streamable HTTP). */
  sessionId?: string | undefined;
  /** Verified auth info, if the transport authenticated the caller. */
  authInfo?: { clientId?: string | undefined; extra?: Record<string, unknown> | undefined } | undefined;
  /** The raw HTTP request info, if any (headers). */
  requestInfo?: { headers?: Record<string, string | string[] | undefined> } | undefined;
}

/**
 * Derives the scope of a request. Return a non-empty string.
 *
 * @example
 * ```ts
 * const scope: ScopeFunction = (extra) => String(extra.authInfo?.extra?.tenantId ?? defaultScope(extra));
 * const artifacts = new Artifacts({ store, scope });
 * ```
 */
export type ScopeFunction = (extra: ScopeSource) => string;

/**
 * Scope used when a request has neither a session id nor an authenticated client.
 *
 * @example
 * ```ts
 * defaultScope({}) === DEFAULT_SCOPE; // true: a stdio server has no session id and no auth
 * ```
 */
export const DEFAULT_SCOPE = "default";

/**
 * The default scope function: the MCP session id, else the authenticated client id, else
 * `"default"` (a single-user stdio server).
 *
 * @example
 * ```ts
 * const scope = defaultScope(extra); // "3f2a…" for a Streamable HTTP session
 * ```
 */
export function defaultScope(extra: ScopeSource): string {
  if (extra.sessionId) return extra.sessionId;
  const clientId = extra.authInfo?.clientId;
  if (clientId) return clientId;
  return DEFAULT_SCOPE;
}

/** Longest scope string accepted. */
export const MAX_SCOPE_LENGTH = 256;

/**
 * Checks that a scope is usable: a non-empty string of at most 256 characters without control
 * characters. Scopes are never used as paths as they are (stores hash them), but they appear in URIs.
 */
export function assertScope(scope: unknown): asserts scope is string {
  if (typeof scope !== "string" || scope.length === 0 || scope.length > MAX_SCOPE_LENGTH) {
    throw new FileBridgeError("INVALID_INPUT", "scope must be a non-empty string of at most 256 characters");
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(scope)) {
    throw new FileBridgeError("INVALID_INPUT", "scope must not contain control characters");
  }
}
