/**
 * The request bodies of the files extension (`files-extension.ts`): loaded at the first `files/*`
 * request (issue 39), so a server that attaches the extension compiles them only when a client
 * uses it. The class keeps the option checks and the mounting, which `attach()` runs.
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { durationToMs } from "../internal/duration.js";
import { newId } from "../internal/ids.js";
import type { HostFilesParams, HostRequestContext } from "../mcp/host.js";
import { parseMediaType } from "../media/media-type.js";
import type { ScopeSource } from "../scope/scope.js";
import type { StoredFile } from "../storage/types.js";
import type { DirectUploadResult } from "./direct-upload.js";
import type { FilesExtensionDeps, FilesExtensionSettings } from "./files-extension-settings.js";
import {
  declaredDigest,
  type FileTransferDescriptor,
  type FileValue,
  filesError,
  fileValueOf,
  optionalString,
  uriParam,
  wireDigest,
} from "./files-wire.js";
import { TUS_VERSION } from "./tus/protocol.js";
import { formatUploadHandle, TICKET_CLAIMS, tusEndpointOf } from "./upload-handle.js";

function accepts(patterns: readonly string[] | undefined, mimeType: string): boolean {
  if (patterns === undefined) return true;
  const essence = parseMediaType(mimeType)?.essence;
  if (essence === undefined) return false;
  return patterns.some((pattern) => {
    const wanted = pattern.trim().toLowerCase();
    if (wanted === "*/*" || wanted === essence) return true;
    return wanted.endsWith("/*") && essence.startsWith(wanted.slice(0, -1));
  });
}

/** `files/authorizeUpload` (and the variant's `files/prepareUpload`): a single-use ticket for one file. */
export async function authorizeUpload(
  deps: FilesExtensionDeps,
  settings: FilesExtensionSettings,
  params: HostFilesParams,
  ctx: HostRequestContext,
  method = "files/authorizeUpload",
): Promise<{ file: FileValue; upload: FileTransferDescriptor } | DirectUploadResult> {
  const scope = deps.scope(ctx.extra as ScopeSource);
  const { maxSize, accept, uploadMethod } = settings;
  const name = optionalString(params, "name");
  const mimeType = optionalString(params, "mimeType");
  const size = params.size;
  if (size !== undefined && (!Number.isSafeInteger(size) || (size as number) < 0)) {
    throw filesError("INVALID_INPUT", "invalidParams", "size must be a non-negative integer");
  }
  if (typeof size === "number" && size > maxSize) {
    throw filesError("FILE_TOO_LARGE", "maxSizeExceeded", `The file may have at most ${maxSize} bytes`, {
      maxSize,
      actualSize: size,
    });
  }
  const essence = mimeType === undefined ? undefined : parseMediaType(mimeType)?.essence;
  if (mimeType !== undefined && (essence === undefined || !accepts(accept, essence))) {
    throw filesError("UNSUPPORTED_MEDIA_TYPE", "mimeTypeNotAccepted", `${mimeType} is not accepted here`, {
      ...(accept === undefined ? {} : { accept }),
    });
  }
  const sha256 = declaredDigest(params.digest);
  await deps.allowTicket?.(scope, method);
  const ticketId = newId();
  const minted = await deps.minter.mint({
    scope,
    fileId: ticketId,
    action: "upload",
    ttl: deps.ticketTtl,
    singleUse: true,
    claims: {
      [TICKET_CLAIMS.maxBytes]: typeof size === "number" ? Math.max(size, 1) : maxSize,
      [TICKET_CLAIMS.maxFiles]: 1,
      [TICKET_CLAIMS.fileTtl]: deps.handleTtlSeconds,
      ...(typeof size === "number" ? { [TICKET_CLAIMS.exactSize]: size } : {}),
      ...(sha256 === undefined ? {} : { [TICKET_CLAIMS.sha256]: sha256 }),
      ...(essence === undefined ? {} : { [TICKET_CLAIMS.mimeType]: essence }),
    },
  });
  const uri = formatUploadHandle(scope, ticketId, deps.refs);
  if (deps.direct) {
    const ttlMs = durationToMs(deps.ticketTtl, "ttl");
    return deps.direct.authorize({
      scope,
      ticketId,
      uri,
      issuedAt: minted.expiresAt - ttlMs,
      expiresAt: minted.expiresAt,
      maxBytes: typeof size === "number" ? Math.max(size, 1) : maxSize,
      fileTtl: deps.handleTtlSeconds,
      ...(name === undefined ? {} : { name }),
      ...(essence === undefined ? {} : { mimeType: essence }),
      ...(typeof size === "number" ? { size } : {}),
      ...(sha256 === undefined ? {} : { sha256 }),
    });
  }
  const file: FileValue = {
    uri,
    ...(name === undefined ? {} : { name }),
    ...(mimeType === undefined ? {} : { mimeType }),
    ...(typeof size === "number" ? { size } : {}),
    ...(sha256 === undefined ? {} : { digest: wireDigest(sha256) }),
  };
  const expiresAt = new Date(minted.expiresAt).toISOString();
  const url = new URL(minted.url);
  if (name !== undefined && uploadMethod === "PUT") url.searchParams.set("filename", name);
  const upload: FileTransferDescriptor =
    uploadMethod === "PUT"
      ? {
          transport: "https",
          method: "PUT",
          url: url.href,
          ...(mimeType === undefined ? {} : { headers: { "content-type": mimeType } }),
          expiresAt,
        }
      : { transport: "https", method: "POST", url: url.href, multipart: { fileField: "file" }, expiresAt };
  // The same ticket over tus 1.0, for clients that resume (the commit checks the same claims).
  if (settings.tus) upload.tus = { endpoint: tusEndpointOf(minted.url), version: TUS_VERSION };
  return { file, upload };
}

