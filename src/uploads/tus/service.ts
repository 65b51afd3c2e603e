/**
 * What every tus request shares: the routes' upload config, the state store holding records and
 * locks, the byte staging, the clock, and the ticket check that binds each request to a scope (the
 * ticket in the upload URL is verified on every request and never used up before commit).
 */

import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import { createHash } from "../../internal/node-builtins.js";
import { writableDisk } from "../../internal/runtime.js";
import { memoryState } from "../../storage/memory-state.js";
import type { FileStore, StateStore } from "../../storage/types.js";
import type { UploadHandlerConfig, VerifiedTokenClaims } from "../handler-types.js";
import { TICKET_CLAIMS, type UploadProgressRecord, uploadProgressKey } from "../upload-handle.js";
import type { UploadLimits } from "../upload-staging.js";
import { fsTusStaging, type TusStaging } from "./fs-staging.js";
import { memoryTusStaging } from "./memory-staging.js";
import { readRecord, type TusRecord } from "./records.js";
import { RunningHashes } from "./running-hash.js";

/**
 * Progress of one tus upload, as {@link TusOptions.onProgress} receives it while bytes arrive and
 * once more when the upload is committed.
 *
 * @example
 * ```ts
 * const onProgress = ({ ticketId, offset, length }: TusProgress) => console.log(ticketId, offset, length);
 * ```
 */
export interface TusProgress {
  /** The upload ticket's id. */
  ticketId: string;
  /** The ticket's scope. */
  scope: string;
  /** Bytes received so far (this process's view while a `PATCH` runs). */
  offset: number;
  /** Declared length, when known. */
  length: number | undefined;
  /** The stored file's id, once committed. */
  fileId?: string;
}

/**
 * The tus endpoint's options (`createFileRoutes({ tus })`).
 *
 * @example
 * ```ts
 * createFileRoutes({ store, minter, state, tus: { staging: fsTusStaging("/srv/tus"), lockTtl: 30 } });
 * ```
 */
export interface TusOptions {
  /** Where bytes wait until commit. @default fsTusStaging() (a folder under the OS temp folder) */
  staging?: TusStaging;
  /** Seconds a writer's lock lives without renewal (a dead replica frees it after this). @default 30 */
  lockTtl?: number;
  /** Called while bytes arrive (at most every 4 MiB) and at commit. */
  onProgress?: (progress: TusProgress) => void;
  /** The clock. @default Date.now */
  now?: () => number;
}

/** The checked tus options and the shared services. */
export interface TusService {
  config: UploadHandlerConfig;
  state: StateStore;
  staging: TusStaging;
  lockTtlMs: number;
  now: () => number;
  onProgress: ((progress: TusProgress) => void) | undefined;
  /**
   * Whether a commit hands the staged bytes to the store (`FileStore.adopt` and a staging with local
   * files or adoptable objects): then bytes are hashed as they arrive, in {@link hashes}.
   */
  adopts: boolean;
  /** The running sha256 of the uploads this process writes. */
  hashes: RunningHashes;
}

/** A verified ticket and what it allows. */
export interface TusTicket {
  verified: VerifiedTokenClaims;
  /** The sha256 (base64url) of the token as sent: what a used ticket's `HEAD` is matched by. */
  tokenHash: string;
  limits: UploadLimits;
  /** When uploads under the ticket expire (the ticket's own expiry). */
  expiresAt: number;
}

/** Checks the options and builds the shared services (a private `memoryState()` without `state`). */
export function tusService(config: UploadHandlerConfig, options: TusOptions = {}): TusService {
  const lockTtl = options.lockTtl ?? 30;
  if (typeof lockTtl !== "number" || !(lockTtl >= 1)) {
    throw new FileBridgeError("INVALID_OPTION", "tus.lockTtl must be a number of seconds ≥ 1");
  }
  const state = config.state ?? memoryState();
  const staging = options.staging ?? defaultStaging(config, state);
  return {
    config,
    state,
    staging,
    adopts:
      typeof config.store.adopt === "function" &&
      (typeof staging.localPath === "function" || typeof staging.adoptable === "function"),
    hashes: new RunningHashes(),
    lockTtlMs: lockTtl * 1000,
    now: options.now ?? Date.now,
    onProgress: options.onProgress,
  };
}

/**
 * A store that stages tus uploads its own way (an `s3Store`: a multipart upload in its bucket). The
 * tus endpoint asks the store for it, so the uploads code never names a driver.
 *
 * @example
 * ```ts
 * const staging = (store as Partial<TusStagingSource>).tusStaging?.(state) ?? fsTusStaging();
 * ```
 */
export interface TusStagingSource {
  /** The staging for the tus uploads of this store, keeping its records in `state`. */
  tusStaging(state: StateStore): TusStaging;
}

/**
 * The store's own staging when it offers one; else staging files under the OS temp folder, or in
 * memory on a runtime without a writable disk (Workers, Deno without write access).
 */
function defaultStaging(config: UploadHandlerConfig, state: StateStore): TusStaging {
  const store = config.store as FileStore & Partial<TusStagingSource>;
  if (typeof store.tusStaging === "function") return store.tusStaging(state);
  return writableDisk() ? fsTusStaging() : memoryTusStaging();
}

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
