/** Small response and error helpers shared by the file routes. */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { textResponse } from "../internal/text-response.js";
import type { PlainAnswer } from "./request-view.js";

export const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

export function jsonResponse(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return textResponse(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...extra } });
}

export function errorResponse(error: unknown, extra: Record<string, string> = {}): Response {
  const answer = errorAnswer(error, extra);
  return textResponse(answer.text, { status: answer.status, headers: answer.headers });
}

/** The JSON error answer of {@link errorResponse}, before it becomes a `Response`. */
export function errorAnswer(error: unknown, extra: Record<string, string> = {}): PlainAnswer {
  const known = isFileBridgeError(error) ? error : new FileBridgeError("STORAGE_ERROR", "Internal error");
  // The files extension's reason (`digestMismatch`, `maxSizeExceeded`, …) travels with the code.
  const reason = known.data?.reason;
  const body = {
    error: {
      code: known.code,
      message: known.message,
      hint: known.hint,
      ...(typeof reason === "string" ? { reason } : {}),
    },
  };
  return { status: known.status, headers: { ...JSON_HEADERS, ...extra }, text: JSON.stringify(body) };
}

/**
 * 405 with `Allow`, a message naming the methods, and for a browser (`Accept: text/html`) opening an
 * upload link, a page with one sentence saying what the link is for and what to do instead.
 */
export function methodNotAllowed(allow: string, request?: Request, route?: string): Response {
  const upload = route === "upload";
  const message = upload
    ? `This is an upload link: send files to it with ${allow.replace(", ", " or ")} (multipart/form-data or the raw bytes); ${request?.method ?? "this method"} does nothing here`
    : `This route accepts ${allow} only`;
  if (upload && request?.method === "GET" && wantsHtml(request)) {
    const page =
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Upload link</title></head><body>' +
      "<h1>This is an upload link</h1><p>It takes files from the app that asked for them; it has no page to " +
      "show here. Go back to the chat and ask for an upload page, or send the files with the app.</p></body></html>";
    return new Response(page, {
      status: 405,
      headers: {
        allow,
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'",
      },
    });
  }
  return errorResponse(new FileBridgeError("METHOD_NOT_ALLOWED", message), { allow });
}

function wantsHtml(request: Request): boolean {
  return /\btext\/html\b/i.test(request.headers.get("accept") ?? "");
}

export function invalidToken(): FileBridgeError {
  return new FileBridgeError("INVALID_TOKEN", "The link is malformed");
}

/** Hands a server-side failure to the routes' `onError`; a reporter that throws is ignored. */
export function report(config: { onError?: ((error: unknown) => void) | undefined }, error: unknown): void {
  try {
    config.onError?.(error);
  } catch {
    // a failing error reporter must not break a response
  }
}
