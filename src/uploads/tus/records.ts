/**
 * What the state store holds about a tus upload, shared by every replica: the upload record (its
 * ticket, scope, declared length and verified offset) and the lock one request holds while it
 * writes (set-if-absent with a TTL, renewed while the request runs, so a dead replica's lock runs
 * out by itself).
 */

import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { randomBytes } from "../../internal/node-builtins.js";
import type { StateStore } from "../../storage/types.js";
import { TUS_STATUS, tusError } from "./protocol.js";

/** One tus upload, as the state store holds it. */
export interface TusRecord {
  /** The upload ticket it belongs to: only requests with that ticket reach it. */
  ticketId: string;
  /** The ticket's scope. */
  scope: string;
  /** Declared length; absent while the length is deferred. */
  length?: number;
  /** Bytes written and verified. */
  offset: number;
  /** `Upload-Metadata` as sent (echoed by `HEAD`). */
  rawMetadata?: string;
  /** File name and media type from the metadata. */
  name: string;
  mimeType?: string;
  /** A partial upload of a concatenation: never committed on its own. */
  partial?: boolean;
  /** A final upload: the ids of its partial uploads, in order. */
  parts?: string[];
  /** Epoch ms after which the upload is gone. */
  expiresAt: number;
  /** Set once committed: the stored file's id. */
  fileId?: string;
  /** Set once committed: the ticket's handle and the file's sha256 (hex), for a `HEAD` after commit. */
  handle?: string;
  sha256?: string;
  /**
   * The sha256 (base64url) of the ticket token whose request completed the upload, set before its
   * commit uses the ticket up: the one token that can still read the upload's outcome (`HEAD`)
   * once the ticket is used.
   */
  completedBy?: string;
}

/** Random upload ids: 128 bits, base64url. */
export function newUploadId(): string {
  return randomBytes(16).toString("base64url");
}

const UPLOAD_ID = /^[A-Za-z0-9_-]{22}$/;

/** Whether a path segment can be an upload id. */
export function isUploadId(value: string): boolean {
  return UPLOAD_ID.test(value);
}

export function tusRecordKey(id: string): string {
  return `mcp-file-bridge:tus:${id}`;
}

function tusLockKey(id: string): string {
  return `mcp-file-bridge:tus-lock:${id}`;
}

/** The current upload of a ticket (one ticket = one file). */
export function tusTicketKey(ticketId: string): string {
  return `mcp-file-bridge:tus-ticket:${ticketId}`;
}

/** Seconds a record stays in the state store: until its expiry, at least one. */
export function ttlSeconds(expiresAt: number, now: number): number {
  return Math.max(1, Math.ceil((expiresAt - now) / 1000));
}

export async function readRecord(state: StateStore, id: string): Promise<TusRecord | null> {
  return state.get<TusRecord>(tusRecordKey(id));
}

export async function writeRecord(
  state: StateStore,
  id: string,
  record: TusRecord,
  now: number,
): Promise<void> {
  await state.set(tusRecordKey(id), record, { ttl: ttlSeconds(record.expiresAt, now) });
}

/** How long a request waits for another's lock before 423, and how often it looks. */
const LOCK_WAIT_MS = 1000;
const LOCK_POLL_MS = 20;

/**
 * Waits (at most `waitMs`) until no request holds the upload's lock, so a `HEAD` right after a
 * dropped `PATCH` answers the offset that request recorded. Resolves `false` when the lock is still
 * held at the deadline.
 */
export async function settledUpload(state: StateStore, id: string, waitMs = LOCK_WAIT_MS): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await state.get(tusLockKey(id))) === null) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

/** Whether every byte of a whole upload is staged while it is not committed (yet, or any more). */
export function awaitingCommit(record: TusRecord): boolean {
  return (
    record.fileId === undefined &&
    !record.partial &&
    record.length !== undefined &&
    record.offset === record.length
  );
}

/** A held upload lock. */
export interface TusLock {
  /** Releases the lock (only if still ours). */
  release(): Promise<void>;
}

/**
 * Takes the lock of an upload, or fails with `UPLOAD_IN_PROGRESS` (423): a second request on the
 * same upload never writes next to the first. The lock lives `ttlMs` and is renewed every third of
 * it while held, so a replica that dies holding it frees it within `ttlMs`.
 */
export async function lockUpload(
  state: StateStore,
  id: string,
  ttlMs: number,
  waitMs = LOCK_WAIT_MS,
): Promise<TusLock> {
  const key = tusLockKey(id);
  const owner = randomBytes(9).toString("base64url");
  const ttl = Math.max(1, Math.ceil(ttlMs / 1000));
  const deadline = Date.now() + waitMs;
  let taken = await state.setIfAbsent(key, owner, { ttl });
  // A request whose client just dropped still holds the lock while it records its offset: a resume
  // right behind it waits that moment out instead of failing.
  while (!taken && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    taken = await state.setIfAbsent(key, owner, { ttl });
  }
  if (!taken) {
    throw tusError("UPLOAD_IN_PROGRESS", "Another request is writing this upload", TUS_STATUS.locked, {
      retryable: true,
    });
  }
  const renew = setInterval(
    () => {
      void (async () => {
        if ((await state.get(key)) === owner) await state.set(key, owner, { ttl });
      })().catch(() => {
        // A failed renewal leaves the lock to its TTL.
      });
    },
    // A third of the TTL (not at least a second: a 1 s `lockTtl` renewed every second lapsed before
    // each renewal, and a slow request lost its lock to the next one).
    Math.max(100, (ttl * 1000) / 3),
  );
  renew.unref?.();
  return {
    async release() {
      clearInterval(renew);
      try {
        if ((await state.get(key)) === owner) await state.delete(key);
      } catch (cause) {
        throw new FileBridgeError("STORAGE_ERROR", "Could not release the upload lock", { cause });
      }
    },
  };
}
