import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { nextTurn } from "../../internal/next-turn.js";
import { parseMediaType } from "../../media/media-type.js";
import { assertBase64Fits, type Base64Plan, type ByteSink, decodeBase64To, planBase64 } from "./base64.js";

/** A parsed `data:` URL whose payload has not been decoded yet (so its size can be checked first). */
export interface DataUrl {
  /** The declared media type with its parameters (`name` removed), or `text/plain;charset=US-ASCII`. */
  readonly mimeType: string;
  /** Whether the media type was given at all. */
  readonly mimeTypeDeclared: boolean;
  /** The `name=` (or `filename=`) parameter, percent-decoded, if any. */
  readonly name: string | undefined;
  /** True for `;base64`. */
  readonly base64: boolean;
  /** The payload as given (never copied): base64 text, or percent-encoded text. */
  readonly payload: string;
  /** For base64 payloads, the checked layout to decode it with ({@link decodeDataUrlTo}). */
  readonly plan: Base64Plan | undefined;
  /**
   * An upper bound of the decoded size found without scanning the payload: for base64 the exact size
   * of a clean payload (whitespace inside counted as data), for percent-encoded text three bytes per
   * character.
   */
  readonly maxDecodedLength: number;
  /**
   * A lower bound of the decoded size found without scanning the payload: for percent-encoded text a
   * third of the characters (an escape is three characters for one byte). For base64 the same as
   * `maxDecodedLength`, which {@link assertDataUrlFits} makes exact when it matters.
   */
  readonly minDecodedLength: number;
}

/** RFC 2397's default media type. */
export const DATA_URL_DEFAULT_TYPE = "text/plain;charset=US-ASCII";

const PREFIX = /^data:/i;

function bad(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_DATA_URL", message);
}

export { isDataUrl } from "./form-tests.js";

function percentDecodeText(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw bad("data URL has an invalid percent-escape in its header");
  }
}

/**
 * Parses the header of a `data:` URL (RFC 2397): `data:[<type>][;param=value]*[;base64],<data>`.
 * Understands a `name=` / `filename=` parameter (SEP-2356) and percent-encoded parameter values.
 * Nothing is decoded: the caller checks {@link DataUrl.minDecodedLength} against its cap first.
 * Throws `INVALID_DATA_URL` for a malformed header and `INVALID_BASE64` for an impossible base64
 * length.
 */
export function parseDataUrl(input: string): DataUrl {
  if (!PREFIX.test(input)) throw bad("not a data URL");
  const comma = input.indexOf(",");
  if (comma < 0) throw bad("data URL has no comma before its data");
  if (comma > 4096) throw bad("data URL header is too long");
  const header = input.slice(5, comma);
  const parts = header.split(";").map((part) => part.trim());
  let base64 = false;
  if (parts.length > 1 && parts[parts.length - 1]?.toLowerCase() === "base64") {
    base64 = true;
    parts.pop();
  }
  const typePart = parts.shift() ?? "";
  let name: string | undefined;
  const kept: string[] = [];
  for (const part of parts) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) throw bad(`data URL has a malformed parameter "${part.slice(0, 40)}"`);
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = percentDecodeText(part.slice(eq + 1).trim());
    if (key === "name" || key === "filename") name ??= value;
    else kept.push(`${key}=${value}`);
  }
  let mimeType = DATA_URL_DEFAULT_TYPE;
  const mimeTypeDeclared = typePart !== "";
  if (mimeTypeDeclared) {
    const parsed = parseMediaType(percentDecodeText(typePart));
    if (!parsed) throw bad("data URL has an invalid media type");
    mimeType = [parsed.essence, ...kept].join(";");
  } else if (kept.length > 0) {
    mimeType = ["text/plain", ...kept].join(";");
  }
  const rawPayload = input.slice(comma + 1);
  if (base64) {
    // Browsers tolerate whitespace and a percent-escaped padding (%3D); neither is copied away.
    const plan = planBase64(rawPayload, { percentPadding: true });
    return {
      mimeType,
      mimeTypeDeclared,
      name,
      base64,
      payload: rawPayload,
      plan,
      maxDecodedLength: plan.byteLength,
      minDecodedLength: plan.byteLength,
    };
  }
  return {
    mimeType,
    mimeTypeDeclared,
    name,
    base64,
    payload: rawPayload,
    plan: undefined,
    // No scan here: counting UTF-8 bytes of a huge payload would hold the event loop by itself.
    maxDecodedLength: rawPayload.length * 3,
    minDecodedLength: Math.ceil(rawPayload.length / 3),
  };
}

/** Value of each hex digit byte, -1 for any other byte. */
const HEX_VALUES = new Int8Array(256).fill(-1);
for (const [i, c] of [..."0123456789abcdef"].entries()) {
  HEX_VALUES[c.charCodeAt(0)] = i;
  HEX_VALUES[c.toUpperCase().charCodeAt(0)] = i;
}
const PERCENT = 0x25;
/** Literal runs longer than this are moved with a native copy; shorter ones byte by byte. */
const SHORT_LITERAL = 32;

