import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { planBase64, stripBase64Whitespace } from "../../internal/base64.js";
import { parseMediaType } from "../../media/media-type.js";

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
  /**
   * The payload: the base64 text (as given when its length is plausible, else already normalized —
   * see {@link normalizeDataUrlBase64}), or the raw percent-encoded text.
   */
  readonly payload: string;
  /** Exact decoded size for base64 payloads; an upper bound for percent-encoded ones. */
  readonly maxDecodedLength: number;
}

/** RFC 2397's default media type. */
export const DATA_URL_DEFAULT_TYPE = "text/plain;charset=US-ASCII";

const PREFIX = /^data:/i;

function bad(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_DATA_URL", message);
}

/** True when the string starts with the `data:` scheme (any case). */
export function isDataUrl(input: string): boolean {
  return PREFIX.test(input);
}

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
 * Nothing is decoded: the caller checks {@link DataUrl.maxDecodedLength} against its cap first.
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
    const plan = planBase64(rawPayload, normalizeDataUrlBase64);
    return {
      mimeType,
      mimeTypeDeclared,
      name,
      base64,
      payload: plan.text,
      maxDecodedLength: plan.byteLength,
    };
  }
  return {
    mimeType,
    mimeTypeDeclared,
    name,
    base64,
    payload: rawPayload,
    maxDecodedLength: Buffer.byteLength(rawPayload, "utf8"),
  };
}

const HEX = /^[0-9a-fA-F]{2}$/;

/**
 * Decodes the percent-encoded payload of a non-base64 data URL to bytes: `%XX` is one byte, any other
 * character is its UTF-8 encoding. Throws `INVALID_DATA_URL` for a malformed escape.
 */
export function percentDecodeBytes(payload: string): Buffer {
  const source = Buffer.from(payload, "utf8");
  if (!payload.includes("%")) return source;
  const out = Buffer.allocUnsafe(source.length);
  let written = 0;
  for (let i = 0; i < source.length; i++) {
    const byte = source[i] as number;
    if (byte === 0x25 /* % */) {
      const hex = source.toString("latin1", i + 1, i + 3);
      if (!HEX.test(hex)) throw bad("data URL has an invalid percent-escape in its data");
      out[written++] = Number.parseInt(hex, 16);
      i += 2;
    } else {
      out[written++] = byte;
    }
  }
  return out.subarray(0, written);
}

/**
 * Cleans a base64 data-URL payload the way browsers tolerate it: ASCII whitespace removed and
 * percent-escaped padding (`%3D`) restored.
 */
export function normalizeDataUrlBase64(payload: string): string {
  const stripped = stripBase64Whitespace(payload);
  return stripped.includes("%") ? stripped.replace(/%3d/gi, "=") : stripped;
}
