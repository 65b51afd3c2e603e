/**
 * The list rules every driver shares: page limits, kind filter, opaque cursors, the sorted-id
 * search, and expiry (with the unref'd sweep timer).
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { FileKind, StoredFile } from "../types.js";
import { KINDS } from "./put-plan.js";

/**
 * Most files one list page returns.
 *
 * @example
 * ```ts
 * listLimit(5000) === MAX_LIST_LIMIT; // true: larger pages are clamped
 * ```
 */
export const MAX_LIST_LIMIT = 1000;
/**
 * Page size when none is given.
 *
 * @example
 * ```ts
 * listLimit(undefined) === DEFAULT_LIST_LIMIT; // true
 * ```
 */
export const DEFAULT_LIST_LIMIT = 100;

/**
 * Validates a list limit: a positive integer; larger than {@link MAX_LIST_LIMIT} is clamped.
 *
 * @example
 * ```ts
 * const limit = listLimit(options.limit); // INVALID_INPUT for 0, -1 or 2.5
 * ```
 */
export function listLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
    throw new FileBridgeError("INVALID_INPUT", "limit must be a positive integer");
  }
  return Math.min(limit, MAX_LIST_LIMIT);
}

/**
 * Validates a list kind filter.
 *
 * @example
 * ```ts
 * const kind = listKind(options.kind); // "upload" | "artifact" | "file" | undefined
 * ```
 */
export function listKind(kind: unknown): FileKind | undefined {
  if (kind === undefined) return undefined;
  if (!KINDS.has(kind as FileKind)) {
    throw new FileBridgeError("INVALID_INPUT", `kind must be "upload", "artifact" or "file"`);
  }
  return kind as FileKind;
}

/**
 * The opaque cursor for "after this id".
 *
 * @example
 * ```ts
 * return { files, nextCursor: encodeCursor(files[files.length - 1].id) };
 * ```
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`v1:${lastId}`, "utf8").toString("base64url");
}

/**
 * The id a cursor made by {@link encodeCursor} points after; `INVALID_CURSOR` otherwise.
 *
 * @example
 * ```ts
 * const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
 * ```
 */
export function decodeCursor(cursor: unknown): string {
  if (
    typeof cursor !== "string" ||
    cursor.length === 0 ||
    cursor.length > 64 ||
    !/^[A-Za-z0-9_-]+$/.test(cursor)
  ) {
    throw new FileBridgeError("INVALID_CURSOR", "the list cursor is not valid");
  }
  const decoded = Buffer.from(cursor, "base64url").toString("utf8");
  const id = decoded.startsWith("v1:") ? decoded.slice(3) : "";
  if (!/^[0-9a-hjkmnp-tv-z]{26}$/.test(id) || encodeCursor(id) !== cursor) {
    throw new FileBridgeError("INVALID_CURSOR", "the list cursor is not valid");
  }
  return id;
}

/**
 * Index of the first element of sorted `ids` that is greater than `id` (binary search).
 *
 * @example
 * ```ts
 * const start = after === undefined ? 0 : upperBound(sortedIds, after);
 * ```
 */
export function upperBound(ids: readonly string[], id: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((ids[mid] as string) <= id) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * True when a file with this expiry is gone at `now`.
 *
 * @example
 * ```ts
 * return file && !isExpired(file, now()) ? file : null;
 * ```
 */
export function isExpired(file: Pick<StoredFile, "expiresAt">, now: number): boolean {
  return file.expiresAt !== undefined && file.expiresAt <= now;
}

/**
 * An `unref`'d interval that does not keep the process alive; `null` when `ms` is 0/undefined.
 *
 * @example
 * ```ts
 * const timer = unrefInterval(sweepMs, sweep); // never keeps the process alive
 * ```
 */
export function unrefInterval(ms: number | undefined, task: () => unknown): NodeJS.Timeout | null {
  if (!ms) return null;
  const timer = setInterval(() => {
    Promise.resolve()
      .then(task)
      .catch(() => {});
  }, ms);
  timer.unref();
  return timer;
}
