/**
 * What a file's bytes say it is, for checks that must not trust the declared type (a tool's
 * `x-mcp-file { accept }`): magic numbers of the common binary formats, a UTF-8 text heuristic, and
 * what neither can tell (docs/limits.md "What the type check can tell").
 */
import { isTextualMediaType, parseMediaType, sniffMediaType } from "./media-type.js";

/**
 * How many leading bytes {@link contentMediaType} is given (the rest of a file is not read for it).
 *
 * @example
 * ```ts
 * const head = bytes.subarray(0, CONTENT_SNIFF_BYTES);
 * ```
 */
export const CONTENT_SNIFF_BYTES = 4096;

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** Signatures beyond `sniffMediaType`'s (which come first): `at` is the offset of `bytes`. */
const MORE_SIGNATURES: ReadonlyArray<{ type: string; parts: Array<{ at: number; bytes: number[] }> }> = [
  {
    type: "image/webp",
    parts: [
      { at: 0, bytes: ascii("RIFF") },
      { at: 8, bytes: ascii("WEBP") },
    ],
  },
  {
    type: "audio/wav",
    parts: [
      { at: 0, bytes: ascii("RIFF") },
      { at: 8, bytes: ascii("WAVE") },
    ],
  },
  { type: "image/bmp", parts: [{ at: 0, bytes: ascii("BM") }] },
  { type: "image/tiff", parts: [{ at: 0, bytes: [0x49, 0x49, 0x2a, 0x00] }] },
  { type: "image/tiff", parts: [{ at: 0, bytes: [0x4d, 0x4d, 0x00, 0x2a] }] },
  { type: "image/x-icon", parts: [{ at: 0, bytes: [0x00, 0x00, 0x01, 0x00] }] },
  { type: "audio/mpeg", parts: [{ at: 0, bytes: ascii("ID3") }] },
  { type: "audio/ogg", parts: [{ at: 0, bytes: ascii("OggS") }] },
  { type: "audio/flac", parts: [{ at: 0, bytes: ascii("fLaC") }] },
  { type: "video/mp4", parts: [{ at: 4, bytes: ascii("ftyp") }] },
  { type: "video/webm", parts: [{ at: 0, bytes: [0x1a, 0x45, 0xdf, 0xa3] }] },
  { type: "application/x-7z-compressed", parts: [{ at: 0, bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] }] },
  { type: "application/vnd.rar", parts: [{ at: 0, bytes: ascii("Rar!\x1a\x07") }] },
  { type: "application/wasm", parts: [{ at: 0, bytes: [0x00, 0x61, 0x73, 0x6d] }] },
  { type: "application/x-sqlite3", parts: [{ at: 0, bytes: ascii("SQLite format 3\0") }] },
];

/**
 * Formats stored in a ZIP container: bytes starting `PK\x03\x04` are any of them (the check cannot
 * tell a `.docx` from a `.jar` without unpacking), so a declared one of these is taken as it is.
 */
const ZIP_BASED = new Set([
  "application/zip",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  "application/vnd.oasis.opendocument.text",
  "application/vnd.oasis.opendocument.spreadsheet",
  "application/vnd.oasis.opendocument.presentation",
  "application/epub+zip",
  "application/java-archive",
  "application/vnd.android.package-archive",
  "application/x-zip-compressed",
]);

/** Families whose members share one signature: a declared member is taken for the sniffed type. */
const SAME_SIGNATURE: Record<string, (declared: string) => boolean> = {
  "application/zip": (declared) => ZIP_BASED.has(declared),
  "application/gzip": (declared) =>
    declared === "application/x-gzip" || declared === "application/x-tar+gzip",
  "video/mp4": (declared) =>
    /^(video|audio)\/(mp4|quicktime|x-m4a|mp4a-latm|3gpp2?|x-m4v)$/.test(declared) ||
    declared === "image/heic" ||
    declared === "image/heif" ||
    declared === "image/avif",
  "video/webm": (declared) => declared === "audio/webm" || declared === "video/x-matroska",
  "audio/mpeg": (declared) => declared === "audio/mp3",
};

function matchesSignature(head: Uint8Array): string | null {
  const first = sniffMediaType(head);
  if (first) return first;
  for (const signature of MORE_SIGNATURES) {
    const matches = signature.parts.every(
      ({ at, bytes }) => head.length >= at + bytes.length && bytes.every((byte, i) => head[at + i] === byte),
    );
    if (matches) return signature.type;
  }
  return null;
}

