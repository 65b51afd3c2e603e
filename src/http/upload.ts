/**
 * The upload routes: ticket and direct uploads, and the all-or-nothing commit of every file a request
 * carries. Parsing lives in `upload-staging.ts` (raw bodies) and `multipart.ts` (forms).
 */
import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { sanitizeRelativePath } from "../internal/file-name.js";
import { parseMediaType } from "../media/media-type.js";
import { assertScope } from "../scope/scope.js";
import type { StagedFile, StoredFile } from "../storage/types.js";
import {
  TICKET_CLAIMS,
  type TicketRecord,
  ticketStateKey,
  uploadHandleOf,
} from "../uploads/upload-handle.js";
import { scopeRefsOf } from "../scope/scope-refs.js";
import { stageMultipart } from "./multipart.js";
import { requestBodyAsNode } from "./node-fast-path.js";
import type { ResolvedRouteOptions } from "./options.js";
import { jsonResponse, report } from "./responses.js";
import { claimTicket } from "./ticket-claim.js";
import { startWatchdog, uploadTimeoutError } from "./timeouts.js";
import type { UploadRateLimitInfo, UploadReplyFile } from "./types.js";
import { stageRaw, type UploadLimits } from "./upload-staging.js";

function positiveClaim(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/**
 * `POST|PUT {basePath}/upload/{token}`: an upload with a ticket minted by `get_upload_url`. The
 * ticket's own claims (`max_bytes`, `max_files`, `file_ttl`) override the route defaults.
 */
export async function handleTicketUpload(
  config: ResolvedRouteOptions,
  request: Request,
  token: string,
): Promise<Response> {
  // A single-use ticket is checked now but used up only when every file is staged and verified, so a
  // failed upload (too large, digest mismatch, aborted) can be retried with the same URL.
  const deferred = typeof config.minter.consume === "function";
  const verified = await config.minter.verify(token, { action: "upload", consume: !deferred });
  const extra = verified.claims ?? {};
  const ttlSeconds = extra[TICKET_CLAIMS.fileTtl];
  const limits: UploadLimits = {
    scope: verified.scope,
    maxBytes: positiveClaim(extra[TICKET_CLAIMS.maxBytes], config.maxBytes),
    maxFiles: positiveClaim(extra[TICKET_CLAIMS.maxFiles], config.maxFiles),
    ttlMs: typeof ttlSeconds === "number" && ttlSeconds > 0 ? ttlSeconds * 1000 : config.uploadTtlMs,
    kind: "upload",
  };
  await checkRateLimit(config, {
    action: "upload",
    route: "ticket",
    scope: limits.scope,
    ticketId: verified.fileId,
    request,
  });
  // A single-use ticket used up only at commit must still not stage two uploads at once: claim it
  // now, before any byte is read (a verifier without `consume` used the ticket up in `verify`).
  const release = deferred && verified.singleUse !== false ? await claimTicket(config, verified) : undefined;
  let files: StoredFile[];
  try {
    files = await storeRequestFiles(config, request, limits, {
      allowMultipart: true,
      beforeCommit: deferred ? () => config.minter.consume?.(verified) : undefined,
    });
  } finally {
    await release?.();
  }
  if (config.state) {
    const record: TicketRecord = { scope: limits.scope, files: files.map((file) => file.id) };
    try {
      await config.state.set(ticketStateKey(verified.fileId), record, { ttl: limits.ttlMs / 1000 });
    } catch (error) {
      report(config, error);
    }
  }
  return uploadReply(config, files);
}

/** Asks the `rateLimit` hook; `false` is `429 RATE_LIMITED`, before any byte of the body is read. */
async function checkRateLimit(config: ResolvedRouteOptions, info: UploadRateLimitInfo): Promise<void> {
  if (!config.rateLimit) return;
  if ((await config.rateLimit(info)) !== true) {
    throw new FileBridgeError("RATE_LIMITED", "Too many uploads; try again later", {
      data: { scope: info.scope, route: info.route },
    });
  }
}

/** `POST|PUT {basePath}/scopes/{scope}/files/{name}`: a direct upload for callers `authorize` lets in. */
export async function handleDirectUpload(
  config: ResolvedRouteOptions,
  request: Request,
  rawScope: string,
  rawName: string,
): Promise<Response> {
  let scope: string;
  let name: string;
  try {
    scope = decodeURIComponent(rawScope);
    name = sanitizeRelativePath(decodeURIComponent(rawName));
  } catch (cause) {
    throw new FileBridgeError("INVALID_REQUEST", "The scope or name is not valid percent-encoding", {
      cause,
    });
  }
  assertScope(scope);
  const allowed = await config.authorize?.(request, { scope, name });
  if (allowed !== true) throw new FileBridgeError("FORBIDDEN", "Not allowed to upload to this scope");
  await checkRateLimit(config, { action: "upload", route: "direct", scope, request });
  const limits: UploadLimits = {
    scope,
    maxBytes: config.maxBytes,
    maxFiles: 1,
    ttlMs: config.uploadTtlMs,
    kind: "upload",
  };
  const files = await storeRequestFiles(config, request, limits, { allowMultipart: false, name });
  return uploadReply(config, files);
}

async function uploadReply(config: ResolvedRouteOptions, files: StoredFile[]): Promise<Response> {
  for (const file of files) {
    try {
      await config.onStored?.(file);
    } catch (error) {
      report(config, error);
    }
  }
  const reply: UploadReplyFile[] = files.map((file) => {
    const entry: UploadReplyFile = {
      handle: uploadHandleOf(file, scopeRefsOf(config.minter)),
      id: file.id,
      name: file.name,
      size: file.size,
      sha256: file.sha256,
      mimeType: file.mimeType,
    };
    const uri = config.resourceUri?.(file);
    if (uri) entry.uri = uri;
    if (file.expiresAt !== undefined) entry.expiresAt = new Date(file.expiresAt).toISOString();
    return entry;
  });
  return jsonResponse(201, { files: reply });
}

function declaredLength(request: Request): number | undefined {
  const value = request.headers.get("content-length");
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

/**
 * Stages every file of the request, then commits all of them, or aborts all of them on any failure
 * (cap, digest, malformed body, client abort): a batch is all-or-nothing.
 */
async function storeRequestFiles(
  config: ResolvedRouteOptions,
  request: Request,
  limits: UploadLimits,
  mode: {
    allowMultipart: boolean;
    name?: string;
    beforeCommit?: (() => Promise<void> | undefined) | undefined;
  },
): Promise<StoredFile[]> {
  const contentType = request.headers.get("content-type");
  const media = parseMediaType(contentType);
  const multipart = mode.allowMultipart && media?.essence === "multipart/form-data";
  const length = declaredLength(request);
  // Framing overhead of a multipart body is small next to the cap; refuse what cannot fit early.
  const ceiling = multipart
    ? limits.maxBytes * limits.maxFiles + 64 * 1024 * limits.maxFiles
    : limits.maxBytes;
  if (length !== undefined && length > ceiling) {
    throw new FileBridgeError("FILE_TOO_LARGE", `The upload is larger than ${limits.maxBytes} bytes`, {
      data: { limit: limits.maxBytes },
    });
  }

  const controller = new AbortController();
  const onAbort = () => controller.abort(request.signal.reason);
  if (request.signal.aborted) onAbort();
  else request.signal.addEventListener("abort", onAbort, { once: true });

  const body = requestBodyAsNode(request);
  if (!body) throw new FileBridgeError("INVALID_REQUEST", "The request has no body");

  // No body byte for `idleTimeout` (while the server is not the one holding it up), or more than
  // `uploadTimeout` in all: the staging is aborted and the upload fails with REQUEST_TIMEOUT.
  const watchdog = startWatchdog({
    idleMs: config.idleTimeoutMs,
    totalMs: config.uploadTimeoutMs,
    onTimeout: (kind) =>
      controller.abort(
        uploadTimeoutError(kind, kind === "idle" ? config.idleTimeoutMs : config.uploadTimeoutMs),
      ),
  });
  const staged: StagedFile[] = [];
  try {
    const staging = multipart
      ? stageMultipart(config, body, contentType as string, limits, controller)
      : stageRaw(config, request, body, limits, controller, mode.name).then((part) => [part]);
    // Attached once the body is piped, in the same tick, so no chunk flows past the stager.
    body.on("data", watchdog.touch);
    body.on("pause", watchdog.pause);
    body.on("resume", watchdog.resume);
    const parts = await staging;
    watchdog.stop();
    staged.push(...parts.map((part) => part.staged));
    for (const part of parts) {
      if (part.sha256 !== undefined && part.sha256 !== part.staged.file.sha256) {
        throw new FileBridgeError(
          "DIGEST_MISMATCH",
          `The sha256 of ${part.staged.file.name} does not match`,
          {
            data: { name: part.staged.file.name },
          },
        );
      }
    }
    if (request.signal.aborted) throw new FileBridgeError("ABORTED", "The client aborted the upload");
    await mode.beforeCommit?.();
    const committed: StoredFile[] = [];
    try {
      for (const part of staged) committed.push(await part.commit());
    } catch (error) {
      await Promise.allSettled(committed.map((file) => config.store.delete(file.scope, file.id)));
      throw error;
    }
    return committed;
  } catch (error) {
    await Promise.allSettled(staged.map((part) => part.abort()));
    discard(body);
    throw toUploadError(error, request.signal.aborted, controller.signal);
  } finally {
    watchdog.stop();
    body.off("data", watchdog.touch);
    body.off("pause", watchdog.pause);
    body.off("resume", watchdog.resume);
    request.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * Stops using a request body after a failure. A Node `IncomingMessage` is paused, not drained: the
 * Node adapter answers with `Connection: close` and ends the socket, so the rest of an announced body
 * is never read (destroying it here would destroy the socket before the client saw the error). A
 * converted web body is cancelled.
 */
function discard(body: Readable): void {
  body.unpipe();
  if ("socket" in body) {
    if (!body.destroyed) body.pause();
    return;
  }
  if (!body.destroyed) body.destroy();
}

function toUploadError(error: unknown, aborted: boolean, signal: AbortSignal): unknown {
  // A timeout aborts the staging; the store then reports ABORTED: answer with the timeout itself.
  if (isFileBridgeError(signal.reason, "REQUEST_TIMEOUT")) return signal.reason;
  if (isFileBridgeError(error)) return error;
  if (aborted) return new FileBridgeError("ABORTED", "The client aborted the upload", { cause: error });
  return new FileBridgeError("STORAGE_ERROR", "The upload could not be stored", { cause: error });
}
