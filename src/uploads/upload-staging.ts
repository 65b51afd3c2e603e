/** Staging a raw (non-multipart) upload body, and what one upload may store. */
import { PassThrough, type Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { parseContentDispositionFileName } from "../internal/content-disposition.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { chooseMediaType } from "../media/media-type.js";
import type { FileStore, StagedFile } from "../storage/types.js";

/** What one upload may store: its scope, caps and the lifetime of its files. */
export interface UploadLimits {
  scope: string;
  maxBytes: number;
  maxFiles: number;
  ttlMs: number;
  kind: "upload";
}

/** A staged (not yet committed) file and the sha256 the client declared for it, if any. */
export interface StagedPart {
  staged: StagedFile;
  sha256: string | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A declared sha256 (header, query or form field), lower-cased; `undefined` when absent. */
export function declaredSha256(value: string | null, where: string): string | undefined {
  if (value === null) return undefined;
  const normalized = value.trim().toLowerCase();
  if (!SHA256_HEX.test(normalized)) {
    throw new FileBridgeError("INVALID_REQUEST", `${where} must be 64 hex characters`);
  }
  return normalized;
}

/** Stages a raw (non-multipart) request body as one file. */
export async function stageRaw(
  config: { store: FileStore },
  request: Request,
  body: Readable,
  limits: UploadLimits,
  controller: AbortController,
  fixedName: string | undefined,
): Promise<StagedPart> {
  const url = new URL(request.url);
  const sha256 =
    declaredSha256(request.headers.get("x-content-sha256"), "X-Content-SHA256") ??
    declaredSha256(url.searchParams.get("sha256"), "sha256");
  const name =
    fixedName ??
    sanitizeFileName(
      parseContentDispositionFileName(request.headers.get("content-disposition")) ??
        url.searchParams.get("filename") ??
        undefined,
    );
  const declaredType = request.headers.get("content-type");
  let bodyError: unknown;
  body.once("error", (error) => {
    bodyError = error;
    controller.abort(error);
  });
  // The store destroys its source on failure; a pass-through keeps that from destroying the socket
  // (the client must still get the 413), and `pipe` simply unpipes when it goes.
  const source = new PassThrough();
  body.pipe(source);
  try {
    const staged = await config.store.stage(source, {
      scope: limits.scope,
      name,
      mimeType: chooseMediaType(declaredType, name),
      kind: limits.kind,
      ttl: limits.ttlMs / 1000,
      maxBytes: limits.maxBytes,
      signal: controller.signal,
    });
    if (bodyError !== undefined) {
      await staged.abort();
      throw new FileBridgeError("ABORTED", "The request body ended early", { cause: bodyError });
    }
    return { staged, sha256 };
  } catch (error) {
    if (bodyError !== undefined && !isFileBridgeError(error, "FILE_TOO_LARGE")) {
      throw new FileBridgeError("ABORTED", "The request body ended early", { cause: bodyError });
    }
    throw error;
  }
}
