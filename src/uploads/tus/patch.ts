/**
 * The write of one tus body (`PATCH`, or the body of a `creation-with-upload` `POST`), its lock held:
 * the bytes go to the staging at the verified offset, counted against the declared (or configured)
 * size, hashed when `Upload-Checksum` came with them; the new offset is recorded even when the
 * client drops mid-body (that is what a resume continues from), except under a checksum: there the
 * staging holds the body provisionally (a replica killed mid-body leaves none of it counted) and it
 * counts once verified, while an unverifiable or mismatching body is cut off again. The last byte
 * commits the upload.
 */
import type { Hash } from "node:crypto";
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import type { RequestView } from "../../http/request-view.js";
import { createHash } from "../../internal/node-builtins.js";
import { BodyGuard } from "../body-guard.js";
import { withSizeReason } from "../declared-file.js";
import type { UploadRequestContext } from "../handler-types.js";
import { TICKET_CLAIMS } from "../upload-handle.js";
import { commitTusUpload, type TusCommitted } from "./commit.js";
import type { StagingObserver } from "./fs-staging.js";
import { TUS_STATUS, tusError, type UploadChecksum } from "./protocol.js";
import { readRecord, type TusRecord, writeRecord } from "./records.js";
import type { TusService, TusTicket } from "./service.js";
import { claimStaging, type StagingGrant, settleStaging } from "./staging-ledger.js";
import { publishProgress } from "./ticket.js";

/**
 * How often the progress hook (and so a waiting tool's MCP progress) hears of bytes arriving: every
 * 4 MiB, and at least once a second while bytes arrive, so a slow link still shows it is moving.
 */
const PROGRESS_STEP = 4 * 1024 * 1024;
const PROGRESS_INTERVAL_MS = 1000;

/** The outcome of one body: the new record, and the commit when the upload is complete. */
export interface TusWrite {
  record: TusRecord;
  committed?: TusCommitted;
}

/**
 * Counts, caps and optionally hashes the bytes of one body, chunk by chunk as the request's
 * `BodyGuard` passes them on: not a stream stage, so it holds no chunk (a `Transform` here held up
 * to 1 MiB of socket chunks, see docs/performance.md, Session 20).
 */
class BodyMeter {
  count = 0;
  readonly #limit: number;
  readonly #hash: Hash | undefined;
  readonly #onProgress: (count: number) => void;
  readonly #overflow: (() => FileBridgeError) | undefined;
  #reported = 0;
  #reportedAt = Date.now();

  constructor(
    limit: number,
    hash: Hash | undefined,
    onProgress: (count: number) => void,
    overflow?: () => FileBridgeError,
  ) {
    this.#limit = limit;
    this.#hash = hash;
    this.#onProgress = onProgress;
    this.#overflow = overflow;
  }

