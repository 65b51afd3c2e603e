import { FileBridgeError } from "../errors/file-bridge-error.js";

/** Value of each base64 / base64url character (both alphabets), -1 for anything else. */
const VALUES = new Int8Array(128).fill(-1);
for (const [i, c] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"].entries()) {
  VALUES[c.charCodeAt(0)] = i;
}
VALUES["+".charCodeAt(0)] = 62;
VALUES["-".charCodeAt(0)] = 62;
VALUES["/".charCodeAt(0)] = 63;
VALUES["_".charCodeAt(0)] = 63;

const WHITESPACE_GLOBAL = /[\t\n\f\r ]+/g;
/**
 * A character Node's decoder would cut to its low byte (`"aGk\u0141"` decodes like `"aGkA"`). On a
 * one-byte string (what `JSON.parse` makes of ASCII) V8 answers without scanning.
 */
const WIDE = /[\u0100-\uffff]/;

/** The shape of a base64 string once padding is accounted for. */
export interface Base64Layout {
  /** Characters that carry data (padding excluded). */
  readonly dataLength: number;
  /** Exact number of bytes the string decodes to. */
  readonly byteLength: number;
}

function invalid(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_BASE64", message);
}

/**
 * Checks the lengths and padding of a base64 string without whitespace and returns how many bytes it
 * decodes to — without decoding, so size caps can be enforced first. Throws `INVALID_BASE64` for
 * impossible lengths or misplaced padding. Characters are checked by {@link decodeBase64Strict}.
 */
export function base64Layout(text: string): Base64Layout {
  let dataLength = text.length;
  let padding = 0;
  while (padding < 2 && dataLength > 0 && text.charCodeAt(dataLength - 1) === 0x3d /* = */) {
    dataLength--;
    padding++;
  }
  if (padding > 0 && text.length % 4 !== 0) throw invalid("base64 padding does not match the length");
  if (dataLength % 4 === 1) throw invalid("base64 length is impossible (one character too many or few)");
  if (padding > 0 && (dataLength % 4) + padding !== 4) throw invalid("base64 has too much padding");
  return { dataLength, byteLength: Math.floor((dataLength * 3) / 4) };
}

/**
 * The exact decoded size of a base64 string that may contain ASCII whitespace, without decoding.
 * Throws `INVALID_BASE64` when the length or padding is impossible.
 */
export function base64DecodedLength(text: string): number {
  return base64Layout(stripBase64Whitespace(text)).byteLength;
}

/** Removes ASCII whitespace (line breaks in MIME-style base64) when there is any. */
export function stripBase64Whitespace(text: string): string {
  return hasBase64Whitespace(text) ? text.replace(WHITESPACE_GLOBAL, "") : text;
}

/**
 * Checks that the unused low bits of the last data character are zero, as a canonical encoder
 * writes them; otherwise two different strings would decode to the same bytes.
 */
function assertCanonicalTail(text: string, dataLength: number): void {
  const rest = dataLength % 4;
  if (rest === 0) return;
  const code = text.charCodeAt(dataLength - 1);
  const value = code < 128 ? (VALUES[code] as number) : -1;
  if (value < 0) throw invalid("base64 contains a character outside the alphabet");
  const unusedBits = rest === 2 ? 0b1111 : 0b11;
  if ((value & unusedBits) !== 0) throw invalid("base64 is not canonical (non-zero trailing bits)");
}

/**
 * Refuses what Node's decoder would misread instead of skip: characters above U+00FF (read as their
 * low byte; those from U+0080 to U+00FF are skipped, so the length check catches them) and a text
 * that uses both alphabets (`+` or `/` together with `-` or `_`).
 */
function assertAlphabet(text: string): void {
  if (WIDE.test(text)) throw invalid("base64 contains a non-ASCII character");
  // `+` or `/` turn up within the first few characters of standard base64, so the two full scans
  // are for "-" and "_" (or, for URL-safe text, the other way round).
  const standard = text.includes("+") || text.includes("/");
  if (standard && (text.includes("-") || text.includes("_"))) {
    throw invalid("base64 mixes the standard (+/) and URL-safe (-_) alphabets");
  }
}

