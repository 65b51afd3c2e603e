import { FileBridgeError } from "../errors/file-bridge-error.js";

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
