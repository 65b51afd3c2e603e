/**
 * Strict base64 decoding for every piece that takes base64 from a client (data URLs, object
 * content, bare base64, artifacts). One job: turn untrusted base64 text into bytes, refusing anything
 * that is not exactly base64, in bounded memory (window by window, never a copy of the whole text).
 *
 * Node's decoder is fast but lenient: it skips characters outside the alphabet, reads a character
 * above U+00FF as its low byte (`"aGk\u0141"` decodes like `"aGkA"`) and takes both alphabets at once.
 * So each window is decoded natively and its decoded length compared with what its characters must
 * give (a skipped character always makes it short); the two other cases are checked per window too.
 */

import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { nextTurn } from "../../internal/next-turn.js";

/** Value of each base64 / base64url character (both alphabets), -1 for anything else. */
const VALUES = new Int8Array(128).fill(-1);
for (const [i, c] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"].entries()) {
  VALUES[c.charCodeAt(0)] = i;
}
VALUES["+".charCodeAt(0)] = 62;
VALUES["-".charCodeAt(0)] = 62;
VALUES["/".charCodeAt(0)] = 63;
VALUES["_".charCodeAt(0)] = 63;

const WHITESPACE_CHARS = ["\n", "\r", " ", "\t", "\f"] as const;
/**
 * A character Node's decoder would cut to its low byte (`"aGk\u0141"` decodes like `"aGkA"`). On a
 * one-byte string (what `JSON.parse` makes of ASCII) V8 answers without scanning.
 */
const WIDE = /[\u0100-\uffff]/;
const EQUALS = 0x3d;

/** Decoded bytes per chunk of {@link decodeBase64Plan} unless the caller says otherwise. */
export const BASE64_CHUNK_BYTES = 4 * 1024 * 1024;
/**
 * Decoded bytes per chunk of {@link decodeBase64To}. Small enough that the event loop turns between
 * chunks often (the folder and the file get made while decoding goes on, each chunk's write starts at
 * once and runs beside the next chunk's decoding), large enough that a 64 MiB file is 256 writes.
 * Measured on 1, 16 and 64 MiB against 128 KiB to 4 MiB: best or level at every size.
 */
export const BASE64_WRITE_CHUNK_BYTES = 256 * 1024;

/**
 * Payloads up to this size are decoded and written in one piece by {@link decodeBase64To} (one write,
 * as `Buffer.from(b64)` + `writeFile` does); larger ones in {@link BASE64_WRITE_CHUNK_BYTES} chunks.
 */
export const BASE64_ONE_WRITE_BYTES = 1024 * 1024;

/** The shape of a base64 string once padding is accounted for. */
export interface Base64Layout {
  /** Characters that carry data (padding excluded). */
  readonly dataLength: number;
  /** Exact number of bytes the string decodes to. */
  readonly byteLength: number;
}

/** Something decoded bytes can be handed to, chunk by chunk (a `TempFileWriter`, for one). */
export interface ByteSink {
  write(chunk: Uint8Array): Promise<void>;
}

/** How a text to decode may end. */
export interface Base64Options {
  /** Accept `%3D` for each padding `=` (data URLs that went through a URL encoder). @default false */
  percentPadding?: boolean;
}

/**
 * A base64 text checked for its length and padding but not decoded (so a size cap can be enforced
 * first). Nothing is copied: `text` is the input.
 */
export interface Base64Plan {
  /** The text as given. */
  readonly text: string;
  /** Where the data ends: after it come only padding and ASCII whitespace. */
  readonly end: number;
  /** Padding characters (`=` or `%3D`) after the data. */
  readonly padding: number;
  /**
   * The decoded size: exact when {@link Base64Plan.exact}, else an upper bound (whitespace in the data
   * counted as if it were data; a clean text is exact).
   */
  readonly byteLength: number;
  /** True when the whitespace in the data has been counted, so `byteLength` is exact. */
  readonly exact: boolean;
}

function invalid(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_BASE64", message);
}

function tooLarge(size: number, limit: number): FileBridgeError {
  return new FileBridgeError("FILE_TOO_LARGE", `the file is ${size} bytes; the limit is ${limit}`, {
    data: { size, limit },
  });
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09 || code === 0x0c;
}

/** The layout of `dataLength` data characters followed by `padding` padding characters. */
function layoutOf(dataLength: number, padding: number): Base64Layout {
  const rest = dataLength % 4;
  if (rest === 1) throw invalid("base64 length is impossible (one character too many or few)");
  if (padding > 0 && rest + padding !== 4) throw invalid("base64 padding does not match the length");
  return { dataLength, byteLength: Math.floor((dataLength * 3) / 4) };
}

/** Counts ASCII whitespace in `window` with native searches. */
function countWhitespaceIn(window: string): number {
  let count = 0;
  for (const char of WHITESPACE_CHARS) {
    for (let at = window.indexOf(char); at >= 0; at = window.indexOf(char, at + 1)) count++;
  }
  return count;
}

