import { FileBridgeError } from "../errors/file-bridge-error.js";
import { isId } from "../internal/ids.js";
import { createHash } from "../internal/node-builtins.js";

const VERSION = "r1";

function scopeTag(scope: string): string {
  return createHash("sha256").update(scope).digest("base64url").slice(0, 8);
}

/**
 * An opaque `resources/list` cursor: the last id of the page, bound to the scope it was made for.
 * Ids sort by creation, so a cursor stays valid when files before or after it are removed.
 */
export function encodeListCursor(scope: string, lastId: string): string {
  return Buffer.from(`${VERSION}.${scopeTag(scope)}.${lastId}`, "utf8").toString("base64url");
}

/** The last id a cursor stands for; `INVALID_CURSOR` for anything else (also another scope's cursor). */
export function decodeListCursor(scope: string, cursor: unknown): string {
  if (typeof cursor !== "string" || cursor.length === 0 || cursor.length > 128) {
    throw new FileBridgeError("INVALID_CURSOR", "invalid cursor");
  }
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new FileBridgeError("INVALID_CURSOR", "invalid cursor");
  const [version, tag, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split(".");
  if (version !== VERSION || tag !== scopeTag(scope) || !isId(id) || rest.length > 0) {
    throw new FileBridgeError("INVALID_CURSOR", "invalid cursor");
  }
  return id;
}
