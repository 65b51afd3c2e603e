/** Small response and error helpers shared by the file routes. */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { ResolvedRouteOptions } from "./options.js";

export const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

export function jsonResponse(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...extra } });
}

export function errorResponse(error: unknown, extra: Record<string, string> = {}): Response {
  const known = isFileBridgeError(error) ? error : new FileBridgeError("STORAGE_ERROR", "Internal error");
  // The files extension's reason (`digestMismatch`, `maxSizeExceeded`, …) travels with the code.
  const reason = known.data?.reason;
  return jsonResponse(
    known.status,
    {
      error: {
        code: known.code,
        message: known.message,
        hint: known.hint,
        ...(typeof reason === "string" ? { reason } : {}),
      },
    },
    extra,
  );
}

export function methodNotAllowed(allow: string): Response {
  return errorResponse(new FileBridgeError("METHOD_NOT_ALLOWED", "Method not allowed on this route"), {
    allow,
  });
}

export function invalidToken(): FileBridgeError {
  return new FileBridgeError("INVALID_TOKEN", "The link is malformed");
}

export function report(config: ResolvedRouteOptions, error: unknown): void {
  try {
    config.onError?.(error);
  } catch {
    // a failing error reporter must not break a response
  }
}
