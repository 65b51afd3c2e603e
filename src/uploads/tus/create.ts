/**
 * Creation of tus uploads under a ticket: `POST {basePath}/tus/{token}` (extensions `creation`,
 * `creation-defer-length`, `concatenation`), and {@link createTusUpload}, the one entry point other
 * protocols use to open a tus upload for a ticket. One ticket holds one file: a new whole upload
 * replaces an unfinished earlier one; partial uploads (parallel uploads) are any number, and a
 * final upload concatenates them into the ticket's one file.
 */
import { sanitizeFileName } from "../../internal/file-name.js";
import { chooseMediaType } from "../../media/media-type.js";
import { checkDeclaredLength } from "../declared-file.js";
import { commitTusUpload, type TusCommitted } from "./commit.js";
import { tusError } from "./protocol.js";
import {
  isUploadId,
  lockUpload,
  newUploadId,
  readRecord,
  type TusRecord,
  ttlSeconds,
  tusRecordKey,
  tusTicketKey,
  writeRecord,
} from "./records.js";
import type { TusService, TusTicket } from "./service.js";
import { claimStaging, releaseStaging } from "./staging-ledger.js";
import { noSuchUpload } from "./ticket.js";

/**
 * What {@link createTusUpload} opens.
 *
 * @example
 * ```ts
 * const request: TusCreateRequest = { length: 1024, metadata: { filename: "a.bin" } };
 * ```
 */
export interface TusCreateRequest {
  /** Declared length; absent to defer it (`Upload-Defer-Length: 1`). */
  length?: number;
  /** `filename` and `filetype` name the stored file. */
  metadata?: Record<string, string>;
  /** `Upload-Metadata` as sent, echoed by `HEAD`. */
  rawMetadata?: string;
  /** A partial upload of a concatenation. */
  partial?: boolean;
}

/**
 * Opens a tus upload for a verified ticket and answers its id; the upload URL is
 * `{basePath}/tus/{token}/{id}`. A whole (non-partial) upload becomes the ticket's one upload; an
 * unfinished one it replaces is terminated, a committed one refuses with `410`.
 *
 * @example
 * ```ts
 * const ticket = await verifyTusTicket(service, token);
 * const { id } = await createTusUpload(service, ticket, { length: file.size, metadata: { filename: "a.pdf" } });
 * ```
 */
export async function createTusUpload(
  service: TusService,
  ticket: TusTicket,
  request: TusCreateRequest,
  concatenation = false,
): Promise<{ id: string; record: TusRecord }> {
  const { limits, verified, expiresAt } = ticket;
  if (request.length !== undefined) checkDeclaredLength(verified.claims ?? {}, request.length);
  if (request.length !== undefined && request.length > limits.maxBytes) {
    throw tusError("FILE_TOO_LARGE", `The upload is larger than ${limits.maxBytes} bytes`, 413, {
      limit: limits.maxBytes,
    });
  }
  const metadata = request.metadata ?? {};
  const name = sanitizeFileName(metadata.filename ?? metadata.name);
  const record: TusRecord = {
    ticketId: verified.fileId,
    scope: limits.scope,
    offset: 0,
    name,
    mimeType: chooseMediaType(metadata.filetype ?? metadata.type ?? null, name),
    expiresAt,
  };
  if (request.length !== undefined) record.length = request.length;
  if (request.rawMetadata) record.rawMetadata = request.rawMetadata;
  if (request.partial) record.partial = true;
  const id = newUploadId();
  const previous = request.partial ? undefined : await currentUpload(service, ticket);
  // Its share of the staging, before any byte or record exists: the ticket's cap and upload count,
  // the scope's quota (a final upload's bytes are its parts', already counted).
  await claimStaging(service, ticket, id, {
    need: concatenation ? 0 : (request.length ?? 0),
    ...(previous ? { replaces: previous } : {}),
  });
  try {
    if (!request.partial) await claimTicketUpload(service, ticket, id, previous);
    await service.staging.create(id, expiresAt);
    await writeRecord(service.state, id, record, service.now());
  } catch (error) {
    await releaseStaging(service, limits.scope, [id]).catch(() => undefined);
    throw error;
  }
  return { id, record };
}