/** Pieces of this many characters are searched at a time. */
const COUNT_WINDOW_CHARS = 1024 * 1024;

/**
 * Counts ASCII whitespace in `text[start, stop)`, a piece at a time: a slice of a flat string shares
 * its characters (no copy) and keeps each search from running past its piece.
 */
function countWhitespace(text: string, start: number, stop: number): number {
  let count = 0;
  for (let from = start; from < stop; from += COUNT_WINDOW_CHARS) {
    const to = Math.min(stop, from + COUNT_WINDOW_CHARS);
    count += countWhitespaceIn(from === 0 && to === text.length ? text : text.slice(from, to));
  }
  return count;
}

/**
 * Plans decoding: finds the padding at the end (`=`, or `%3D` with `percentPadding`, whitespace
 * around it allowed) and checks the length. Costs nothing on a clean text: whitespace inside the data
 * is counted only when the length as given is impossible (see {@link exactBase64Plan}). Throws
 * `INVALID_BASE64` for an impossible length or misplaced padding.
 */
export function planBase64(text: string, options: Base64Options = {}): Base64Plan {
  let end = text.length;
  let padding = 0;
  while (end > 0) {
    const code = text.charCodeAt(end - 1);
    if (isWhitespace(code)) {
      end--;
    } else if (code === EQUALS) {
      end--;
      padding++;
    } else if (
      options.percentPadding &&
      (code === 0x44 || code === 0x64) /* D d */ &&
      text.charCodeAt(end - 2) === 0x33 /* 3 */ &&
      text.charCodeAt(end - 3) === 0x25 /* % */
    ) {
      end -= 3;
      padding++;
    } else {
      break;
    }
    if (padding > 2) throw invalid("base64 has too much padding");
  }
  try {
    const { byteLength } = layoutOf(end, padding);
    return { text, end, padding, byteLength, exact: false };
  } catch {
    // Whitespace inside the data may be what makes the length look wrong: count it and check again.
    return exactBase64Plan({ text, end, padding, byteLength: 0, exact: false });
  }
}

/**
 * The same plan with whitespace inside the data counted, so its size is exact; counted window by
 * window with native searches, nothing copied. Throws `INVALID_BASE64` if the length is impossible.
 */
export function exactBase64Plan(plan: Base64Plan): Base64Plan {
  if (plan.exact) return plan;
  const dataLength = plan.end - countWhitespace(plan.text, 0, plan.end);
  const { byteLength } = layoutOf(dataLength, plan.padding);
  return { ...plan, byteLength, exact: true };
}

/**
 * Refuses (`FILE_TOO_LARGE`, with `data.size` and `data.limit`) a plan that decodes to more than
 * `maxBytes`, counting whitespace first only when the upper bound alone is over the cap. Returns the
 * plan, exact if it had to be made so.
 */
export function assertBase64Fits(plan: Base64Plan, maxBytes: number): Base64Plan {
  if (plan.byteLength <= maxBytes) return plan;
  const exact = exactBase64Plan(plan);
  if (exact.byteLength > maxBytes) throw tooLarge(exact.byteLength, maxBytes);
  return exact;
}

/**
 * Refuses what Node's decoder would misread instead of skip: characters above U+00FF (read as their
 * low byte; those from U+0080 to U+00FF are skipped, so the length check catches them) and a text
 * that uses both alphabets (`+` or `/` together with `-` or `_`). Checked window by window as the
 * windows are decoded, so the scans overlap with the writes of earlier chunks.
 */
class AlphabetCheck {
  #standard = false;
  #urlSafe = false;

  window(part: string): void {
    if (WIDE.test(part)) throw invalid("base64 contains a non-ASCII character");
    // `+` or `/` turn up within the first few characters of standard base64, so the full scans are
    // for "-" and "_" (or, for URL-safe text, the other way round).
    this.#standard ||= part.includes("+") || part.includes("/");
    this.#urlSafe ||= part.includes("-") || part.includes("_");
    if (this.#standard && this.#urlSafe) {
      throw invalid("base64 mixes the standard (+/) and URL-safe (-_) alphabets");
    }
  }
}

/**
 * Checks that the unused low bits of the last data character are zero, as a canonical encoder
 * writes them; otherwise two different strings would decode to the same bytes.
 */
function assertCanonicalTail(last: number, dataLength: number): void {
  const rest = dataLength % 4;
  if (rest === 0) return;
  const value = last < 128 ? (VALUES[last] as number) : -1;
  if (value < 0) throw invalid("base64 contains a character outside the alphabet");
  const unusedBits = rest === 2 ? 0b1111 : 0b11;
  if ((value & unusedBits) !== 0) throw invalid("base64 is not canonical (non-zero trailing bits)");
}

