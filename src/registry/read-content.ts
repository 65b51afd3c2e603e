import type { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { isTextualMediaType, parseMediaType } from "../media/media-type.js";

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
