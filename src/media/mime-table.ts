/**
 * A compact media-type table: the file types the pieces name and people commonly attach, with the
 * answers the `mime-types` package gives for them. The full database (mime-db, about 150 KB) is an
 * opt-in: `useMimeDatabase(mimeTypes)` from `mcp-file-bridge/media`.
 */

/**
 * The table, one media type a line: the type, its usual extension, then the other extensions that
 * name it. An extension written `=ext` is only the type's usual extension (`audio/mpeg` is written
 * `.mpga`, and `.mp3` is read as `audio/mpeg`; `application/javascript` is written `.js`, and `.js`
 * is read as `text/javascript`). Decoded into two maps on the first look-up: a string is a third of
 * the bytes of two object literals in a user's bundle, and a server that never names a file builds
 * nothing at start.
 */
const TABLE = `text/plain txt text log ini conf
text/markdown md markdown
text/csv csv
text/tab-separated-values tsv
application/json json
text/yaml yaml yml
application/toml toml
application/xml xml
text/html html htm
text/css css
text/javascript js mjs
application/node cjs
video/mp2t ts
text/jsx jsx
application/rls-services+xml rs
text/x-java-source java
text/x-c c h cpp
application/x-sh sh
application/sql sql
application/pdf pdf
application/msword doc
application/vnd.openxmlformats-officedocument.wordprocessingml.document docx
application/vnd.ms-excel xls
application/vnd.openxmlformats-officedocument.spreadsheetml.sheet xlsx
application/vnd.ms-powerpoint ppt
application/vnd.openxmlformats-officedocument.presentationml.presentation pptx
application/vnd.oasis.opendocument.text odt
application/vnd.oasis.opendocument.spreadsheet ods
application/vnd.oasis.opendocument.presentation odp
application/rtf rtf
application/epub+zip epub
application/zip zip
application/gzip gz
application/x-tar tar
application/x-bzip2 bz2
application/x-7z-compressed 7z
application/vnd.rar rar
image/png png
image/jpeg jpg jpeg
image/gif gif
image/webp webp
image/avif avif
image/svg+xml svg
image/bmp bmp
image/vnd.microsoft.icon ico
image/tiff tif tiff
image/heic heic
image/heif heif
audio/mpeg =mpga mp3
audio/wav wav
audio/ogg oga ogg opus
audio/x-flac flac
audio/mp4 m4a
audio/aac =adts aac
audio/webm weba
video/mp4 mp4
video/x-m4v m4v
video/quicktime =qt mov
video/webm webm
video/x-matroska mkv
video/x-msvideo avi
video/ogg ogv
video/mpeg mpeg mpg
application/wasm wasm
application/octet-stream bin
application/x-msdos-program exe
application/x-apple-diskimage dmg
application/x-iso9660-image iso
text/calendar ics
text/x-vcard vcf
message/rfc822 eml
font/woff woff
font/woff2 woff2
font/ttf ttf
font/otf otf
application/javascript =js
application/ecmascript =ecma
application/ld+json =jsonld
audio/x-wav =wav
audio/wave =wav
text/xml =xml
image/x-icon =ico`;

let byExtension: Map<string, string> | undefined;
let byType: Map<string, string> | undefined;

/** Extension → media type, and media type → its usual extension, decoded from {@link TABLE}. */
function tables(): [byExtension: Map<string, string>, byType: Map<string, string>] {
  if (byExtension === undefined || byType === undefined) {
    byExtension = new Map();
    byType = new Map();
    for (const line of TABLE.split("\n")) {
      const [type = "", usual = "", ...others] = line.split(" ");
      const only = usual.startsWith("=");
      byType.set(type, only ? usual.slice(1) : usual);
      for (const ext of only ? others : [usual, ...others]) byExtension.set(ext, type);
    }
  }
  return [byExtension, byType];
}

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
  const known = tables()[0].get(ext);
  if (known !== undefined) return known;
  const found = database?.lookup(ext);
  return typeof found === "string" ? found : null;
}

/** The usual extension of a media type (its essence: lower case, no parameters), or `null`. */
export function extensionOfType(essence: string): string | null {
  const known = tables()[1].get(essence);
  if (known !== undefined) return known;
  const found = database?.extension(essence);
  return typeof found === "string" ? found : null;
}
