/**
 * Claims a single-use upload ticket for the time its upload runs, so one ticket never stages two
 * uploads at once: the second gets `409 UPLOAD_IN_PROGRESS` before any byte is read. The claim is
 * released when the upload ends; a failed upload (413, 422, aborted, timed out) leaves the ticket
 * usable, a successful one has used the ticket up by then.
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { UploadHandlerConfig, UploadRequestContext, VerifiedTokenClaims } from "./handler-types.js";

/** How long a claim outlives the longest upload, in case the process dies holding it. */
const CLAIM_MARGIN_MS = 60_000;
/** Claim lifetime when uploads have no total timeout. */
const CLAIM_WITHOUT_TIMEOUT_MS = 60 * 60_000;

/** State key of the claim of a ticket while its upload runs. */
export function uploadClaimKey(ticket: VerifiedTokenClaims): string {
  return `upload-claim:${ticket.jti ?? ticket.fileId}`;
}

/**
 * Claims the ticket in the routes' `state` (shared by every replica), or in this process when there is
 * none. Resolves with the function that releases the claim; fails with `UPLOAD_IN_PROGRESS`.
 */
export async function claimTicket(
  config: Pick<UploadHandlerConfig, "state" | "uploadTimeoutMs" | "uploadsInFlight">,
  ctx: Pick<UploadRequestContext, "report">,
  ticket: VerifiedTokenClaims,
): Promise<() => Promise<void>> {
  const key = uploadClaimKey(ticket);
  const busy = () =>
    new FileBridgeError("UPLOAD_IN_PROGRESS", "Another upload with this link is under way", {
      data: { retryable: true },
    });
  const { state } = config;
  if (!state) {
    if (config.uploadsInFlight.has(key)) throw busy();
    config.uploadsInFlight.add(key);
    return async () => {
      config.uploadsInFlight.delete(key);
    };
  }
  const ttlMs =
    (config.uploadTimeoutMs > 0 ? config.uploadTimeoutMs : CLAIM_WITHOUT_TIMEOUT_MS) + CLAIM_MARGIN_MS;
  let claimed: boolean;
  try {
    claimed = await state.setIfAbsent(key, 1, { ttl: ttlMs / 1000 });
  } catch (error) {
    if (isFileBridgeError(error)) throw error;
    throw new FileBridgeError("STORAGE_ERROR", "Could not claim the upload ticket", { cause: error });
  }
  if (!claimed) throw busy();
  return async () => {
    try {
      await state.delete(key);
    } catch (error) {
      // The claim then runs out by itself (its TTL); until then the ticket answers 409.
      ctx.report(error);
    }
  };
}
