/** The outcome of reading a `Range` header against a file size. */
export type RangeResult =
  | { readonly kind: "full" }
  | { readonly kind: "partial"; readonly start: number; readonly end: number }
  | { readonly kind: "unsatisfiable" };

const FULL: RangeResult = { kind: "full" };
const UNSATISFIABLE: RangeResult = { kind: "unsatisfiable" };

/**
 * Reads a single `bytes=` range (RFC 9110 §14): `first-last`, `first-` and `-suffix`. A missing,
 * malformed or multi-range header is ignored (the whole file is served, as RFC 9110 allows); a range
 * that starts past the end, or any range on an empty file, is unsatisfiable.
 */
export function parseRange(header: string | null | undefined, size: number): RangeResult {
  if (!header) return FULL;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return FULL;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return FULL;
  if (first === "") {
    const suffix = Number(last);
    if (!Number.isSafeInteger(suffix)) return FULL;
    if (suffix === 0 || size === 0) return UNSATISFIABLE;
    return { kind: "partial", start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? Number.POSITIVE_INFINITY : Number(last);
  if (!Number.isSafeInteger(start) || (last !== "" && !Number.isSafeInteger(end))) return FULL;
  if (end < start) return FULL;
  if (start >= size) return UNSATISFIABLE;
  return { kind: "partial", start, end: Math.min(end, size - 1) };
}
