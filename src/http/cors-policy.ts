/**
 * The file routes' `allowedOrigins` option, checked when the routes are made (`createFileRoutes`):
 * which foreign origins may read the routes' replies. What a request then runs of it (the verdict on
 * its `Origin`, the preflight, the headers) is in `cors.ts`.
 */

/** The checked `allowedOrigins` option. */
export type CorsPolicy =
  | { kind: "any" }
  | { kind: "list"; origins: ReadonlySet<string> }
  | { kind: "function"; allow: (origin: string, request: Request) => boolean | Promise<boolean> };

/** Whether `value` is a serialized http(s) origin (`https://host[:port]`, nothing else). */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * Checks `allowedOrigins`; `undefined` when CORS is off. Throws the message part of an
 * `INVALID_OPTION` error (the caller names the option).
 */
export function resolveCorsPolicy(
  value:
    | readonly string[]
    | "*"
    | ((origin: string, request: Request) => boolean | Promise<boolean>)
    | undefined,
): CorsPolicy | undefined {
  if (value === undefined) return undefined;
  if (value === "*") return { kind: "any" };
  if (typeof value === "function") return { kind: "function", allow: value };
  if (!Array.isArray(value)) {
    throw new TypeError('must be a list of origins, a function (origin, request) => boolean, or "*"');
  }
  const origins = new Set<string>();
  for (const origin of value as unknown[]) {
    if (typeof origin !== "string" || !isOrigin(origin)) {
      throw new TypeError(
        `must hold exact origins like "https://app.example.com" (scheme, host, optional port; no path, no trailing slash), got ${JSON.stringify(origin)}`,
      );
    }
    origins.add(origin);
  }
  return { kind: "list", origins };
}
