/**
 * CORS for the file routes (`allowedOrigins`): which foreign origins may read the routes' replies,
 * the preflight answer, and the headers every reply then carries. A request from an origin that is
 * not allowed is refused before its token is looked at, so a page that may not read the reply can
 * never use up a single-use ticket. The option's check is in `cors-policy.ts` (run when the routes
 * are made); this file is what requests run, loaded with the routes' work at their first request.
 */
import type { CorsPolicy } from "./cors-policy.js";
import type { PlainAnswer, RequestView } from "./request-view.js";

export type { CorsPolicy } from "./cors-policy.js";

/** What the router learned about a request's origin. */
export type CorsVerdict =
  /** No `Origin`, or the routes' own: plain same-origin handling. */
  | { kind: "same" }
  /** A foreign origin that may read replies; `allowOrigin` is the `Access-Control-Allow-Origin` value. */
  | { kind: "allowed"; allowOrigin: string }
  /** A foreign origin that may not: answer 403 at once. */
  | { kind: "refused" };

export const CORS_ALLOW_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
export const CORS_ALLOW_HEADERS =
  "Content-Type, Content-Disposition, X-Content-SHA256, Range, If-Range, If-None-Match, " +
  // tus 1.0 (the resumable endpoint)
  "Tus-Resumable, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Defer-Length, Upload-Concat, " +
  "Upload-Checksum, X-HTTP-Method-Override, X-Requested-With";
export const CORS_EXPOSE_HEADERS =
  "ETag, Content-Range, Content-Disposition, Location, Tus-Resumable, Tus-Version, Tus-Extension, " +
  "Tus-Max-Size, Tus-Checksum-Algorithm, Upload-Offset, Upload-Length, Upload-Metadata, " +
  "Upload-Defer-Length, Upload-Concat, Upload-Expires, Upload-Handle, Upload-Sha256";
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * Decides about a request's `Origin`. The routes' own origin is the request URL's, or any origin
 * when the browser says the request is same-origin (`Sec-Fetch-Site: same-origin`, a header pages
 * cannot set): behind a TLS-terminating proxy the request URL may say `http:` while the page that
 * posts to it is on `https:`.
 */
export async function corsVerdict(policy: CorsPolicy, request: RequestView): Promise<CorsVerdict> {
  const origin = request.header("origin");
  if (origin === null) return { kind: "same" };
  if (request.header("sec-fetch-site") === "same-origin") return { kind: "same" };
  if (origin === request.url.origin) return { kind: "same" };
  switch (policy.kind) {
    case "any":
      return { kind: "allowed", allowOrigin: "*" };
    case "list":
      return policy.origins.has(origin) ? { kind: "allowed", allowOrigin: origin } : { kind: "refused" };
    case "function":
      return (await policy.allow(origin, request.web())) === true
        ? { kind: "allowed", allowOrigin: origin }
        : { kind: "refused" };
  }
}

/** Whether a request is a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`). */
export function isPreflight(request: RequestView): boolean {
  return request.method === "OPTIONS" && request.header("access-control-request-method") !== null;
}

/** The `204` answer to an allowed origin's preflight. */
export function preflightResponse(allowOrigin: string): Response {
  const { status, headers } = preflightAnswer(allowOrigin);
  return new Response(null, { status, headers });
}

/** {@link preflightResponse} as a plain answer (the Node adapter's native tus path). */
export function preflightAnswer(allowOrigin: string): PlainAnswer {
  return {
    status: 204,
    headers: {
      "access-control-allow-origin": allowOrigin,
      "access-control-allow-methods": CORS_ALLOW_METHODS,
      "access-control-allow-headers": CORS_ALLOW_HEADERS,
      "access-control-max-age": String(CORS_MAX_AGE_SECONDS),
      vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    },
    text: "",
  };
}

/**
 * Adds the CORS headers to a reply, in place (the Node adapter recognizes its download bodies by the
 * `Response` object, so it is not copied). Replies of an origin-dependent policy always carry
 * `Vary: Origin`, so a cache never hands one origin's reply to another. Never
 * `Access-Control-Allow-Credentials`: the token in the URL is the whole authorization.
 */
export function withCorsHeaders(response: Response, policy: CorsPolicy, verdict: CorsVerdict): Response {
  try {
    applyCorsHeaders(response.headers, policy, verdict);
    return response;
  } catch {
    // Immutable headers (a fetched reply passed through): answer a copy.
    const copy = new Response(response.body, response);
    applyCorsHeaders(copy.headers, policy, verdict);
    return copy;
  }
}

/** {@link withCorsHeaders} for a plain answer (the Node adapter's native upload path): a copy. */
export function withCorsRecord<T extends PlainAnswer>(
  answer: T,
  policy: CorsPolicy,
  verdict: CorsVerdict,
): T {
  // Copied with `Object.assign` onto a new object, not a spread: V8 adds a header to a spread copy
  // through its slow path every time (~0.5 us), to an assigned one through a cached transition.
  const headers: Record<string, string> = Object.assign({}, answer.headers);
  if (verdict.kind === "allowed") {
    headers["access-control-allow-origin"] = verdict.allowOrigin;
    headers["access-control-expose-headers"] = CORS_EXPOSE_HEADERS;
  }
  if (policy.kind !== "any") {
    const vary = headers.vary;
    if (!vary?.split(",").some((part) => part.trim().toLowerCase() === "origin")) {
      headers.vary = vary ? `${vary}, Origin` : "Origin";
    }
  }
  return { ...answer, headers };
}

function applyCorsHeaders(headers: Headers, policy: CorsPolicy, verdict: CorsVerdict): void {
  if (verdict.kind === "allowed") {
    headers.set("access-control-allow-origin", verdict.allowOrigin);
    headers.set("access-control-expose-headers", CORS_EXPOSE_HEADERS);
  }
  if (policy.kind !== "any") {
    const vary = headers.get("vary");
    if (!vary?.split(",").some((part) => part.trim().toLowerCase() === "origin")) {
      headers.set("vary", vary ? `${vary}, Origin` : "Origin");
    }
  }
}
