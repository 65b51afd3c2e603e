/**
 * `mcp-file-bridge/media`: the media-type helpers the pieces use, for code that decides what a file
 * is the same way they do: parse and normalize a `Content-Type`, guess one from a name or from the
 * first bytes, tell text from binary, and what a file's bytes are (`contentMediaType`, the check behind
 * a tool's `x-mcp-file { accept }`).
 */
export type { ContentSniffer } from "./content-type.js";
export {
  acceptsMediaType,
  CONTENT_SNIFF_BYTES,
  contentMediaType,
  looksLikeText,
} from "./content-type.js";
export type { MediaType } from "./media-type.js";
export {
  chooseMediaType,
  isTextualMediaType,
  mediaTypeFromName,
  normalizeMediaType,
  OCTET_STREAM,
  parseMediaType,
  SNIFF_BYTES,
  sniffMediaType,
} from "./media-type.js";
export type { MimeDatabase } from "./mime-table.js";
export { useMimeDatabase } from "./mime-table.js";
