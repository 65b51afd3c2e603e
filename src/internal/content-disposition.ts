/**
 * RFC 6266 `Content-Disposition` helpers: formatting a header with an RFC 8187 `filename*` and an
 * ASCII fallback, and reading the file name back out of a request header.
 */

const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

/** RFC 8187 `value-chars`: UTF-8 bytes, percent-encoded except for `attr-char`. */
function encodeExtValue(value: string): string {
  let out = "";
  for (const char of value) {
    if (ATTR_CHAR.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8")) {
      out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }
  }
  return out;
}

/** A plain-ASCII stand-in for `name`, safe inside a quoted string. */
function asciiFallback(name: string): string {
  const ascii = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\x20-\x7e]/g, "_")
    .replace(/["\\%]/g, "_");
  return ascii.trim().length > 0 ? ascii : "file";
}

/**
 * `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf` (or `inline; …`). Only the last
 * path segment of `name` is used.
 */
export function formatContentDisposition(type: "attachment" | "inline", name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1) || "file";
  return `${type}; filename="${asciiFallback(base)}"; filename*=UTF-8''${encodeExtValue(base)}`;
}

interface DispositionParameter {
  key: string;
  value: string;
}

/** Splits `a; b=c; d="e;f"` into parameters, honouring quoted strings. */
function parseParameters(header: string): DispositionParameter[] {
  const params: DispositionParameter[] = [];
  let i = header.indexOf(";");
  if (i < 0) return params;
  while (i < header.length) {
    i++; // skip ';'
    while (header[i] === " " || header[i] === "\t") i++;
    const eq = header.indexOf("=", i);
    if (eq < 0) break;
    const key = header.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (header[i] === " " || header[i] === "\t") i++;
    let value = "";
    if (header[i] === '"') {
      i++;
      while (i < header.length && header[i] !== '"') {
        if (header[i] === "\\" && i + 1 < header.length) i++;
        value += header[i];
        i++;
      }
      i++; // closing quote
      const next = header.indexOf(";", i);
      i = next < 0 ? header.length : next;
    } else {
      const next = header.indexOf(";", i);
      const end = next < 0 ? header.length : next;
      value = header.slice(i, end).trim();
      i = end;
    }
    if (key) params.push({ key, value });
  }
  return params;
}

/** Decodes an RFC 8187 ext-value (`UTF-8''na%C3%AFve.txt`); `null` when malformed. */
function decodeExtValue(value: string): string | null {
  const match = /^([A-Za-z0-9!#$%&+\-^_`{}~]+)'[A-Za-z0-9-]*'(.*)$/.exec(value);
  if (!match) return null;
  const charset = (match[1] as string).toLowerCase();
  const encoded = match[2] as string;
  if (!/^(?:[^%]|%[0-9A-Fa-f]{2})*$/.test(encoded)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === "%") {
      bytes.push(Number.parseInt(encoded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(encoded.charCodeAt(i) & 0xff);
    }
  }
  if (charset === "utf-8") {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bytes));
    } catch {
      return null;
    }
  }
  if (charset === "iso-8859-1") return String.fromCharCode(...bytes);
  return null;
}

/**
 * The file name a `Content-Disposition` header carries: `filename*` when it decodes, else
 * `filename`, else `null`. The result is not sanitized.
 */
export function parseContentDispositionFileName(header: string | null | undefined): string | null {
  if (!header || header.length > 4096) return null;
  const params = parseParameters(header);
  const extended = params.find((p) => p.key === "filename*");
  if (extended) {
    const decoded = decodeExtValue(extended.value);
    if (decoded) return decoded;
  }
  const plain = params.find((p) => p.key === "filename");
  return plain && plain.value.length > 0 ? plain.value : null;
}
