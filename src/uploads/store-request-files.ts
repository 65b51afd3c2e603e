/**
 * The all-or-nothing store of every file an upload request carries, in its visible stages: refuse a
 * declared length over the cap, take the staging's abort control, stage every file under the
 * watchdog, check the staged files, then commit all of them, or abort all of them on any failure
 * (cap, digest, malformed body, client abort).
 */
import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { RequestView } from "../http/request-view.js";
import { parseMediaType } from "../media/media-type.js";
import type { StagedFile, StoredFile } from "../storage/types.js";
import type { UploadHandlerConfig, UploadRequestContext } from "./handler-types.js";
import { loadMultipartParser, stageMultipart } from "./multipart.js";
import { type StagedPart, type StagingControl, stageRaw, type UploadLimits } from "./upload-staging.js";

/** How a route stores a request's files. */
export interface StoreMode {
  allowMultipart: boolean;
  name?: string;
  /** Checks the staged files before anything commits (throws to refuse them all). */
  verify?: ((parts: StagedPart[]) => void) | undefined;
  beforeCommit?: (() => Promise<void> | undefined) | undefined;
}

/**
 * Stages every file of the request, then commits all of them, or aborts all of them on any failure
 * (cap, digest, malformed body, client abort): a batch is all-or-nothing.
 */
export async function storeRequestFiles(
  config: UploadHandlerConfig,
  ctx: UploadRequestContext,
  request: RequestView,
  limits: UploadLimits,
  mode: StoreMode,
): Promise<StoredFile[]> {
  const contentType = request.header("content-type");
  const multipart = mode.allowMultipart && parseMediaType(contentType)?.essence === "multipart/form-data";
  const length = declaredLength(request);
  refuseDeclaredOverCap(length, limits, multipart);
  // Loaded before the body flows (the first form upload loads busboy; nothing else does).
  const parser = multipart ? await loadMultipartParser() : undefined;
  const control = stagingControl(request);
  const body = ctx.body();
  if (!body) throw new FileBridgeError("INVALID_REQUEST", "The request has no body");

  // No body byte for `idleTimeout` (while the server is not the one holding it up), or more than
  // `uploadTimeout` in all: the staging is aborted and the upload fails with REQUEST_TIMEOUT.
  const watchdog = ctx.watch((error) => control.controller.abort(error));
  const staged: StagedFile[] = [];
  try {
    const staging = parser
      ? stageMultipart(parser, config, body, contentType as string, limits, control.controller)
      : stageRaw(config, request, body, limits, control.controller, mode.name, length).then((part) => [part]);
    // Attached once the body is piped, in the same tick, so no chunk flows past the stager.
    body.on("data", watchdog.touch);
    body.on("pause", watchdog.pause);
    body.on("resume", watchdog.resume);
    const parts = await staging;
    watchdog.stop();
    staged.push(...parts.map((part) => part.staged));
    checkStaged(parts, mode);
    if (request.signal.aborted && !control.stopped) {
      throw new FileBridgeError("ABORTED", "The client aborted the upload");
    }
    await mode.beforeCommit?.();
    return await commitAll(config, staged);
  } catch (error) {
    await Promise.allSettled(staged.map((part) => part.abort()));
    discard(body);
    throw toUploadError(error, request.signal.aborted && !control.stopped, control.controller.signal);
  } finally {
    watchdog.stop();
    body.off("data", watchdog.touch);
    body.off("pause", watchdog.pause);
    body.off("resume", watchdog.resume);
    control.release();
  }
}

function declaredLength(request: RequestView): number | undefined {
  const value = request.header("content-length");
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

/** Refuses at once a body whose declared length cannot fit the caps. */
function refuseDeclaredOverCap(length: number | undefined, limits: UploadLimits, multipart: boolean): void {
  // Framing overhead of a multipart body is small next to the cap; refuse what cannot fit early.
  const ceiling = multipart
    ? limits.maxBytes * limits.maxFiles + 64 * 1024 * limits.maxFiles
    : limits.maxBytes;
  if (length !== undefined && length > ceiling) {
    throw new FileBridgeError("FILE_TOO_LARGE", `The upload is larger than ${limits.maxBytes} bytes`, {
      data: { limit: limits.maxBytes },
    });
  }
}

/** The staging's abort control, whether the staging was stopped from here, and its release. */
interface RequestStagingControl {
  readonly controller: StagingControl;
  /** Set when the staging was stopped from here (timeout, body error), not by the client. */
  stopped: boolean;
  release(): void;
}

/**
 * The staging stops through the request's own signal when the view can abort it (the Node adapter's
 * native path); else through a controller of its own that follows the request's.
 */
function stagingControl(request: RequestView): RequestStagingControl {
  const abortView = request.abort;
  if (abortView) {
    const control: RequestStagingControl = {
      controller: {
        signal: request.signal,
        abort: (reason) => {
          if (!request.signal.aborted) control.stopped = true;
          abortView(reason);
        },
        onAbort: request.onAbort,
      },
      stopped: false,
      release: () => undefined,
    };
    return control;
  }
  const own = new AbortController();
  const onAbort = () => own.abort(request.signal.reason);
  if (request.signal.aborted) onAbort();
  else request.signal.addEventListener("abort", onAbort, { once: true });
  return {
    controller: own,
    stopped: false,
    release: () => request.signal.removeEventListener("abort", onAbort),
  };
}

/** Checks the staged files before any commits: each declared digest, then the route's own check. */
function checkStaged(parts: StagedPart[], mode: StoreMode): void {
  for (const part of parts) {
    if (part.sha256 !== undefined && part.sha256 !== part.staged.file.sha256) {
      throw new FileBridgeError("DIGEST_MISMATCH", `The sha256 of ${part.staged.file.name} does not match`, {
        data: { name: part.staged.file.name },
      });
    }
  }
  mode.verify?.(parts);
}

/** Commits every staged file, or deletes the ones committed so far when one fails. */
async function commitAll(config: UploadHandlerConfig, staged: StagedFile[]): Promise<StoredFile[]> {
  const committed: StoredFile[] = [];
  try {
    for (const part of staged) committed.push(await part.commit());
  } catch (error) {
    await Promise.allSettled(committed.map((file) => config.store.delete(file.scope, file.id)));
    throw error;
  }
  return committed;
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
  if (isFileBridgeError(signal.reason, "TRANSFER_TOO_SLOW")) return signal.reason;
  if (isFileBridgeError(error)) return error;
  if (aborted) return new FileBridgeError("ABORTED", "The client aborted the upload", { cause: error });
  return new FileBridgeError("STORAGE_ERROR", "The upload could not be stored", { cause: error });
}