/**
 * Decodes a base64 chunk that has no whitespace and whose layout was checked; throws
 * `INVALID_BASE64` when any character is outside the alphabet. Node's decoder skips invalid
 * characters, so a decoded length short of the computed one means the input was not clean base64.
 */
export function decodeBase64Chunk(text: string, expectedBytes: number): Buffer {
  const bytes = Buffer.from(text, "base64");
  if (bytes.length !== expectedBytes) throw invalid("base64 contains a character outside the alphabet");
  return bytes;
}

/**
 * Strict base64 decoding, fast: the standard or the URL-safe alphabet (RFC 4648 §4 and §5, not
 * both in one text), optional padding (which must then be right), canonical trailing bits, ASCII
 * whitespace ignored, and nothing else (no character above U+007F either). Throws `INVALID_BASE64` for any other input. `maxBytes` is checked from
 * the length before anything is decoded (`FILE_TOO_LARGE`).
 *
 * @example
 * ```ts
 * decodeBase64Strict("aGVsbG8=").toString(); // "hello"
 * ```
 */
export function decodeBase64Strict(input: string, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  const text = stripBase64Whitespace(input);
  const layout = base64Layout(text);
  if (layout.byteLength > maxBytes) {
    throw new FileBridgeError("FILE_TOO_LARGE", `decoded content is ${layout.byteLength} bytes`, {
      data: { limit: maxBytes, size: layout.byteLength },
    });
  }
  assertCanonicalTail(text, layout.dataLength);
  assertAlphabet(text);
  return decodeBase64Chunk(text, layout.byteLength);
}

/** Characters a string must be made of to be considered base64 at all (before strict checks). */
export const BASE64_CHARSET = /^[A-Za-z0-9+/_\-\t\n\f\r ]+={0,2}[\t\n\f\r ]*$/;

/** True when the string holds ASCII whitespace; `includes` per character is far faster than a regex scan. */
export function hasBase64Whitespace(text: string): boolean {
  return (
    text.includes("\n") ||
    text.includes("\r") ||
    text.includes(" ") ||
    text.includes("\t") ||
    text.includes("\f")
  );
}

/**
 * Iterates over the decoded bytes of a base64 string that has no whitespace, in chunks of about
 * `chunkBytes`, so a large payload never needs a second full-size buffer. Same strictness as
 * {@link decodeBase64Strict}; the layout (and so the size) is checked before the first chunk is
 * produced. Callers that may see whitespace strip it first ({@link stripBase64Whitespace}).
 */
export function* decodeBase64Chunks(text: string, chunkBytes = 4 * 1024 * 1024): Generator<Buffer> {
  const layout = base64Layout(text);
  assertCanonicalTail(text, layout.dataLength);
  assertAlphabet(text);
  const chunkChars = Math.max(4, Math.floor(chunkBytes / 3) * 4);
  for (let start = 0; start < layout.dataLength; start += chunkChars) {
    const end = Math.min(start + chunkChars, layout.dataLength);
    const expected = Math.floor(((end - start) * 3) / 4);
    yield decodeBase64Chunk(text.slice(start, end), expected);
  }
}

/** A base64 text ready to decode and its decoded size. */
export interface Base64Plan {
  /** The text to decode (the input itself when it looked clean, else normalized). */
  readonly text: string;
  /** Exact decoded size, if the text is valid. */
  readonly byteLength: number;
  /** True when `text` was normalized already (a retry would not change it). */
  readonly normalized: boolean;
}

/**
 * Plans decoding without scanning a clean input: if the length and padding of the input as given are
 * plausible it is used as is (a stray character still fails the decode, and the caller can retry with
 * `normalize`); otherwise it is normalized first. Throws `INVALID_BASE64` when even the normalized
 * text has an impossible length.
 */
export function planBase64(
  input: string,
  normalize: (text: string) => string = stripBase64Whitespace,
): Base64Plan {
  try {
    return { text: input, byteLength: base64Layout(input).byteLength, normalized: false };
  } catch (error) {
    const text = normalize(input);
    if (text === input) throw error;
    return { text, byteLength: base64Layout(text).byteLength, normalized: true };
  }
}
