/**
 * A compact media-type table: the file types the pieces name and people commonly attach, with the
 * answers the `mime-types` package gives for them. The full database (mime-db, about 150 KB) is an
 * opt-in: `useMimeDatabase(mimeTypes)` from `mcp-file-bridge/media`.
 */

/** Extension → media type. */
const TYPES: Readonly<Record<string, string>> = {
  txt: "text/plain",
  text: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  json: "application/json",
  yaml: "text/yaml",
  yml: "text/yaml",
  toml: "application/toml",
  xml: "application/xml",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  js: "text/javascript",
  mjs: "text/javascript",
  cjs: "application/node",
  ts: "video/mp2t",
  jsx: "text/jsx",
  rs: "application/rls-services+xml",
  java: "text/x-java-source",
  c: "text/x-c",
  h: "text/x-c",
  cpp: "text/x-c",
  sh: "application/x-sh",
  sql: "application/sql",
  log: "text/plain",
  ini: "text/plain",
  conf: "text/plain",
  pdf: "application/pdf",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.ms-powerpoint",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  odp: "application/vnd.oasis.opendocument.presentation",
  rtf: "application/rtf",
  epub: "application/epub+zip",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  bz2: "application/x-bzip2",
  "7z": "application/x-7z-compressed",
  rar: "application/vnd.rar",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  svg: "image/svg+xml",
  bmp: "image/bmp",
  ico: "image/vnd.microsoft.icon",
  tif: "image/tiff",
  tiff: "image/tiff",
  heic: "image/heic",
  heif: "image/heif",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  flac: "audio/x-flac",
  m4a: "audio/mp4",
  aac: "audio/aac",
  opus: "audio/ogg",
  weba: "audio/webm",
  mp4: "video/mp4",
  m4v: "video/x-m4v",
  mov: "video/quicktime",
  webm: "video/webm",
  mkv: "video/x-matroska",
  avi: "video/x-msvideo",
  ogv: "video/ogg",
  mpeg: "video/mpeg",
  mpg: "video/mpeg",
  wasm: "application/wasm",
  bin: "application/octet-stream",
  exe: "application/x-msdos-program",
  dmg: "application/x-apple-diskimage",
  iso: "application/x-iso9660-image",
  ics: "text/calendar",
  vcf: "text/x-vcard",
  eml: "message/rfc822",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  otf: "font/otf",
};

/** Media type → its usual extension. */
const EXTENSIONS: Readonly<Record<string, string>> = {
  "text/plain": "txt",
  "text/markdown": "md",
  "text/csv": "csv",
  "text/tab-separated-values": "tsv",
  "application/json": "json",
  "text/yaml": "yaml",
  "application/toml": "toml",
  "application/xml": "xml",
  "text/html": "html",
  "text/css": "css",
  "text/javascript": "js",
  "application/node": "cjs",
  "video/mp2t": "ts",
  "text/jsx": "jsx",
  "application/rls-services+xml": "rs",
  "text/x-java-source": "java",
  "text/x-c": "c",
  "application/x-sh": "sh",
  "application/sql": "sql",
  "application/pdf": "pdf",
  "application/msword": "doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "application/vnd.ms-powerpoint": "ppt",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
  "application/vnd.oasis.opendocument.text": "odt",
  "application/vnd.oasis.opendocument.spreadsheet": "ods",
  "application/vnd.oasis.opendocument.presentation": "odp",
  "application/rtf": "rtf",
  "application/epub+zip": "epub",
  "application/zip": "zip",
  "application/gzip": "gz",
  "application/x-tar": "tar",
  "application/x-bzip2": "bz2",
  "application/x-7z-compressed": "7z",
  "application/vnd.rar": "rar",
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/svg+xml": "svg",
  "image/bmp": "bmp",
  "image/vnd.microsoft.icon": "ico",
  "image/tiff": "tif",
  "image/heic": "heic",
  "image/heif": "heif",
  "audio/mpeg": "mpga",
  "audio/wav": "wav",
  "audio/ogg": "oga",
  "audio/x-flac": "flac",
  "audio/mp4": "m4a",
  "audio/aac": "adts",
  "audio/webm": "weba",
  "video/mp4": "mp4",
  "video/x-m4v": "m4v",
  "video/quicktime": "qt",
  "video/webm": "webm",
  "video/x-matroska": "mkv",
  "video/x-msvideo": "avi",
  "video/ogg": "ogv",
  "video/mpeg": "mpeg",
  "application/wasm": "wasm",
  "application/octet-stream": "bin",
  "application/x-msdos-program": "exe",
  "application/x-apple-diskimage": "dmg",
  "application/x-iso9660-image": "iso",
  "text/calendar": "ics",
  "text/x-vcard": "vcf",
  "message/rfc822": "eml",
  "font/woff": "woff",
  "font/woff2": "woff2",
  "font/ttf": "ttf",
  "font/otf": "otf",
  "application/javascript": "js",
  "application/ecmascript": "ecma",
  "application/ld+json": "jsonld",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "text/xml": "xml",
  "image/x-icon": "ico",
};

/**
 * What {@link useMimeDatabase} takes: the `mime-types` package, or anything with its two functions.
 *
 * @example
 * ```ts
 * import * as mimeTypes from "mime-types";
 * const db: MimeDatabase = mimeTypes;
 * ```
 */
export interface MimeDatabase {
  lookup(nameOrExtension: string): string | false;
  extension(type: string): string | false;
}

let database: MimeDatabase | undefined;

/**
 * Looks names and types up in a full database (`mime-types`) where the compact built-in table has no
 * answer. Off by default, so the core loads no 150 KB database; call once at start-up (`undefined`
 * turns it off again).
 *
 * @example
 * ```ts
 * import * as mimeTypes from "mime-types";
 * import { useMimeDatabase } from "mcp-file-bridge/media";
 * useMimeDatabase(mimeTypes);
 * ```
 */
export function useMimeDatabase(db: MimeDatabase | undefined): void {
  database = db;
}

/** The lower-cased extension of a file name (`Report.PDF` → `pdf`); the name itself when it has no dot. */
function extensionOf(name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1);
  const dot = base.lastIndexOf(".");
  return (dot < 0 ? base : base.slice(dot + 1)).toLowerCase();
}

/** The media type of a file name or bare extension, or `null`. */
export function typeOfName(name: string): string | null {
  const ext = extensionOf(name);
  if (ext === "") return null;
  if (Object.hasOwn(TYPES, ext)) return TYPES[ext] as string;
  const found = database?.lookup(ext);
  return typeof found === "string" ? found : null;
}

/** The usual extension of a media type (its essence: lower case, no parameters), or `null`. */
export function extensionOfType(essence: string): string | null {
  if (Object.hasOwn(EXTENSIONS, essence)) return EXTENSIONS[essence] as string;
  const found = database?.extension(essence);
  return typeof found === "string" ? found : null;
}
