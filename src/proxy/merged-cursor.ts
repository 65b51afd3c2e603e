/**
 * The cursor of a listing the proxy merges from several sources (each upstream's resources, then
 * its own): the index of the source that has more, and that source's own cursor, as one opaque
 * base64url string. A cursor that does not decode is `-32602` "Invalid cursor".
 */
import { RPC, RpcError } from "./types.js";

/** Wraps a source's cursor with the source's index. */
export function encodeCursor(index: number, cursor: unknown): string {
  return Buffer.from(JSON.stringify({ i: index, c: cursor ?? null })).toString("base64url");
}

/** Unwraps a cursor of {@link encodeCursor}; no cursor starts at the first source. */
export function decodeCursor(cursor: unknown): { i: number; c: string | undefined } {
  if (cursor === undefined) return { i: 0, c: undefined };
  try {
    const parsed = JSON.parse(Buffer.from(String(cursor), "base64url").toString("utf8")) as {
      i: unknown;
      c: unknown;
    };
    if (Number.isSafeInteger(parsed.i) && (parsed.c === null || typeof parsed.c === "string")) {
      return { i: parsed.i as number, c: (parsed.c as string | null) ?? undefined };
    }
  } catch {
    // fall through
  }
  throw new RpcError(RPC.INVALID_PARAMS, "Invalid cursor");
}
