/**
 * What tus staging holds per scope, in the state store (shared by replicas): every unfinished
 * upload's share — its declared length, or for a deferred length the bytes it holds plus the room a
 * running body was granted — with its ticket and expiry. A creation or a body is granted room only
 * if the ticket's uploads together stay within the ticket's own cap (`FILE_TOO_LARGE`), the ticket
 * holds at most {@link MAX_UPLOADS_PER_TICKET} uploads (`TOO_MANY_FILES`), and the scope's committed
 * files plus everything staged stay within the store's quota (`QUOTA_EXCEEDED`). A share ends with
 * its upload: committed (the store counts the file then), terminated, replaced, or expired.
 */

import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { createHash } from "../../internal/node-builtins.js";
import { quotaExceeded } from "../../storage/kit/quota.js";
import { tusError } from "./protocol.js";
import { lockUpload, ttlSeconds } from "./records.js";
import type { TusService, TusTicket } from "./service.js";

/**
 * Unfinished uploads one ticket may hold at once: its whole upload and its partial uploads (the
 * parts of a parallel upload; tus clients use a handful). Empty ones count too.
 */
export const MAX_UPLOADS_PER_TICKET = 64;

/** One upload's share: its ticket, the bytes counted, when it expires. */
interface Share {
  t: string;
  b: number;
  e: number;
}

type Ledger = Record<string, Share>;

/** The ledger's key: the scope hashed (state keys are no place for a scope, which may be a session id). */
function ledgerKey(scope: string): string {
  return `mcp-file-bridge:tus-staged:${createHash("sha256").update(scope).digest("base64url")}`;
}

/** What a grant asks. */
export interface StagingClaim {
  /** Bytes the upload's share must cover at least (its declared length, or its offset). */
  need: number;
  /** Bytes it would like, when more than `need` (a deferred-length body: up to the ticket's cap). */
  want?: number;
  /** An upload this one replaces (the ticket's earlier whole upload): not counted. */
  replaces?: string;
}

/** A granted share: its bytes, and the refusal a body that needs more meets. */
export interface StagingGrant {
  bytes: number;
  refusal: () => FileBridgeError;
}

/**
 * Grants upload `id` of `ticket` a share of `claim.need` bytes, and up to `claim.want`: resolves
 * with the bytes granted, or refuses with the limit `need` would pass.
 */
export async function claimStaging(
  service: TusService,
  ticket: TusTicket,
  id: string,
  claim: StagingClaim,
): Promise<StagingGrant> {
  const { scope } = ticket.limits;
  return withLedger(service, scope, async (ledger) => {
    const ticketId = ticket.verified.fileId;
    let ticketBytes = 0;
    let ticketUploads = 0;
    let staged = 0;
    for (const [other, share] of Object.entries(ledger)) {
      if (other === id || other === claim.replaces) continue;
      staged += share.b;
      if (share.t === ticketId) {
        ticketBytes += share.b;
        ticketUploads += 1;
      }
    }
    if (!(id in ledger) && ticketUploads >= MAX_UPLOADS_PER_TICKET) {
      throw tusError("TOO_MANY_FILES", `A ticket holds at most ${MAX_UPLOADS_PER_TICKET} uploads`, 413, {
        limit: MAX_UPLOADS_PER_TICKET,
      });
    }
    const cap = ticket.limits.maxBytes;
    let bytes = Math.min(claim.want ?? claim.need, cap - ticketBytes);
    let refusal = () =>
      tusError("FILE_TOO_LARGE", `The ticket's uploads may hold at most ${cap} bytes together`, 413, {
        limit: cap,
      });
    const { store } = service.config;
    const maxBytes = store.quota?.maxBytesPerScope;
    if (maxBytes !== undefined && store.usage) {
      const left = maxBytes - (await store.usage(scope)).bytes - staged;
      if (left < bytes) {
        bytes = left;
        refusal = () => quotaExceeded("bytes", maxBytes);
      }
    }
    if (claim.need > bytes) throw refusal();
    ledger[id] = { t: ticketId, b: bytes, e: ticket.expiresAt };
    return { bytes, refusal };
  });
}

/**
 * Sets upload `id`'s share to the `bytes` it holds, after a deferred-length body that was granted
 * more (never checked: a share only shrinks here).
 */
export async function settleStaging(
  service: TusService,
  ticket: TusTicket,
  id: string,
  bytes: number,
): Promise<void> {
  await withLedger(service, ticket.limits.scope, async (ledger) => {
    ledger[id] = { t: ticket.verified.fileId, b: bytes, e: ticket.expiresAt };
  });
}

/** Ends the shares of `ids` (committed, terminated, replaced, dropped); missing ones are fine. */
export async function releaseStaging(
  service: TusService,
  scope: string,
  ids: readonly string[],
): Promise<void> {
  await withLedger(service, scope, async (ledger) => {
    for (const id of ids) delete ledger[id];
  });
}

/**
 * Runs `change` on the scope's ledger (expired shares dropped first) under the scope's lock, and
 * writes it back when it changed.
 */
async function withLedger<T>(
  service: TusService,
  scope: string,
  change: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  const { state } = service;
  const key = ledgerKey(scope);
  const lock = await lockUpload(state, key, service.lockTtlMs);
  try {
    const now = service.now();
    const stored = (await state.get<Ledger>(key)) ?? {};
    const ledger: Ledger = {};
    for (const [id, share] of Object.entries(stored)) if (share.e > now) ledger[id] = share;
    const result = await change(ledger);
    if (JSON.stringify(ledger) !== JSON.stringify(stored)) {
      const shares = Object.values(ledger);
      if (shares.length === 0) await state.delete(key);
      else await state.set(key, ledger, { ttl: ttlSeconds(Math.max(...shares.map((s) => s.e)), now) });
    }
    return result;
  } catch (error) {
    throw error instanceof FileBridgeError
      ? error
      : new FileBridgeError("STORAGE_ERROR", "Could not count staged bytes", { cause: error });
  } finally {
    await lock.release();
  }
}
