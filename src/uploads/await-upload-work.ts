/**
 * The wait behind one `await_upload` call (`await-upload.ts`): the files when the upload is done, a
 * bounded wait with MCP progress, else `pending` with the bytes so far or `TOKEN_EXPIRED`. Loaded
 * at the first call (issue 39); the tool's name, schema and description register at `attach` time.
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import type { HostRequestContext } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import type { FileRequests } from "./request-files.js";
import {
  errorOutcome,
  expiredOutcome,
  type FileRequestOutcome,
  progressNotifier,
  uploaded,
} from "./request-files-flow.js";

/**
 * Waits up to `waitMs` for the upload of request `requestId` in `scope`.
 *
 * @example
 * ```ts
 * const outcome = await awaitUploadThrough(requests, ctx, scope, requestId, 25_000);
 * return outcome.result;
 * ```
 */
export async function awaitUploadThrough(
  requests: FileRequests,
  ctx: Pick<HostRequestContext, "signal" | "notifyProgress">,
  scope: string,
  requestId: string,
  waitMs: number,
): Promise<FileRequestOutcome> {
  const expiresAt = await requests.expiryOf(scope, requestId);
  const done = await requests.filesOf(scope, requestId);
  if (done && done.length > 0) return uploaded(requests, requestId, done);
  if (expiresAt === null) {
    return errorOutcome("expired", requestId, new FileBridgeError("NOT_FOUND", "No such upload request"));
  }
  const onProgress = progressNotifier(ctx);
  try {
    // Ends at the link's expiry (TOKEN_EXPIRED) unless the upload is still receiving bytes then.
    const files = await requests.waitFor(scope, requestId, {
      signal: ctx.signal,
      timeout: Math.max(1, waitMs) / 1000,
      ...(onProgress ? { onProgress } : {}),
    });
    return uploaded(requests, requestId, files);
  } catch (error) {
    if (isFileBridgeError(error, "TOKEN_EXPIRED")) return expiredOutcome(requestId, error);
    if (!isFileBridgeError(error, "TIMEOUT")) throw error;
  }
  const progress = await requests.progressOf(scope, requestId);
  const got =
    progress === null
      ? "Nothing received yet."
      : `${progress.offset}${progress.length === undefined ? "" : ` of ${progress.length}`} bytes received so far.`;
  const expiry = new Date(expiresAt).toISOString();
  // A wait that timed out past the expiry did so because an upload begun in time is still arriving.
  const linkExpired = expiresAt <= Date.now();
  const until = linkExpired
    ? `the link expired at ${expiry}, but this upload began before that and is still arriving`
    : `the link works until ${expiry}`;
  const result: CallToolResult = {
    content: [
      {
        type: "text",
        text: `The user has not finished the upload yet. ${got} Call this tool again with request_id ${requestId} to keep waiting (${until}).`,
      },
    ],
    structuredContent: {
      status: "pending",
      request_id: requestId,
      expires_at: expiry,
      ...(linkExpired ? { link_expired: true } : {}),
      ...(progress === null ? {} : { offset: progress.offset }),
      ...(progress?.length === undefined ? {} : { length: progress.length }),
    },
  };
  return { status: "pending", requestId, result };
}