/** The ticket's unfinished whole upload, if any; `410` when its upload is already committed. */
async function currentUpload(service: TusService, ticket: TusTicket): Promise<string | undefined> {
  const previous = await service.state.get<string>(tusTicketKey(ticket.verified.fileId));
  if (typeof previous !== "string" || !isUploadId(previous)) return undefined;
  const old = await readRecord(service.state, previous);
  if (old?.fileId !== undefined) {
    throw tusError("TOKEN_ALREADY_USED", "This ticket's upload is already complete", 410);
  }
  return old ? previous : undefined;
}

/** Makes `id` the ticket's one whole upload, terminating the unfinished earlier one. */
async function claimTicketUpload(
  service: TusService,
  ticket: TusTicket,
  id: string,
  previous: string | undefined,
): Promise<void> {
  const { state } = service;
  if (previous) {
    // The earlier upload is given up (the client started over); a writer still on it wins (423).
    const lock = await lockUpload(state, previous, service.lockTtlMs);
    try {
      const old = await readRecord(state, previous);
      if (old?.fileId !== undefined) {
        throw tusError("TOKEN_ALREADY_USED", "This ticket's upload is already complete", 410);
      }
      await state.delete(tusRecordKey(previous));
      await service.staging.remove(previous);
      service.hashes.drop(previous);
      await releaseStaging(service, ticket.limits.scope, [previous]);
    } finally {
      await lock.release();
    }
  }
  await state.set(tusTicketKey(ticket.verified.fileId), id, {
    ttl: ttlSeconds(ticket.expiresAt, service.now()),
  });
}

/**
 * `Upload-Concat: final;…`: concatenates finished partial uploads of the same ticket, in order,
 * into the ticket's one file (committed at once). URLs of another ticket are unknown uploads.
 */
export async function createFinalUpload(
  service: TusService,
  ctx: { report(error: unknown): void },
  ticket: TusTicket,
  requestUrl: URL,
  urls: string[],
  rawMetadata: string | undefined,
  metadata: Record<string, string>,
): Promise<{ id: string; record: TusRecord; committed: TusCommitted }> {
  const ids: string[] = [];
  const lengths: number[] = [];
  let total = 0;
  for (const url of urls) {
    let path: string;
    try {
      path = new URL(url, requestUrl).pathname;
    } catch {
      throw tusError("INVALID_REQUEST", "Upload-Concat holds an invalid URL");
    }
    const id = path.slice(requestUrl.pathname.length + 1);
    if (!path.startsWith(`${requestUrl.pathname}/`) || !isUploadId(id)) throw noSuchUpload();
    const part = await readRecord(service.state, id);
    if (!part || part.ticketId !== ticket.verified.fileId || part.scope !== ticket.limits.scope) {
      throw noSuchUpload();
    }
    if (!part.partial || part.length === undefined || part.offset !== part.length) {
      throw tusError("INVALID_REQUEST", "Every part of a final upload must be a finished partial upload");
    }
    ids.push(id);
    lengths.push(part.length);
    total += part.length;
  }
  const { id, record } = await createTusUpload(
    service,
    ticket,
    { length: total, metadata, ...(rawMetadata ? { rawMetadata } : {}) },
    true,
  );
  const final: TusRecord = { ...record, parts: ids, offset: total, completedBy: ticket.tokenHash };
  const lock = await lockUpload(service.state, id, service.lockTtlMs);
  try {
    await writeRecord(service.state, id, final, service.now());
    const committed = await commitTusUpload(service, ctx, ticket, id, final, lengths);
    await Promise.all(ids.map((part) => service.state.delete(tusRecordKey(part))));
    return { id, record: final, committed };
  } finally {
    await lock.release();
  }
}
