/**
 * Shapes models and clients send that are not one of the forms as such: an object form encoded as
 * a JSON string (older Inspector builds do it, and models often do it with nested objects), and bare
 * base64 on a server that has that form switched off. The first is taken as the object; the second
 * is answered with an error that shows the `data:` form to send instead, never with a "no file at
 * that path" that sends the model looking for a file.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";

/** The object a string holds when it is a JSON-encoded object (`{"filename": …}`), else undefined. */
export function jsonEncodedObject(input: string): Record<string, unknown> | undefined {
  const text = input.trim();
  if (!text.startsWith("{") || !text.endsWith("}")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const STRICT_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Whether a string is almost surely base64 content rather than a file name or path: the base64 (or
 * base64url) alphabet only, whitespace aside, in whole 4-character groups, and either `=` padding
 * (16 characters at least) or, unpadded, 24 characters at least mixing upper case, lower case and
 * digits, which names rarely do.
 */
export function looksLikeBareBase64(input: string): boolean {
  const text = input.replace(/\s+/g, "");
  const padded = text.endsWith("=");
  // Unpadded, 24 characters at least: a file name without an extension can be 16 letters and digits.
  if (text.length < (padded ? 16 : 24)) return false;
  if (STRICT_BASE64.test(text)) {
    if (text.length % 4 !== 0) return false;
  } else if (!BASE64URL.test(text)) {
    return false;
  }
  return padded || (/[A-Z]/.test(text) && /[a-z]/.test(text) && /[0-9]/.test(text));
}

/** `FORM_DISABLED` for bare base64: the message shows the forms that carry the same bytes. */
export function bareBase64Refused(
  forms: { dataUrl: boolean; object: boolean },
  enabled: string[],
): FileBridgeError {
  const ways: string[] = [];
  if (forms.dataUrl) ways.push('a data URL: "data:<media type>;name=<file name>;base64,<the same base64>"');
  if (forms.object) ways.push('an object: {"name": "<file name>", "content": "<the same base64>"}');
  const instead =
    ways.length > 0
      ? `send it as ${ways.join(", or as ")}`
      : `send it in an accepted form: ${enabled.join(", ")}`;
  return new FileBridgeError("FORM_DISABLED", `bare base64 is not accepted as a file; ${instead}`, {
    data: { form: "bare base64", forms: enabled },
  });
}
