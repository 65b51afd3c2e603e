/**
 * The all-or-nothing store of every file an upload request carries, in its visible stages: refuse a
 * declared length over the cap, take the staging's abort control, stage every file under the
 * watchdog, check the staged files, then commit all of them, or abort all of them on any failure
 * (cap, digest, malformed body, client abort).
 */
import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { RequestView } from "../http/request-view.js";
import { largeChunks, streamOfChunks } from "../internal/web-chunks.js";
import { parseMediaType } from "../media/media-type.js";
import type { StagedFile, StoredFile } from "../storage/types.js";
import type { UploadHandlerConfig, UploadRequestContext, UploadWatchdog } from "./handler-types.js";
import { loadMultipartParser, stageMultipart } from "./multipart.js";
import {
  declaredDigestRefusal,
  rawDeclaredSha256,
  rawFileName,
  SMALL_BODY_BYTES,
  type StagedPart,
  type StagingControl,
  stageNative,
  stageRaw,
  type UploadLimits,
} from "./upload-staging.js";

/** Bytes read from a request's web body at a time when the store hashes it (see `watchedBody`). */
const NATIVE_READ_BYTES = 1024 * 1024;
/**
 * The most bytes a read of such a body waits for (fewer when the idle timeout is short, see
 * {@link nativeReadMin}): the clocks see bytes only when a read ends.
 */
const NATIVE_READ_MIN = 16 * 1024;
/** The slowest client assumed when the routes have no minimum rate (the default minimum's). */
const ASSUMED_BYTES_PER_SECOND = 1024;

/**
 * The fewest bytes a read of a watched body waits for: what a client at the slowest pace the clocks
 * accept (the minimum rate, else 1 KiB/s) sends in half the idle timeout, at most
 * {@link NATIVE_READ_MIN}, so such a client ends every read well before the idle clock runs out.
 */
function nativeReadMin(clocks: UploadRequestContext["clocks"]): number {
  if (!clocks || clocks.idleMs <= 0) return NATIVE_READ_MIN;
  const pace = clocks.minBytesPerSecond ?? ASSUMED_BYTES_PER_SECOND;
  return Math.max(1, Math.min(NATIVE_READ_MIN, Math.floor((pace * clocks.idleMs) / 2000)));
}