/**
 * Characters of a percent-encoded payload decoded between two turns of the event loop by
 * {@link percentDecodeTo}. At worst (one literal between every two escapes) a window takes a few
 * milliseconds.
 */
export const PERCENT_WINDOW_CHARS = 256 * 1024;

function badEscape(): FileBridgeError {
  return bad("data URL has an invalid percent-escape in its data");
}

/**
 * Where a window that starts at `start` ends: about `size` characters on, but never inside an escape
 * (`%XX`) or between the two halves of a surrogate pair, and always at least one escape or character
 * further.
 */
function windowEnd(text: string, start: number, size: number): number {
  let end = Math.min(text.length, start + size);
  if (end < text.length) {
    if (text.charCodeAt(end - 1) === PERCENT) end -= 1;
    else if (text.charCodeAt(end - 2) === PERCENT) end -= 2;
    else if (isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end))) end -= 1;
  }
  if (end <= start) end = Math.min(text.length, start + (text.charCodeAt(start) === PERCENT ? 3 : 2));
  return end;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Decodes one window of a percent-encoded payload (no escape cut in two, except at the very end of
 * the payload, which is an error). The window is encoded as UTF-8 natively (escapes are ASCII, so they
 * come through as they are), then decoded in place: `indexOf` finds each `%`, literal runs move with
 * `copyWithin`, and only the escapes themselves are handled a byte at a time.
 */
function percentDecodeWindow(part: string): Buffer {
  const bytes = Buffer.from(part, "utf8");
  let read = bytes.indexOf(PERCENT);
  if (read < 0) return bytes;
  let write = read;
  const length = bytes.length;
  while (read < length) {
    // bytes[read] is a "%": the start of an escape, which shrinks in place (write <= read).
    if (read + 2 >= length) throw badEscape();
    const high = HEX_VALUES[bytes[read + 1] as number] as number;
    const low = HEX_VALUES[bytes[read + 2] as number] as number;
    if (high < 0 || low < 0) throw badEscape();
    bytes[write++] = (high << 4) | low;
    read += 3;
    if (read < length && bytes[read] !== PERCENT) {
      let next = bytes.indexOf(PERCENT, read);
      if (next < 0) next = length;
      if (next - read > SHORT_LITERAL) {
        bytes.copyWithin(write, read, next);
        write += next - read;
      } else {
        for (let i = read; i < next; i++) bytes[write++] = bytes[i] as number;
      }
      read = next;
    }
  }
  return bytes.subarray(0, write);
}

/**
 * Decodes the percent-encoded payload of a non-base64 data URL to bytes: `%XX` is one byte, any other
 * character is its UTF-8 encoding. Throws `INVALID_DATA_URL` for a malformed escape. Decodes all at
 * once; for large payloads use {@link percentDecodeTo}, which lets the event loop turn.
 */
export function percentDecodeBytes(payload: string): Buffer {
  return percentDecodeWindow(payload);
}

/**
 * Decodes a percent-encoded payload into `sink` window by window (about `windowChars` characters
 * each), letting the event loop turn between windows, so a huge payload never holds up other work
 * for long. Same result and errors as {@link percentDecodeBytes}; the sink enforces any size cap.
 */
export async function percentDecodeTo(
  payload: string,
  sink: ByteSink,
  windowChars: number = PERCENT_WINDOW_CHARS,
): Promise<void> {
  for (let start = 0; start < payload.length; ) {
    const end = windowEnd(payload, start, windowChars);
    // A slice of a flat string shares its characters: no copy of the payload.
    const chunk = percentDecodeWindow(
      start === 0 && end === payload.length ? payload : payload.slice(start, end),
    );
    if (chunk.length > 0) await sink.write(chunk);
    start = end;
    if (start < payload.length) await nextTurn();
  }
}

/**
 * Refuses (`FILE_TOO_LARGE`, with `data.size` and `data.limit`) a data URL that decodes to more than
 * `maxBytes`, before anything is decoded: for base64 from its exact size (whitespace counted only when
 * the upper bound is over the cap), for percent-encoded text from its lower bound (the sink catches
 * the rest while decoding).
 */
export function assertDataUrlFits(parsed: DataUrl, maxBytes: number): void {
  if (parsed.plan) {
    assertBase64Fits(parsed.plan, maxBytes);
  } else if (parsed.minDecodedLength > maxBytes) {
    throw new FileBridgeError(
      "FILE_TOO_LARGE",
      `the file is at least ${parsed.minDecodedLength} bytes; the limit is ${maxBytes}`,
      { data: { size: parsed.minDecodedLength, limit: maxBytes } },
    );
  }
}

/**
 * Decodes a parsed data URL's payload into `sink` chunk by chunk, letting the event loop turn between
 * chunks: base64 strictly and without copying the payload (line-wrapped payloads too), percent-encoded
 * text window by window. The sink enforces the size cap as bytes arrive.
 */
export function decodeDataUrlTo(parsed: DataUrl, sink: ByteSink): Promise<void> {
  return parsed.plan ? decodeBase64To(parsed.plan, sink) : percentDecodeTo(parsed.payload, sink);
}
