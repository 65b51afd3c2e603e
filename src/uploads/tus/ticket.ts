/**
 * The ticket check of the tus endpoint, loaded with its handler at the first tus request: the ticket
 * in the upload URL is verified on every request (never used up before commit) and binds the request
 * to a scope; an upload's record is read only for its own ticket; progress is published.
 */
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import { createHash } from "../../internal/node-builtins.js";
import type { VerifiedTokenClaims } from "../handler-types.js";
import { TICKET_CLAIMS, type UploadProgressRecord, uploadProgressKey } from "../upload-handle.js";
import type { UploadLimits } from "../upload-staging.js";
import { readRecord, type TusRecord } from "./records.js";
import type { TusProgress, TusService, TusTicket } from "./service.js";

function positiveClaim(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/**
 * Verifies the ticket of a tus request without using it up. A used ticket (the upload was
 * committed) answers 410, like an expired one; a forged or malformed one 404, like an unknown upload.
 */
export async function verifyTusTicket(service: TusService, token: string): Promise<TusTicket> {
  const { config } = service;
  let verified: VerifiedTokenClaims;
  try {
    verified = await config.minter.verify(token, { action: "upload", consume: false });
  } catch (error) {
    if (isFileBridgeError(error, "INVALID_TOKEN")) {
      throw new FileBridgeError("NOT_FOUND", "No such upload");
    }
    throw error;
  }
  const extra = verified.claims ?? {};
  const ttlSeconds = extra[TICKET_CLAIMS.fileTtl];
  const limits: UploadLimits = {
    scope: verified.scope,
    maxBytes: positiveClaim(extra[TICKET_CLAIMS.maxBytes], config.maxBytes),
    maxFiles: 1,
    ttlMs: typeof ttlSeconds === "number" && ttlSeconds > 0 ? ttlSeconds * 1000 : config.uploadTtlMs,
    kind: "upload",
  };
  const expiresAt = verified.exp ?? service.now() + config.uploadTtlMs;
  return { verified, tokenHash: tokenHashOf(token), limits, expiresAt };
}

/** The sha256 (base64url) of a ticket token. */
export function tokenHashOf(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

/** The unknown-upload refusal: the same for a missing upload and for another ticket's or scope's. */
export function noSuchUpload(): FileBridgeError {
  return new FileBridgeError("NOT_FOUND", "No such upload");
}

/** The record of upload `id` when it belongs to the ticket, else `NOT_FOUND` (never telling why). */
export async function ownedRecord(service: TusService, ticket: TusTicket, id: string): Promise<TusRecord> {
  const record = await readRecord(service.state, id);
  if (
    !record ||
    record.ticketId !== ticket.verified.fileId ||
    record.scope !== ticket.verified.scope ||
    record.expiresAt <= service.now()
  ) {
    throw noSuchUpload();
  }
  if (record.fileId !== undefined || record.parts) return record;
  // A replica that died mid-body may have staged more than it recorded (S3 parts): continue from there.
  if (service.staging.size) {
    const size = await service.staging.size(id);
    if (size !== undefined && size > record.offset) return { ...record, offset: size };
  }
  // A crash may have lost staged bytes the record counted (a local file's unwritten pages): continue
  // from the bytes that are there; the running hash is read again from that prefix.
  if (service.staging.shortfall && record.offset > 0) {
    const held = await service.staging.shortfall(id, record.offset);
    if (held !== undefined) return { ...record, offset: held };
  }
  return record;
}

/**
 * Tells of bytes received: the `onProgress` hook, and the progress record in the state store (what a
 * tool waiting for the person reads, from any replica). Best effort: a failed write is dropped.
 */
export function publishProgress(
  service: TusService,
  ticket: TusTicket,
  offset: number,
  length?: number,
): void {
  const progress: TusProgress = {
    ticketId: ticket.verified.fileId,
    scope: ticket.limits.scope,
    offset,
    length,
  };
  try {
    service.onProgress?.(progress);
  } catch {
    // a failing hook must not break an upload
  }
  const record: UploadProgressRecord = { scope: ticket.limits.scope, offset };
  if (length !== undefined) record.length = length;
  const ttl = Math.max(1, Math.ceil((ticket.expiresAt - service.now()) / 1000));
  void service.state.set(uploadProgressKey(ticket.verified.fileId), record, { ttl }).catch(() => undefined);
}