  /** Takes `chunk` into account; the error that refuses it when it goes past the limit. */
  readonly measure = (chunk: Buffer): FileBridgeError | null => {
    if (this.count + chunk.length > this.#limit) {
      return (
        this.#overflow?.() ??
        new FileBridgeError("FILE_TOO_LARGE", "The body goes past the upload's length", {
          data: { limit: this.#limit },
        })
      );
    }
    this.count += chunk.length;
    this.#hash?.update(chunk);
    const now = Date.now();
    if (this.count - this.#reported >= PROGRESS_STEP || now - this.#reportedAt >= PROGRESS_INTERVAL_MS) {
      this.#reported = this.count;
      this.#reportedAt = now;
      this.#onProgress(this.count);
    }
    return null;
  };

  digest(): string | undefined {
    return this.#hash?.digest("base64");
  }
}

/** The running sha256 of an upload during one body: what observes the stored bytes, and its hand-back. */
interface BodyHash {
  observe: StagingObserver;
  /** Keeps the hash as covering `offset` bytes, or drops it (`undefined`: the bytes were cut back). */
  settle(offset: number | undefined): void;
}

/**
 * Takes upload `id`'s running hash at `start` for one body (see `RunningHashes`); `undefined` when
 * the staging cannot hand back its prefix before commit and this process holds no hash of it.
 */
async function runningHash(service: TusService, id: string, start: number): Promise<BodyHash | undefined> {
  const hash = service.staging.localPath
    ? await service.hashes.take(service.staging, id, start)
    : service.hashes.takeKept(id, start);
  if (!hash) return undefined;
  let hashed = start;
  let failed = false;
  return {
    observe(chunk) {
      hashed += chunk.byteLength;
      const behind = hash.update(chunk);
      behind?.catch(() => {
        failed = true;
      });
      return behind;
    },
    settle(offset) {
      // Kept only when it covers exactly the bytes stored; anything else is hashed again if needed.
      if (offset === undefined || failed || hashed !== offset) hash.dispose();
      else service.hashes.keep(id, offset, hash);
    },
  };
}

/**
 * Writes one body at `record.offset` and records the new offset; commits when the last byte arrived
 * (a partial upload of a concatenation never commits on its own).
 */
export async function writeBody(
  service: TusService,
  ctx: UploadRequestContext,
  request: RequestView,
  ticket: TusTicket,
  id: string,
  record: TusRecord,
  checksum: UploadChecksum | undefined,
): Promise<TusWrite> {
  if (record.length !== undefined) {
    return writeWithin(service, ctx, request, ticket, id, record, checksum, undefined);
  }
  // A deferred length: room up to the ticket's cap as far as its other uploads and the scope's
  // quota leave it, held while the body runs; the share then shrinks to the bytes that arrived.
  const grant = await claimStaging(service, ticket, id, {
    need: record.offset,
    want: ticket.limits.maxBytes,
  });
  try {
    return await writeWithin(service, ctx, request, ticket, id, record, checksum, grant);
  } finally {
    const now = await readRecord(service.state, id).catch(() => null);
    if (now && now.fileId === undefined) {
      await settleStaging(service, ticket, id, now.offset).catch((error) => ctx.report(error));
    }
  }
}

/** {@link writeBody} within the upload's length, or within a deferred-length upload's grant. */
async function writeWithin(
  service: TusService,
  ctx: UploadRequestContext,
  request: RequestView,
  ticket: TusTicket,
  id: string,
  record: TusRecord,
  checksum: UploadChecksum | undefined,
  grant: StagingGrant | undefined,
): Promise<TusWrite> {
  const start = record.offset;
  const room = (record.length ?? grant?.bytes ?? ticket.limits.maxBytes) - start;
  const declared = Number(request.header("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > room) {
    ctx.body()?.resume();
    throw withSizeReason(
      grant?.refusal() ??
        tusError("FILE_TOO_LARGE", `The body is larger than the ${room} bytes the upload has left`, 413, {
          limit: ticket.limits.maxBytes,
        }),
      ticket.verified.claims?.[TICKET_CLAIMS.exactSize],
    );
  }
  // Taken before the body is touched: hashing a staged prefix takes a while, and the body must not
  // flow meanwhile.
  const running = service.adopts && !record.partial ? await runningHash(service, id, start) : undefined;
  const body = ctx.body();
  let written = 0;
  let failure: unknown;
  if (body) {
    const progress = (count: number) => publishProgress(service, ticket, start + count, record.length);
    const hash = checksum ? createHash(checksum.algorithm) : undefined;
    const meter = new BodyMeter(room, hash, progress, grant?.refusal);
    // The body as the staging's source, passed on chunk by chunk without a buffer of its own; a
    // failed write destroys it, which only lets go of the body.
    const guard = new BodyGuard(body, meter.measure);
    // The staging sees a failed guard through its own reading; with nobody else listening yet (a
    // client gone before the staging started reading) its error would be uncaught.
    guard.on("error", () => undefined);
    const watchdog = ctx.watch((error) => guard.destroy(error));
    body.on("data", watchdog.touch);
    // A dropped client ends the body: every byte that already arrived is written to the staging and
    // counts. Node tells of a cut twice (`aborted`, then an `error` on the destroyed request): the
    // first ends the guard with what the request stream still buffered; the error must not destroy
    // it (see docs/limits.md for what a cut can still lose).
    let dropped: FileBridgeError | undefined;
    const onAbort = (cause?: unknown) => {
      if (dropped || guard.destroyed) return;
      const error = new FileBridgeError("ABORTED", "The client aborted the upload", { cause });
      if (guard.finish()) dropped = error;
    };
    const onSignal = () => onAbort();
    request.signal.addEventListener("abort", onSignal, { once: true });
    body.once("error", onAbort);
    body.once("aborted", onSignal);
    // A socket closed mid-body ends neither `end` nor `error` on every Node version.
    body.once("close", () => {
      if (!body.readableEnded) onAbort();
    });
    // The client may have gone while the prefix was hashed.
    if (body.destroyed && !body.readableEnded) onAbort();
    try {
      const provisional = checksum ? { provisional: true } : undefined;
      const result = await service.staging.write(id, start, guard, running?.observe, provisional);
      written = result.written;
      failure = result.error ?? dropped;
      // Gone after its last byte, the client sent a whole body: it commits, and its `HEAD` tells.
      if (failure === dropped && record.length !== undefined && start + written === record.length) {
        failure = undefined;
      }
    } finally {
      watchdog.stop();
      body.off("data", watchdog.touch);
      request.signal.removeEventListener("abort", onSignal);
    }
    const rejected = checksum && (failure !== undefined || meter.digest() !== checksum.digest);
    running?.settle(rejected ? undefined : start + written);
    if (rejected) {
      // A body under a checksum counts only whole and verified.
      await service.staging.truncate(id, start);
      if (failure !== undefined) throw failure;
      throw tusError(
        "DIGEST_MISMATCH",
        "Upload-Checksum does not match the body",
        TUS_STATUS.checksumMismatch,
      );
    }
    // Verified whole: only now do its bytes count (a replica killed before this left them out).
    if (checksum) await service.staging.confirm?.(id);
  }
  if (!body) running?.settle(start);
  const updated: TusRecord = { ...record, offset: start + written };
  const complete = updated.length !== undefined && updated.offset === updated.length && !updated.partial;
  // The token whose request completes the upload may read its outcome after the commit used it up.
  if (complete) updated.completedBy = ticket.tokenHash;
  await writeRecord(service.state, id, updated, service.now());
  if (written > 0 && !updated.partial) publishProgress(service, ticket, updated.offset, updated.length);
  if (failure !== undefined) {
    throw isFileBridgeError(failure)
      ? withSizeReason(failure, ticket.verified.claims?.[TICKET_CLAIMS.exactSize])
      : new FileBridgeError("ABORTED", "The upload body ended early", { cause: failure });
  }
  if (complete) {
    return { record: updated, committed: await commitTusUpload(service, ctx, ticket, id, updated) };
  }
  return { record: updated };
}