/** The one committed file a URI of this scope stands for; another scope's URI is exactly "not found". */
export async function committed(
  deps: FilesExtensionDeps,
  params: HostFilesParams,
  ctx: HostRequestContext,
): Promise<FileValue> {
  const uri = uriParam(params);
  const scope = deps.scope(ctx.extra as ScopeSource);
  let files: StoredFile[] | null | undefined;
  try {
    files = await deps.direct?.complete(uri, scope);
    if (files === undefined) files = await deps.filesFor(uri, { scope });
  } catch (error) {
    if (isFileBridgeError(error)) throw error;
    throw new FileBridgeError("STORAGE_ERROR", "The file could not be looked up", { cause: error });
  }
  const [file] = files ?? [];
  if (!file || (files?.length ?? 0) !== 1) {
    throw filesError("NOT_FOUND", "fileNotFound", "No such file (unknown, expired, or not uploaded yet)", {
      uri,
    });
  }
  return fileValueOf(file, uri);
}

/** `files/authorizeDownload` (and the variant's `files/getDownload`): a signed download of one file. */
export async function authorizeDownload(
  deps: FilesExtensionDeps,
  settings: FilesExtensionSettings,
  params: HostFilesParams,
  ctx: HostRequestContext,
): Promise<{ file: FileValue; download: FileTransferDescriptor }> {
  const uri = uriParam(params);
  const scope = deps.scope(ctx.extra as ScopeSource);
  const files = await deps.filesFor(uri, { scope });
  const [stored] = files ?? [];
  if (!stored || (files?.length ?? 0) !== 1) {
    throw filesError("NOT_FOUND", "fileNotFound", "No such file (unknown or expired)", { uri });
  }
  const { downloadTtl } = settings;
  const minted = await deps.minter.downloadUrl(stored, downloadTtl === undefined ? {} : { ttl: downloadTtl });
  return {
    file: fileValueOf(stored, uri),
    download: {
      transport: "https",
      method: "GET",
      url: minted.url,
      expiresAt: new Date(minted.expiresAt).toISOString(),
    },
  };
}
