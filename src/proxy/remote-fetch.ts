/**
 * Requests of the connect shim to its remote (issue 21, part 2): they follow redirects by hand.
 * A `Location` on the remote's own origin is followed for a few hops (GET only); one anywhere else
 * is refused with a clear message, so the configured headers (an `x-api-key`, a bearer token) never
 * reach another origin and nothing another origin serves is saved. An upload (POST) follows no
 * redirect at all: a 303 would otherwise turn it into a GET carrying the headers.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";

/** Most same-origin redirects a download follows. */
export const MAX_REDIRECTS = 3;

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Fetches `url` (which must be on `origin`) with `init`, following only same-origin redirects, and
 * only for a GET. Throws `HOST_NOT_ALLOWED` for a URL or a redirect off the origin, `FETCH_FAILED`
 * for too many redirects or a redirected upload.
 */
export async function fetchOnOrigin(url: string, origin: string, init: RequestInit): Promise<Response> {
  let current = url;
  const method = (init.method ?? "GET").toUpperCase();
  for (let hop = 0; ; hop++) {
    if (originOf(current) !== origin) {
      throw new FileBridgeError(
        "HOST_NOT_ALLOWED",
        hop === 0
          ? `${current} is not on the remote's own origin (${origin})`
          : `the remote redirected to another origin (${originOf(current) ?? "an invalid URL"}); not followed, and no configured header was sent there`,
        { data: { origin } },
      );
    }
    const response = await fetch(current, { ...init, redirect: "manual" });
    if (!isRedirect(response.status)) return response;
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    if (method !== "GET") {
      throw new FileBridgeError(
        "FETCH_FAILED",
        `the remote answered the upload with a redirect (HTTP ${response.status}); uploads follow no redirect`,
        { data: { status: response.status } },
      );
    }
    if (location === null) {
      throw new FileBridgeError(
        "FETCH_FAILED",
        `the remote answered HTTP ${response.status} without a Location`,
        {
          data: { status: response.status },
        },
      );
    }
    if (hop >= MAX_REDIRECTS) {
      throw new FileBridgeError("FETCH_FAILED", `the remote redirected more than ${MAX_REDIRECTS} times`, {
        data: { limit: MAX_REDIRECTS },
      });
    }
    try {
      current = new URL(location, current).href;
    } catch {
      current = location;
    }
  }
}
