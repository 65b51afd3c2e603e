/** The byte-range rule every driver shares. */
import { FileBridgeError } from "../../errors/file-bridge-error.js";

/**
 * True for a safe integer ≥ 0 (sizes, offsets, caps).
 *
 * @example
 * ```ts
 * isSafeNonNegativeInteger(options.maxBytes); // false for -1, 2.5 or 2 ** 60
 * ```
 */
export function isSafeNonNegativeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Validates a byte range against a size; returns inclusive `[start, end]`.
 *
 * @example
 * ```ts
 * const { start, end } = resolveRange(range, file.size) ?? { start: 0, end: file.size - 1 };
 * ```
 */
export function resolveRange(
  range: { start: number; end?: number } | undefined,
  size: number,
): { start: number; end: number } | null {
  if (range === undefined) return null;
  const { start, end } = typeof range === "object" && range !== null ? range : { start: -1, end: undefined };
  const bad =
    !isSafeNonNegativeInteger(start) ||
    (end !== undefined && !isSafeNonNegativeInteger(end)) ||
    start >= size ||
    (end !== undefined && end < start);
  if (bad) {
    throw new FileBridgeError("RANGE_NOT_SATISFIABLE", "the byte range is outside the file", {
      data: { size },
    });
  }
  return { start, end: Math.min(end ?? size - 1, size - 1) };
}