/**
 * True when `head` reads as text: valid UTF-8 (a sequence cut at the end of the sample is allowed),
 * no NUL byte, and control characters other than tab, newline, carriage return and form feed in at
 * most 1 % of it. A UTF-8 or UTF-16 byte order mark counts as text.
 *
 * @example
 * ```ts
 * looksLikeText(Buffer.from("hello\n")); // true
 * looksLikeText(Buffer.from([0x89, 0x50, 0x4e, 0x47])); // false
 * ```
 */
export function looksLikeText(head: Uint8Array): boolean {
  if (head.length === 0) return false;
  if ((head[0] === 0xfe && head[1] === 0xff) || (head[0] === 0xff && head[1] === 0xfe)) return true;
  let controls = 0;
  let i = 0;
  while (i < head.length) {
    const byte = head[i] as number;
    if (byte === 0) return false;
    if (byte < 0x80) {
      if (byte < 0x20 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12) controls++;
      if (byte === 0x7f) controls++;
      i++;
      continue;
    }
    const length = byte >= 0xf0 && byte <= 0xf4 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc2 && byte < 0xe0 ? 2 : 0;
    if (length === 0 || byte > 0xf4) return false;
    for (let k = 1; k < length; k++) {
      if (i + k >= head.length) return true; // cut by the sample's end
      if (((head[i + k] as number) & 0xc0) !== 0x80) return false;
    }
    i += length;
  }
  return controls * 100 <= head.length;
}

/**
 * A hook for formats the built-in check does not know: given the first bytes and the declared
 * type, return the type the bytes are, or `undefined` to leave it to the built-in check.
 *
 * @example
 * ```ts
 * const sniff: ContentSniffer = (head) => (head[0] === 0x7b ? "application/json" : undefined);
 * ```
 */
export type ContentSniffer = (head: Uint8Array, declared: string) => string | undefined;

/**
 * The media type a file's bytes support, given the type it was declared (or named) as:
 *
 * 1. the `sniff` hook's answer, when it gives one;
 * 2. a known signature (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, PDF, ZIP and its family, GZIP, 7z,
 *    RAR, MP3, OGG, FLAC, WAV, MP4 family, WebM, WASM, SQLite): the sniffed type, or the declared
 *    one when it shares that signature (a `.docx` is a ZIP);
 * 3. text (see {@link looksLikeText}): the declared type when it is textual (`text/*`, JSON, XML,
 *    SVG, CSV, …: text formats have no signature to tell them apart), else `text/plain`;
 * 4. other bytes: `application/octet-stream` when the declared type is one that has a known
 *    signature or is textual (the bytes are not that), else the declared type (the check cannot
 *    tell).
 *
 * @example
 * ```ts
 * contentMediaType(Buffer.from("hello"), "image/png"); // "text/plain"
 * contentMediaType(pngBytes, "application/octet-stream"); // "image/png"
 * ```
 */
export function contentMediaType(head: Uint8Array, declared: string, sniff?: ContentSniffer): string {
  const essence = parseMediaType(declared)?.essence ?? "application/octet-stream";
  const hooked = sniff?.(head, essence);
  if (typeof hooked === "string" && hooked.length > 0) return parseMediaType(hooked)?.essence ?? hooked;
  const signed = matchesSignature(head);
  if (signed) return essence === signed || SAME_SIGNATURE[signed]?.(essence) ? essence : signed;
  if (looksLikeText(head)) return isTextualMediaType(essence) ? essence : "text/plain";
  if (hasSignature(essence) || isTextualMediaType(essence)) return "application/octet-stream";
  return essence;
}

/** True for a type the check knows a signature of (so bytes without it are not that type). */
function hasSignature(essence: string): boolean {
  if (ZIP_BASED.has(essence)) return true;
  if (MORE_SIGNATURES.some((signature) => signature.type === essence)) return true;
  return ["application/pdf", "image/png", "image/jpeg", "image/gif", "application/gzip"].includes(essence);
}

/**
 * Whether a media type matches one of `accept`'s patterns: `type/subtype` compared case-insensitively
 * (parameters ignored), `type/*` and `*\/*` wildcards.
 *
 * @example
 * ```ts
 * acceptsMediaType(["image/*"], "IMAGE/PNG"); // true
 * ```
 */
export function acceptsMediaType(accept: readonly string[], mimeType: string): boolean {
  const essence = parseMediaType(mimeType)?.essence;
  if (essence === undefined) return false;
  return accept.some((pattern) => {
    const wanted = parseMediaType(pattern)?.essence ?? pattern.trim().toLowerCase();
    if (wanted === "*/*" || wanted === essence) return true;
    return wanted.endsWith("/*") && essence.startsWith(wanted.slice(0, -1));
  });
}