/** How a route stores a request's files. */
export interface StoreMode {
  allowMultipart: boolean;
  name?: string;
  /** Checks the staged files before anything commits (throws to refuse them all). */
  verify?: ((parts: StagedPart[]) => void) | undefined;
  beforeCommit?: (() => Promise<void> | undefined) | undefined;
  /** The sha-256 the ticket declared for its one file, and the refusal of a file that differs. */
  declaredSha256?: { sha256: string; refusal: () => FileBridgeError } | undefined;
  /** The size the ticket declared for its one file (checked by `verify`, before its digest). */
  declaredSize?: number | undefined;
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
  const native = multipart ? undefined : nativeStaging(config, ctx, request, length, mode);
  if (native) return storeNative(config, ctx, request, limits, mode, native);
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
    return await checkAndCommit(config, request, control, parts, mode);
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

/** A raw body for the store's native put: its web stream, declared length and digests. */
interface NativeStaging {
  body: ReadableStream<Uint8Array>;
  length: number;
  /** The declared sha-256 (the store verifies it), or `undefined`: the store hashes the bytes. */
  expectedSha256: string | undefined;
  headerSha256: string | undefined;
  /** The refusal a wrong digest gets: the header's, else the ticket's (as the checks after staging). */
  refusal: (() => FileBridgeError) | undefined;
}

/**
 * When the store takes a web stream natively (`nativeDigest`, `r2Store` on workerd) and the raw body
 * declares its length: with a declared sha-256 (header, query or the ticket) the request's own web
 * stream goes to the store unread; with none it goes read in large chunks (the idle clock running
 * only while a read waits for the client) and the store hashes it. Otherwise `undefined` (the body
 * streams through the meter).
 */
function nativeStaging(
  config: UploadHandlerConfig,
  ctx: UploadRequestContext,
  request: RequestView,
  length: number | undefined,
  mode: StoreMode,
): NativeStaging | undefined {
  if (config.store.nativeDigest !== true || !ctx.webBody || length === undefined) return undefined;
  if (length <= SMALL_BODY_BYTES) return undefined;
  // A length other than the ticket's: `verify` refuses it by its size, which a native put (whose
  // digest check fails first) cannot tell; the metered path answers as it always does.
  if (mode.declaredSize !== undefined && mode.declaredSize !== length) return undefined;
  const headerSha256 = rawDeclaredSha256(request);
  const expectedSha256 = headerSha256 ?? mode.declaredSha256?.sha256;
  const body = ctx.webBody();
  if (!body) return undefined;
  const name = rawFileName(request, mode.name);
  return {
    body,
    length,
    expectedSha256,
    headerSha256,
    refusal: headerSha256 === undefined ? mode.declaredSha256?.refusal : () => declaredDigestRefusal(name),
  };
}

/**
 * {@link storeRequestFiles} for a body the store takes natively. With a declared digest no byte is
 * seen here, so the watchdog keeps only its total clock (the idle and rate clocks need the bytes);
 * without one the body is read here in large chunks and each read runs the idle clock. An abort
 * (timeout, client gone) reaches the store through the staging's signal.
 */
async function storeNative(
  config: UploadHandlerConfig,
  ctx: UploadRequestContext,
  request: RequestView,
  limits: UploadLimits,
  mode: StoreMode,
  native: NativeStaging,
): Promise<StoredFile[]> {
  const control = stagingControl(request);
  const watchdog = ctx.watch((error) => control.controller.abort(error));
  watchdog.pause();
  const staged: StagedFile[] = [];
  try {
    let part: StagedPart;
    try {
      part = await stageNative(
        config,
        request,
        native.expectedSha256 === undefined
          ? watchedBody(native.body, watchdog, nativeReadMin(ctx.clocks))
          : native.body,
        limits,
        control.controller.signal,
        mode.name,
        native.length,
        native,
      );
    } catch (error) {
      if (
        native.refusal &&
        isFileBridgeError(error, "DIGEST_MISMATCH") &&
        error.data?.expectedSha256 !== undefined
      ) {
        throw native.refusal();
      }
      throw error;
    }
    watchdog.stop();
    staged.push(part.staged);
    return await checkAndCommit(config, request, control, [part], mode);
  } catch (error) {
    await Promise.allSettled(staged.map((part) => part.abort()));
    if (!native.body.locked) await native.body.cancel().catch(() => {});
    throw toUploadError(error, request.signal.aborted && !control.stopped, control.controller.signal);
  } finally {
    watchdog.stop();
    control.release();
  }
}

/**
 * The request's web body as a stream of chunks of up to {@link NATIVE_READ_BYTES} (each read waits
 * for `min` bytes at least, see {@link nativeReadMin}), read only when the store asks for one; a
 * store reading it with `largeChunks` reads these chunks directly and may hand them back for reuse.
 * The idle and rate clocks start with the first read and run until the body ends: between two reads
 * the store holds the body up only while R2 takes the previous chunk (one write at most), and a
 * pause there would start a new rate window at every read, so a client slower than the minimum rate
 * but quick enough for one read per window would never be cut off. A body that fails (the client
 * went, or sent less than its `Content-Length`) fails the read with the metered path's `ABORTED`.
 */
function watchedBody(
  body: ReadableStream<Uint8Array>,
  watchdog: UploadWatchdog,
  min: number,
): ReadableStream<Uint8Array> {
  const chunks = largeChunks(body, NATIVE_READ_BYTES, min);
  let started = false;
  return streamOfChunks({
    async read() {
      if (!started) {
        started = true;
        watchdog.resume();
      }
      let chunk: Uint8Array | undefined;
      try {
        chunk = await chunks.read();
      } catch (error) {
        watchdog.pause();
        throw new FileBridgeError("ABORTED", "The request body ended early", { cause: error });
      }
      if (chunk) {
        // The bytes count for the idle clock and the rate.
        watchdog.touch(chunk);
        return chunk;
      }
      // The whole body is in: what is left (R2 ending the put) is the server's.
      watchdog.pause();
      return undefined;
    },
    release: (chunk) => chunks.release(chunk),
    cancel: (reason) => chunks.cancel(reason),
  });
}

/**
 * The end of every staging: the staged files' checks, the client's abort, the route's last word
 * (`beforeCommit`), then the commit. Throws to refuse them all; the caller aborts what was staged.
 */
async function checkAndCommit(
  config: UploadHandlerConfig,
  request: RequestView,
  control: RequestStagingControl,
  parts: StagedPart[],
  mode: StoreMode,
): Promise<StoredFile[]> {
  checkStaged(parts, mode);
  if (request.signal.aborted && !control.stopped) {
    throw new FileBridgeError("ABORTED", "The client aborted the upload");
  }
  await mode.beforeCommit?.();
  return await commitAll(
    config,
    parts.map((part) => part.staged),
  );
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
      throw declaredDigestRefusal(part.staged.file.name);
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
