import { createHash } from "node:crypto";
import type { FileKind, StoredFile } from "../storage/types.js";

/** Suffix of a file's metadata object, beside its data object. */
export const META_SUFFIX = ".json";
const META_VERSION = 1;
const KINDS: ReadonlySet<string> = new Set(["upload", "artifact", "file"]);

/** The object-key layout of one store: `<prefix><sha256(scope)[0..32]>/<id>` (+ `.json`). */
export class S3Keys {
  constructor(readonly prefix: string) {}

  /** The folder of a scope: a hash, never the scope itself. */
  scopeFolder(scope: string): string {
    return `${this.prefix}${createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32)}/`;
  }

  data(scope: string, id: string): string {
    return this.scopeFolder(scope) + id;
  }

  meta(scope: string, id: string): string {
    return this.scopeFolder(scope) + id + META_SUFFIX;
  }
}

/** The metadata object's body. */
export function serializeMeta(file: StoredFile): string {
  return JSON.stringify({ v: META_VERSION, ...file });
}

/** Parses a metadata object; `null` for anything that is not a complete record of this id. */
export function parseMeta(text: string, id: string): StoredFile | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof raw !== "object" || raw === null || raw.v !== META_VERSION || raw.id !== id) return null;
  const { scope, name, mimeType, size, sha256, createdAt, expiresAt, kind, metadata } = raw;
  if (
    typeof scope !== "string" ||
    typeof name !== "string" ||
    typeof mimeType !== "string" ||
    typeof size !== "number" ||
    typeof sha256 !== "string" ||
    typeof createdAt !== "number" ||
    (expiresAt !== undefined && typeof expiresAt !== "number") ||
    typeof kind !== "string" ||
    !KINDS.has(kind)
  ) {
    return null;
  }
  const file: { -readonly [K in keyof StoredFile]: StoredFile[K] } = {
    id,
    scope,
    name,
    mimeType,
    size,
    sha256,
    createdAt,
    kind: kind as FileKind,
  };
  if (expiresAt !== undefined) file.expiresAt = expiresAt;
  if (typeof metadata === "object" && metadata !== null) {
    const copy: Record<string, string> = {};
    for (const [key, value] of Object.entries(metadata)) if (typeof value === "string") copy[key] = value;
    file.metadata = Object.freeze(copy);
  }
  return Object.freeze(file);
}