/**
 * Decodes a plan window by window, strictly: the standard or the URL-safe alphabet (RFC 4648 §4 and
 * §5, not both), optional padding (which must then be right), canonical trailing bits, ASCII whitespace
 * anywhere ignored, nothing else (`INVALID_BASE64`). Each chunk is about `chunkBytes`; memory stays
 * about two windows whatever the size, also for line-wrapped (MIME) text, which is decoded without
 * stripping its line breaks into a copy.
 *
 * Clean windows are decoded straight away. A window whose decoded length falls short holds whitespace
 * or a stray character: from there on each window's whitespace is counted (native searches), its end
 * moved back so it holds whole 4-character groups, and its decoded length checked against the count.
 */
export function* decodeBase64Plan(
  plan: Base64Plan,
  chunkBytes: number = BASE64_CHUNK_BYTES,
): Generator<Buffer> {
  const { text, end } = plan;
  const alphabet = new AlphabetCheck();
  const windowChars = Math.max(4, Math.floor(chunkBytes / 3) * 4);
  let dataLength = 0;
  let wrapped = false;
  for (let start = 0; start < end; ) {
    let stop = Math.min(start + windowChars, end);
    if (!wrapped) {
      const chars = stop - start;
      if (chars % 4 !== 1) {
        const part = start === 0 && stop === text.length ? text : text.slice(start, stop);
        alphabet.window(part);
        const bytes = Buffer.from(part, "base64");
        if (bytes.length === Math.floor((chars * 3) / 4)) {
          dataLength += chars;
          if (bytes.length > 0) yield bytes;
          start = stop;
          continue;
        }
      }
      wrapped = true;
    }
    let whitespace = countWhitespace(text, start, stop);
    // A window of (almost) only whitespace grows until it holds a whole group or reaches the end.
    while (stop < end && stop - start - whitespace < 4) {
      const next = Math.min(stop + windowChars, end);
      whitespace += countWhitespace(text, stop, next);
      stop = next;
    }
    let data = stop - start - whitespace;
    if (stop < end) {
      // Leave the last incomplete group (and the whitespace around it) to the next window.
      let extra = data % 4;
      while (extra > 0) {
        stop--;
        if (isWhitespace(text.charCodeAt(stop))) whitespace--;
        else extra--;
      }
      data = stop - start - whitespace;
    } else if (data % 4 === 1) {
      throw invalid("base64 length is impossible (one character too many or few)");
    }
    const part = start === 0 && stop === text.length ? text : text.slice(start, stop);
    alphabet.window(part);
    const bytes = Buffer.from(part, "base64");
    if (bytes.length !== Math.floor((data * 3) / 4)) {
      throw invalid("base64 contains a character outside the alphabet");
    }
    dataLength += data;
    if (bytes.length > 0) yield bytes;
    start = stop;
  }
  layoutOf(dataLength, plan.padding);
  if (end > 0) assertCanonicalTail(text.charCodeAt(end - 1), dataLength);
}

/**
 * Decodes a plan into `sink` chunk by chunk ({@link decodeBase64Plan}), letting the event loop turn
 * between chunks. The sink enforces any size cap as the bytes arrive.
 */
export async function decodeBase64To(
  plan: Base64Plan,
  sink: ByteSink,
  chunkBytes: number = plan.byteLength <= BASE64_ONE_WRITE_BYTES
    ? plan.byteLength + 3
    : BASE64_WRITE_CHUNK_BYTES,
): Promise<void> {
  let first = true;
  for (const chunk of decodeBase64Plan(plan, chunkBytes)) {
    if (!first) await nextTurn();
    first = false;
    await sink.write(chunk);
  }
}

/**
 * Iterates over the decoded bytes of a base64 string in chunks of about `chunkBytes`, so a large
 * payload never needs a second full-size buffer. Same strictness as {@link decodeBase64Strict}. An
 * impossible length is refused before the first chunk (for text with whitespace inside, by the last).
 */
export function decodeBase64Chunks(text: string, chunkBytes: number = BASE64_CHUNK_BYTES): Generator<Buffer> {
  return decodeBase64Plan(planBase64(text), chunkBytes);
}

/**
 * Strict base64 decoding, fast: the standard or the URL-safe alphabet (RFC 4648 §4 and §5, not mixed),
 * optional padding (which must then be right), canonical trailing bits, ASCII whitespace ignored, and
 * nothing else — no character above U+007F either. Throws `INVALID_BASE64` for any other input.
 * `maxBytes` is checked from the length before anything is decoded (`FILE_TOO_LARGE`).
 *
 * @example
 * ```ts
 * decodeBase64Strict("aGVsbG8=").toString(); // "hello"
 * ```
 */
export function decodeBase64Strict(input: string, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  const plan = assertBase64Fits(planBase64(input), maxBytes);
  // One window for the whole text when it is clean.
  const chunks = [...decodeBase64Plan(plan, Math.ceil((plan.end * 3) / 4) + 3)];
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/**
 * The exact decoded size of a base64 string that may contain ASCII whitespace, without decoding or
 * copying. Throws `INVALID_BASE64` when the length or padding is impossible.
 */
export function base64DecodedLength(text: string): number {
  return exactBase64Plan(planBase64(text)).byteLength;
}

export { BASE64_CHARSET } from "./form-tests.js";
