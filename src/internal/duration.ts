import { FileBridgeError } from "../errors/file-bridge-error.js";

/**
 * A duration: a number of seconds, or a string such as `"90s"`, `"5m"`, `"2h"`, `"7d"`.
 *
 * @example
 * ```ts
 * const ttl: Duration = "15m"; // or 900 (seconds)
 * const { url } = await minter.downloadUrl(file, { ttl });
 * ```
 */
export type Duration = number | `${number}${"ms" | "s" | "m" | "h" | "d"}`;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Converts a {@link Duration} to milliseconds; `option` names the option in the error. */
export function durationToMs(value: Duration, option: string): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value < 0) {
      throw new FileBridgeError("INVALID_OPTION", `${option} must be a non-negative number of seconds`);
    }
    return value * 1000;
  }
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(String(value).trim());
  if (!match) {
    throw new FileBridgeError(
      "INVALID_OPTION",
      `${option} must be seconds or a string like "5m", got ${value}`,
    );
  }
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}
