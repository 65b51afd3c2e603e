/**
 * A rate limit for upload tickets counted in the `StateStore`, so replicas that share one (Redis)
 * share one budget: with three replicas behind a balancer, 20 per scope per minute stays 20, not 60.
 *
 * Counting uses only `setIfAbsent`, which every state store makes atomic: the n-th ticket of a
 * scope in a window claims the key `…:<window>:<n>`; a call that finds all `max` keys taken is
 * refused. Each instance remembers the highest slot it saw taken, so a call usually costs one
 * claim, and a call past the budget costs none.
 */

import { type Duration, durationToMs } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import { optionCheck } from "../internal/options.js";
import type { StateStore } from "../storage/types.js";
import type { UploadTicketRateLimitInfo } from "./types.js";

const check = optionCheck("ticketRateLimit");

/** The counting (`claimTicketSlot`, with the resolver's later parts), loaded at the first ask (issue 39). */
const loadLater = firstUse(() => import("./resolver-later.js"));

/**
 * Options of {@link ticketRateLimit}.
 *
 * @example
 * ```ts
 * const options: TicketRateLimitOptions = { state: redisState({ url }), max: 20, window: "1m" };
 * ```
 */
export interface TicketRateLimitOptions {
  /** Where the counts live: the state store every replica shares (e.g. `redisState()`). */
  state: StateStore;
  /** Tickets one scope may mint per window (at most 1000). */
  max: number;
  /** Length of the fixed window. @default "1m" */
  window?: Duration;
  /** Clock, in milliseconds since the epoch. @default Date.now */
  now?: () => number;
}

/**
 * A rate limit for `UploadHandleResolver`'s `rateLimit` (every ticket minter asks it: the
 * upload-URL tool, `files/authorizeUpload`, `files/prepareUpload`, file requests, the proxy's
 * upload tool): at most `max` tickets per scope in each fixed `window`, counted in `state`.
 *
 * @example
 * ```ts
 * // What `new UploadHandleResolver({ …, state, rateLimit: { max: 20, window: "1m" } })` builds:
 * const limit = ticketRateLimit({ state, max: 20, window: "1m" }); // state: e.g. redisState(), shared
 * await limit({ scope: "alice" }); // true up to 20 times a minute across every replica
 * ```
 */
export function ticketRateLimit(
  options: TicketRateLimitOptions,
): (info: Pick<UploadTicketRateLimitInfo, "scope">) => Promise<boolean> {
  if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
  const { state, max } = options;
  if (!state || typeof state.setIfAbsent !== "function") throw check.error("state", "must be a StateStore");
  if (!Number.isSafeInteger(max) || max < 1 || max > 1000) {
    throw check.error("max", "must be an integer from 1 to 1000");
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  const windowMs = durationToMs(options.window ?? "1m", "ticketRateLimit: window");
  if (windowMs < 1000) throw check.error("window", "must be at least 1s");
  const now = options.now ?? Date.now;
  /** Per scope and window: the lowest slot that may still be free, as far as this instance knows. */
  const hints = new Map<string, number>();

  const limit = { state, max, windowMs, hints };
  return async ({ scope }) => {
    const time = now(); // the window of the ask, not of the load's end
    return (await loadLater()).claimTicketSlot(limit, scope, time);
  };
}
