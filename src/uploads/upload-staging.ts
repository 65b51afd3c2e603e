/** Staging a raw (non-multipart) upload body, and what one upload may store. */
import type { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { RequestView } from "../http/request-view.js";
import { parseContentDispositionFileName } from "../internal/content-disposition.js";
import { sanitizeFileName } from "../internal/file-name.js";
import { chooseMediaType } from "../media/media-type.js";
import type { FileStore, StagedFile } from "../storage/types.js";
import { BodyGuard } from "./body-guard.js";

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

/**
 * A raw body that declares at most this many bytes (`Content-Length`) is read into memory and handed
 * to the store as one buffer: the stores measure and write bytes in one go, without a stream pipeline.
 */
export const SMALL_BODY_BYTES = 16 * 1024;

/**
 * How an upload's staging is stopped (timeout, body error, client gone): the signal and `abort`,
 * and, when the request view has one, its cheaper `onAbort` (see {@link RequestView.onAbort}).
 */
export type StagingControl = Pick<AbortController, "signal" | "abort"> & Pick<RequestView, "onAbort">;

/**
 * Calls `listener` with the signal's reason when the staging aborts from now on; returns the
 * function that stops listening.
 */
function whenAborted(control: StagingControl, listener: (reason: unknown) => void): () => void {
  if (control.onAbort) return control.onAbort(listener);
  const { signal } = control;
  const onAbort = () => listener(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/**
 * Reads a body of `length` declared bytes whole. Fails when the body errors or ends early, or with
 * the signal's reason when it aborts (client gone, timeout); listeners are removed either way.
 */
function readDeclared(body: Readable, length: number, control: StagingControl): Promise<Buffer> {
  const { signal } = control;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: unknown, bytes?: Buffer) => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", done);
      body.off("close", onClose);
      stopListening?.();
      if (bytes) resolve(bytes);
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = () => {
      if (size !== length) done(new FileBridgeError("ABORTED", "The request body ended early"));
      else done(undefined, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onClose = () => done(new FileBridgeError("ABORTED", "The request body ended early"));
    let stopListening: (() => void) | undefined;
    if (signal.aborted) {
      done(signal.reason);
      return;
    }
    stopListening = whenAborted(control, done);
    body.on("data", onData);
    body.once("end", onEnd);
    body.once("error", done);
    body.once("close", onClose);
  });
}

/** A declared sha256 (header, query or form field), lower-cased; `undefined` when absent. */
export function declaredSha256(value: string | null, where: string): string | undefined {
  if (value === null) return undefined;
  const normalized = value.trim().toLowerCase();
  if (!SHA256_HEX.test(normalized)) {
    throw new FileBridgeError("INVALID_REQUEST", `${where} must be 64 hex characters`);
  }
  return normalized;
}

/** The sha256 a raw body declares (`X-Content-SHA256` or `?sha256=`), lower-cased, if any. */
export function rawDeclaredSha256(request: RequestView): string | undefined {
  return (
    declaredSha256(request.header("x-content-sha256"), "X-Content-SHA256") ??
    declaredSha256(request.url.searchParams.get("sha256"), "sha256")
  );
}

/** The name a raw body is stored under: the route's, else `Content-Disposition`'s, else `?filename=`. */
export function rawFileName(request: RequestView, fixedName: string | undefined): string {
  return (
    fixedName ??
    sanitizeFileName(
      parseContentDispositionFileName(request.header("content-disposition")) ??
        request.url.searchParams.get("filename") ??
        undefined,
    )
  );
}

/** The refusal of a raw body whose sha256 is not the one `X-Content-SHA256` / `?sha256=` declared. */
export function declaredDigestRefusal(name: string): FileBridgeError {
  return new FileBridgeError("DIGEST_MISMATCH", `The sha256 of ${name} does not match`, { data: { name } });
}

/**
 * Stages a raw body of `length` declared bytes as a web stream on a store that takes one natively
 * (`FileStore.nativeDigest`): the store checks the size and the declared sha256 (`expectedSha256`),
 * or hashes the bytes when none is declared; they never pass through a Node stream here. A wrong
 * digest is the store's `DIGEST_MISMATCH`; `headerSha256` is what the header or query declared.
 */
export async function stageNative(
  config: { store: FileStore },
  request: RequestView,
  body: ReadableStream<Uint8Array>,
  limits: UploadLimits,
  signal: AbortSignal,
  fixedName: string | undefined,
  length: number,
  digests: { expectedSha256: string | undefined; headerSha256: string | undefined },
): Promise<StagedPart> {
  const name = rawFileName(request, fixedName);
  const staged = await config.store.stage(body, {
    scope: limits.scope,
    name,
    mimeType: chooseMediaType(request.header("content-type"), name),
    typeFromBytes: true,
    kind: limits.kind,
    ttl: limits.ttlMs / 1000,
    maxBytes: limits.maxBytes,
    expectedSize: length,
    ...(digests.expectedSha256 === undefined ? {} : { expectedSha256: digests.expectedSha256 }),
    signal,
  });
  return { staged, sha256: digests.headerSha256 };
}

/**
 * Stages a raw (non-multipart) request body as one file. A body whose declared length (`declaredLength`,
 * from `Content-Length`) is at most {@link SMALL_BODY_BYTES} is read whole first; any other streams.
 */
export async function stageRaw(
  config: { store: FileStore },
  request: RequestView,
  body: Readable,
  limits: UploadLimits,
  controller: StagingControl,
  fixedName: string | undefined,
  declaredLength?: number,
): Promise<StagedPart> {
  const sha256 = rawDeclaredSha256(request);
  const name = rawFileName(request, fixedName);
  const declaredType = request.header("content-type");
  let bodyError: unknown;
  body.once("error", (error) => {
    bodyError = error;
    controller.abort(error);
  });
  let source: Readable | Buffer;
  if (declaredLength !== undefined && declaredLength <= SMALL_BODY_BYTES) {
    // A small body in one buffer (the length is framed by HTTP: an early end is an error). The
    // ticket was verified and claimed before this read, and nothing is stored until the store has it.
    try {
      source = await readDeclared(body, declaredLength, controller);
    } catch (error) {
      if (bodyError !== undefined) {
        throw new FileBridgeError("ABORTED", "The request body ended early", { cause: bodyError });
      }
      throw error;
    }
  } else {
    // The store destroys its source on failure; the guard keeps that from destroying the socket (the
    // client must still get the 413) and holds no chunk of its own (see `BodyGuard`).
    source = new BodyGuard(body);
  }
  try {
    const staged = await config.store.stage(source, {
      scope: limits.scope,
      name,
      mimeType: chooseMediaType(declaredType, name),
      typeFromBytes: true,
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
