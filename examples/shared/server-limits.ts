/**
 * Shared by the examples: the limits a public HTTP server needs besides the file routes' own (issue
 * 21, item 8). Node's defaults let a socket that never sends a byte sit for a minute or more, and
 * nothing stops one session from minting upload tickets as fast as it can call the tool.
 */
import type { ServerOptions } from "node:http";

/**
 * `node:http` server options the examples start with:
 * - `headersTimeout` 10 s: a client must send its whole request head (a socket that sends nothing,
 *   or dribbles header bytes, gets `408` and is closed);
 * - `requestTimeout` 16 min: a whole request, body included, at most the file routes'
 *   `uploadTimeout` (15 min) plus a margin (the routes answer their own 408 first; slow bodies are
 *   cut earlier by `minUploadRate`);
 * - `keepAliveTimeout` 5 s: an idle keep-alive connection is closed;
 * - `connectionsCheckingInterval` 1 s: how often Node checks the two timeouts above (30 s by
 *   default, which lets a silent socket live up to 30 s past `headersTimeout`).
 *
 * The socket inactivity `timeout` stays off: MCP's SSE streams are legitimately quiet for minutes.
 */
export const HTTP_SERVER_TIMEOUTS: Readonly<HttpServerTimeouts> = {
  headersTimeout: 10_000,
  requestTimeout: 16 * 60_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
};

/** The `node:http` timeouts the examples set (milliseconds). */
export interface HttpServerTimeouts {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
}

/** The timeouts of {@link HTTP_SERVER_TIMEOUTS}, with overrides (tests shorten them). */
export function httpServerOptions(overrides: Partial<HttpServerTimeouts> = {}): ServerOptions {
  return { ...HTTP_SERVER_TIMEOUTS, ...overrides };
}

/**
 * A fixed-window rate limit per scope, in this process only (the examples' servers now count in the
 * state store: {@link EXAMPLE_SHARED_TICKET_RATE_LIMIT}): at most `max` per scope in each `windowMs`. The counters are dropped at each
 * new window, so the map holds at most one entry per scope active in the current window. In-process
 * only: replicas each count their own (a deployment-wide limit would count in the shared state, e.g.
 * Redis `INCR` with an expiry).
 *
 * @example
 * ```ts
 * new UploadHandleResolver({ store, minter, state, rateLimit: ticketRateLimit({ max: 20, windowMs: 60_000 }) });
 * ```
 */
export function ticketRateLimit(
  { max, windowMs }: { max: number; windowMs: number },
  now: () => number = Date.now,
): (info: { scope: string }) => boolean {
  const counts = new Map<string, number>();
  let windowStart = now();
  return ({ scope }) => {
    const time = now();
    if (time - windowStart >= windowMs) {
      counts.clear();
      windowStart = time;
    }
    const count = (counts.get(scope) ?? 0) + 1;
    counts.set(scope, count);
    return count <= max;
  };
}

/** 20 upload URLs per scope per minute, for the in-process {@link ticketRateLimit}. */
export const EXAMPLE_TICKET_RATE_LIMIT = { max: 20, windowMs: 60_000 } as const;

/**
 * The ticket rate limit the examples' servers use: 20 upload URLs per scope per minute, counted in
 * the resolver's state store (`UploadHandleResolver`'s `rateLimit: { max, window }`), so replicas
 * sharing Redis share the budget and every minter (the tool, `files/authorizeUpload`, …) asks it.
 */
export const EXAMPLE_SHARED_TICKET_RATE_LIMIT = { max: 20, window: "1m" } as const;
