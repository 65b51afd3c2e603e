import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { ReadResourceResult } from "../mcp/types.js";
import { isTextualMediaType, parseMediaType } from "../media/media-type.js";
import type { FileStore, StoredFile } from "../storage/types.js";

/**
 * Reads a stream into memory, failing with `TOO_LARGE_TO_INLINE` as soon as it goes over `limit`
 * (the stream is destroyed, so a file that grew after `head()` never gets buffered whole).
 */
export async function readBounded(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      total += buffer.byteLength;
      if (total > limit) {
        throw new FileBridgeError("TOO_LARGE_TO_INLINE", `the file is larger than ${limit} bytes`, {
          data: { limit },
        });
      }
      chunks.push(buffer);
    }
  } finally {
    stream.destroy();
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/**
 * Whether a media type is read as text: `text/*`, the package's allowlist (json, xml, yaml, csv,
 * javascript, shell…) and the author's extra essences (`type/subtype` or `type/*`).
 */
export function isTextType(mimeType: string, extra: ReadonlySet<string>): boolean {
  if (isTextualMediaType(mimeType)) return true;
  const parsed = parseMediaType(mimeType);
  if (!parsed) return false;
  return extra.has(parsed.essence) || extra.has(`${parsed.type}/*`);
}

/**
 * Decodes bytes as text in the media type's `charset` (default UTF-8). `null` when the charset is
 * unknown or the bytes are not valid in it: the caller then sends a blob, so bytes are never
 * silently replaced.
 */
export function decodeText(bytes: Uint8Array, mimeType: string): string | null {
  const charset = parseMediaType(mimeType)?.parameters.charset ?? "utf-8";
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    return null;
  }
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** `NOT_FOUND` for a resource URI (`-32602` with `data.uri` on the wire). */
export function resourceNotFound(uri: string): FileBridgeError {
  return new FileBridgeError("NOT_FOUND", `resource ${uri} not found`, { data: { uri } });
}

/** How {@link readFileResource} reads. */
export interface ReadLimits {
  maxInlineBytes: number;
  textTypes: ReadonlySet<string>;
  /** A download URL for the file, or `undefined` without a minter. */
  mintDownload(): Promise<{ url: string; expiresAt: number } | undefined>;
}

/**
 * The `resources/read` result of a stored file: its text, its bytes as base64, or — over
 * `maxInlineBytes` — a `text/uri-list` with a download URL (`TOO_LARGE_TO_INLINE` without a minter).
 */
export async function readFileResource(
  store: Pick<FileStore, "read">,
  file: StoredFile,
  uri: string,
  limits: ReadLimits,
): Promise<ReadResourceResult> {
  if (file.size > limits.maxInlineBytes) {
    const download = await limits.mintDownload();
    if (download) {
      const { url } = download;
      return { contents: [{ uri, mimeType: "text/uri-list", text: `${url}\r\n` }] };
    }
    throw new FileBridgeError(
      "TOO_LARGE_TO_INLINE",
      `${file.name} is ${file.size} bytes, over the ${limits.maxInlineBytes}-byte limit for inline reads`,
      { data: { limit: limits.maxInlineBytes, size: file.size } },
    );
  }
  const stream = await store.read(file.scope, file.id);
  if (!stream) throw resourceNotFound(uri);
  let bytes: Buffer;
  try {
    bytes = await readBounded(stream, limits.maxInlineBytes);
  } catch (error) {
    if (isFileBridgeError(error, "TOO_LARGE_TO_INLINE")) {
      throw new FileBridgeError("TOO_LARGE_TO_INLINE", error.message, {
        data: { limit: limits.maxInlineBytes },
      });
    }
    throw error;
  }
  if (isTextType(file.mimeType, limits.textTypes)) {
    const text = decodeText(bytes, file.mimeType);
    if (text !== null) return { contents: [{ uri, mimeType: file.mimeType, text }] };
  }
  return { contents: [{ uri, mimeType: file.mimeType, blob: bytes.toString("base64") }] };
}
