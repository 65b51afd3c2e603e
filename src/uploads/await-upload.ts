/**
 * The poll path of a pending upload: a tool call that waits a bounded time (below a client's request
 * timeout) for the person's upload of a file request, sending MCP progress while bytes arrive, and
 * answers either the files, `pending` with how far the upload got (the model calls again), or a
 * clear `TOKEN_EXPIRED` error once the link expired. Bound to the caller's scope: a request of
 * another scope is unknown (`NOT_FOUND`).
 */
import * as z from "zod/v4";
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import type { HostRequestContext, HostTool } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import type { FileRequests } from "./request-files.js";
import type { FileRequestOutcome } from "./request-files-flow.js";
import { loadRequestFilesFlow } from "./request-files-later.js";

/** Default and longest wait of one `await_upload` call, seconds (below the SDKs' 60 s request timeout). */
export const AWAIT_UPLOAD_DEFAULT_SECONDS = 25;
export const AWAIT_UPLOAD_MAX_SECONDS = 55;

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
  const { errorOutcome, expiredOutcome, progressNotifier, uploaded } = await loadRequestFilesFlow();
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

/**
 * The `await_upload` tool: the model's poll path for a pending upload (`requestFiles` answered
 * `upload_required`, or a call timed out while the person was still uploading).
 *
 * @example
 * ```ts
 * host.registerTool(awaitUploadTool("await_upload", requests, (ctx) => scopeOf(ctx)));
 * ```
 */
export function awaitUploadTool(
  name: string,
  requests: FileRequests,
  scopeOf: (ctx: HostRequestContext) => string,
): HostTool {
  return {
    name,
    title: "Wait for an upload",
    description:
      "Waits (up to wait_seconds) for the user's upload of a file request and returns the uploaded " +
      "files' handles; answers status pending with the bytes received so far when the upload is not " +
      "done yet (call again), or an error once the upload link expired.",
    inputSchema: {
      request_id: z.string().min(1).max(200).describe("The request_id of the upload request."),
      wait_seconds: z
        .number()
        .int()
        .min(1)
        .max(AWAIT_UPLOAD_MAX_SECONDS)
        .optional()
        .describe(`How long to wait in this call (default ${AWAIT_UPLOAD_DEFAULT_SECONDS}).`),
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      try {
        const wait = typeof args.wait_seconds === "number" ? args.wait_seconds : AWAIT_UPLOAD_DEFAULT_SECONDS;
        const outcome = await awaitUploadThrough(
          requests,
          ctx,
          scopeOf(ctx),
          String(args.request_id),
          wait * 1000,
        );
        return outcome.result;
      } catch (error) {
        return toToolErrorResult(error) as CallToolResult;
      }
    },
  };
}
