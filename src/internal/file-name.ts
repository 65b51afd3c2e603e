/** Longest file name kept, in UTF-16 code units (the extension is kept when shortening). */
export const MAX_NAME_LENGTH = 200;
/** Longest relative path kept (`a/b/c.txt`), in UTF-16 code units. */
export const MAX_RELATIVE_PATH_LENGTH = 1024;
/** Name used when nothing usable is left of a given name. */
export const FALLBACK_NAME = "file";

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const RESERVED = /[<>:"|?*]/g;
/**
 * Windows device names (`CON`, `PRN`, `AUX`, `NUL`, `COM1`–`COM9`, `LPT1`–`LPT9`, also with the
 * superscript digits Windows treats the same), with or without an extension: a file saved under one
 * on Windows opens the device instead.
 */
const DEVICE_NAME =
  /^(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|COM[0-9\u00b9\u00b2\u00b3]|LPT[0-9\u00b9\u00b2\u00b3])\s*(\.|$)/i;

/**
 * A name every step of {@link sanitizeFileName} leaves as it is: ASCII letters, digits, `_`, `-`,
 * and inside also `.` and spaces (no separator, control, reserved or non-ASCII character, nothing
 * to trim at either end). Checked with the length and the device names, it skips the steps.
 */
const PLAIN_NAME = /^[\w-](?:[\w .-]*[\w-])?$/;

/** True when {@link sanitizeFileName} would give `name` back unchanged (a plain, short name). */
function isPlainName(name: string): boolean {
  return name.length <= MAX_NAME_LENGTH && PLAIN_NAME.test(name) && !DEVICE_NAME.test(name);
}

function shorten(name: string, max: number): string {
  if (name.length <= max) return name;
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : "";
  let stem = name.slice(0, max - extension.length);
  // Do not cut a surrogate pair in half.
  const last = stem.charCodeAt(stem.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) stem = stem.slice(0, -1);
  return stem + extension;
}

/**
 * Makes a user-given name safe to keep as metadata and to show: the last path segment only (both
 * `/` and `\`), no control or bidi-override characters, no characters Windows forbids, no leading
 * dots or trailing dots/spaces, no Windows device name (`CON`, `nul.txt`, `COM1` get a leading `_`),
 * at most {@link MAX_NAME_LENGTH} characters (extension kept), and never empty (`"file"`). The result never touches a path: stores use random ids for that.
 */
export function sanitizeFileName(input: unknown, fallback: string = FALLBACK_NAME): string {
  if (typeof input !== "string") return fallback;
  // Most names are plain (`report.pdf`): the steps would give them back unchanged.
  return isPlainName(input) ? input : sanitizeFileNameSteps(input, fallback);
}

/**
 * The steps of {@link sanitizeFileName}, run whatever the name (no plain-name shortcut). Exported
 * for the test that holds the shortcut to them.
 */
export function sanitizeFileNameSteps(input: string, fallback: string = FALLBACK_NAME): string {
  const lastSegment = input.split(/[/\\]/).pop() ?? "";
  const cleaned = lastSegment
    .normalize("NFC")
    .replace(CONTROL, "")
    .replace(RESERVED, "_")
    .replace(/^[.\s]+/, "")
    .replace(/[.\s]+$/, "")
    .trim();
  if (cleaned.length === 0) return fallback;
  // `CON.txt` → `_CON.txt`: safe on every OS the name may be saved on.
  const safe = DEVICE_NAME.test(cleaned) ? `_${cleaned}` : cleaned;
  return shorten(safe, MAX_NAME_LENGTH);
}

/**
 * Like {@link sanitizeFileName}, but keeps folders: `a/b/c.txt` stays nested. Each segment is
 * sanitized, `.`, `..` and empty segments are dropped (so nothing can climb out), backslashes are
 * folder separators, and the whole is capped at {@link MAX_RELATIVE_PATH_LENGTH}. Never empty.
 */
export function sanitizeRelativePath(input: unknown, fallback: string = FALLBACK_NAME): string {
  if (typeof input !== "string") return fallback;
  // A plain name is one segment that its own sanitizing leaves as it is.
  if (isPlainName(input)) return input;
  const segments = input
    .split(/[/\\]/)
    .filter((segment) => segment !== "." && segment !== "..")
    .map((segment) => sanitizeFileName(segment, ""))
    .filter((segment) => segment.length > 0);
  if (segments.length === 0) return fallback;
  let joined = segments.join("/");
  if (joined.length > MAX_RELATIVE_PATH_LENGTH) {
    const last = segments[segments.length - 1] as string;
    const head = segments
      .slice(0, -1)
      .join("/")
      .slice(0, MAX_RELATIVE_PATH_LENGTH - last.length - 1);
    joined = head ? `${head.replace(/\/+$/, "")}/${last}` : shorten(last, MAX_RELATIVE_PATH_LENGTH);
  }
  return joined;
}

/** The last segment of a relative path: what to call the file on disk or in a download. */
export function baseName(relativePath: string): string {
  return relativePath.slice(relativePath.lastIndexOf("/") + 1) || FALLBACK_NAME;
}
