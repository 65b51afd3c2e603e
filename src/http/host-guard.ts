import type { IncomingHttpHeaders } from "node:http";

/** The host names a server bound to loopback answers to by default. */
export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/** Whether a bind address is loopback only. */
export function isLoopbackBind(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || host.startsWith("127.");
}

/** The hostname of a `Host` header value or an `Origin` URL, or `null` when it does not parse. */
function hostnameOf(value: string, isOrigin: boolean): string | null {
  try {
    return new URL(isOrigin ? value : `http://${value}`).hostname;
  } catch {
    return null;
  }
}

/**
 * Why a request fails the DNS-rebinding guard, or `null` when its `Host` (and `Origin`, when
 * `checkOrigin` and one is sent) names an allowed host. A web page whose domain was made to resolve
 * to 127.0.0.1 sends its own domain in both, so it cannot talk to a local server.
 */
export function hostRefusal(
  headers: IncomingHttpHeaders,
  allowed: readonly string[],
  checkOrigin = true,
): string | null {
  const host = headers.host;
  if (!host) return "Missing Host header";
  const hostname = hostnameOf(host, false);
  if (hostname === null || !allowed.includes(hostname)) return `Invalid Host: ${host}`;
  const origin = headers.origin;
  if (checkOrigin && origin !== undefined && origin !== "null") {
    const originHost = hostnameOf(origin, true);
    if (originHost === null || !allowed.includes(originHost)) return `Invalid Origin: ${origin}`;
  }
  return null;
}
