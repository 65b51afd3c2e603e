import type { IncomingHttpHeaders } from "node:http";

/** The host names a server bound to loopback answers to by default. */
export const LOOPBACK_HOSTS: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

/**
 * Whether a bind address is loopback only: `localhost`, 127.0.0.0/8, and `::1` or an IPv4-mapped
 * 127.x address however an IPv6 address is written (`0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1`).
 */
export function isLoopbackBind(host: string): boolean {
  if (host === "localhost" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  if (!host.includes(":")) return false;
  let normalized: string;
  try {
    normalized = new URL(`http://[${host.replace(/^\[|\]$/g, "")}]`).hostname;
  } catch {
    return false;
  }
  // `::ffff:127.x.y.z` is normalized to `[::ffff:7fxx:yyzz]`.
  return normalized === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(normalized);
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
