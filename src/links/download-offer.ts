/**
 * Wire pieces of the files extension revision Claude Code ships that outputs use: the download
 * offer a tool result carries in `_meta["io.modelcontextprotocol/files"].downloads`, with its digest
 * in unpadded base64url.
 */

import { clientFilesCapability, FILES_EXTENSION_KEY } from "../mcp/client-files.js";
import type { HostClientCapabilities } from "../mcp/host.js";
import { wireDigest } from "../uploads/files-wire.js";

/**
 * One download offer: the file's name, type, size and sha-256, and where to `GET` it.
 *
 * @example
 * ```ts
 * const offer: DownloadOffer = { name: "report.pdf", mimeType: "application/pdf", size: 1024, digest: { algorithm: "sha-256", value: "…" }, url, credentials: "omit", expiresAt };
 * ```
 */
export interface DownloadOffer {
  [key: string]: unknown;
  name: string;
  mimeType: string;
  size: number;
  digest: { algorithm: "sha-256"; value: string };
  url: string;
  credentials: "omit";
  expiresAt: string;
}

/** The offer of a stored file at a signed download URL. */
export function downloadOffer(
  file: { name: string; mimeType: string; size: number; sha256: string },
  download: { url: string; expiresAt: number },
): DownloadOffer {
  return {
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    digest: wireDigest(file.sha256),
    url: download.url,
    credentials: "omit",
    expiresAt: new Date(download.expiresAt).toISOString(),
  };
}

/** Whether a client declared the revision's `download` (so outputs carry download offers). */
export function wantsDownloadOffers(capabilities: HostClientCapabilities | undefined): boolean {
  const files = clientFilesCapability(capabilities);
  return files?.spelling === "upload_required" && files.download;
}

/**
 * `_meta` with `offers` added under `"io.modelcontextprotocol/files".downloads` (after any the
 * result already had).
 */
export function withDownloadOffers(
  meta: Record<string, unknown> | undefined,
  offers: readonly DownloadOffer[],
): Record<string, unknown> {
  const entry = (meta?.[FILES_EXTENSION_KEY] ?? {}) as { downloads?: unknown };
  const before = Array.isArray(entry.downloads) ? entry.downloads : [];
  return { ...(meta ?? {}), [FILES_EXTENSION_KEY]: { ...entry, downloads: [...before, ...offers] } };
}
