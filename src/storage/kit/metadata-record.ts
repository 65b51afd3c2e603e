/**
 * The metadata record a driver keeps beside a file's bytes (`fsStore`'s `.json` file, `s3Store`'s
 * metadata object): one versioned JSON shape, written last so that it is what makes a file visible,
 * and read back strictly (anything that is not a complete record of the expected id is `null`).
 */
import type { FileKind, StoredFile } from "../types.js";

const RECORD_VERSION = 1;
const KINDS: ReadonlySet<string> = new Set(["upload", "artifact", "file"]);

/**
 * The JSON text of a file's metadata record.
 *
 * @example
 * ```ts
 * await writeFile(metaPath, serializeMetadataRecord(file), { flag: "wx" });
 * ```
 */
export function serializeMetadataRecord(file: StoredFile, inline?: Uint8Array): string {
  const record = JSON.stringify({ v: RECORD_VERSION, ...file });
  if (inline === undefined) return record;
  // The same text as `JSON.stringify({ ...record, inline: base64 })`: base64 needs no escaping, so
  // the bytes are appended as they are instead of being scanned by `JSON.stringify` (a tenth of the
  // time for a 4 KiB file), and read in place rather than copied.
  const bytes = Buffer.from(inline.buffer, inline.byteOffset, inline.byteLength);
  return `${record.slice(0, -1)},"inline":"${bytes.toString("base64")}"}`;
}

/**
 * The bytes of {@link serializeMetadataRecord}'s text (UTF-8), built in one buffer: the inline
 * bytes' base64 is written straight into it instead of being joined into a string first and then
 * encoded (a second copy of a few KiB per small file).
 *
 * @example
 * ```ts
 * await writeFile(metaPath, metadataRecordBytes(file, bytes), { flag: "wx" });
 * ```
 */
export function metadataRecordBytes(file: StoredFile, inline?: Uint8Array): Buffer {
  const record = JSON.stringify({ v: RECORD_VERSION, ...file });
  if (inline === undefined) return Buffer.from(record, "utf8");
  const head = `${record.slice(0, -1)},"inline":"`;
  const headBytes = Buffer.byteLength(head, "utf8");
  const base64Bytes = 4 * Math.ceil(inline.byteLength / 3);
  const out = Buffer.allocUnsafe(headBytes + base64Bytes + 2);
  out.write(head, 0, "utf8");
  const bytes = Buffer.from(inline.buffer, inline.byteOffset, inline.byteLength);
  out.write(bytes.toString("base64"), headBytes, "latin1");
  out.write('"}', headBytes + base64Bytes, "latin1");
  return out;
}

/**
 * A parsed record: the file, and its bytes (base64) when a driver kept a small file inside its
 * record (`fsStore` does, up to a few KiB: one file on disk instead of two).
 *
 * @example
 * ```ts
 * const record = parseStoredRecord(text, id);
 * const bytes = record?.inline === undefined ? undefined : Buffer.from(record.inline, "base64");
 * ```
 */
export interface StoredRecord {
  readonly file: StoredFile;
  readonly inline?: string;
}

/**
 * Parses a metadata record with its inline bytes, if any; `null` for anything that is not a
 * complete record of file `id` (inline bytes of the wrong length included).
 *
 * @example
 * ```ts
 * const record = parseStoredRecord(await readFile(metaPath, "utf8"), id); // StoredRecord | null
 * ```
 */
export function parseStoredRecord(text: string, id: string): StoredRecord | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const file = recordOf(raw, id);
  if (!file) return null;
  const { inline } = raw;
  if (inline === undefined) return { file };
  if (typeof inline !== "string" || Buffer.byteLength(inline, "base64") !== file.size) return null;
  return { file, inline };
}

/**
 * Parses a metadata record; `null` for anything that is not a complete record of file `id`.
 *
 * @example
 * ```ts
 * const file = parseMetadataRecord(await readFile(metaPath, "utf8"), id); // StoredFile | null
 * ```
 */
export function parseMetadataRecord(text: string, id: string): StoredFile | null {
  return parseStoredRecord(text, id)?.file ?? null;
}

function recordOf(raw: Record<string, unknown>, id: string): StoredFile | null {
  if (typeof raw !== "object" || raw === null || raw.v !== RECORD_VERSION || raw.id !== id) return null;
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
