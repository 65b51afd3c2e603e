/**
 * The poll path of a pending upload: a tool call that waits a bounded time (below a client's request
 * timeout) for the person's upload of a file request, sending MCP progress while bytes arrive, and
 * answers either the files, `pending` with how far the upload got (the model calls again), or a
 * clear `TOKEN_EXPIRED` error once the link expired. Bound to the caller's scope: a request of
 * another scope is unknown (`NOT_FOUND`).
 */
import { z } from "zod";
import { FileBridgeError, isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import type { HostRequestContext, HostTool } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import type { FileRequests } from "./request-files.js";
import { type FileRequestOutcome, progressNotifier } from "./request-files-flow.js";
import { formatUploadHandle } from "./upload-handle.js";

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
  const expiresAt = await requests.expiryOf(scope, requestId);
  const done = await requests.filesOf(scope, requestId);
  if (done && done.length > 0) return uploadedOutcome(requests, requestId, done);
  if (expiresAt === null) {
    return errorOutcome("expired", requestId, new FileBridgeError("NOT_FOUND", "No such upload request"));
  }
  const left = expiresAt - Date.now();
  if (left <= 0) return expiredOutcome(requestId);
  const onProgress = progressNotifier(ctx);
  try {
    const files = await requests.waitFor(scope, requestId, {
      signal: ctx.signal,
      timeout: Math.max(1, Math.min(waitMs, left)) / 1000,
      ...(onProgress ? { onProgress } : {}),
    });
    return uploadedOutcome(requests, requestId, files);
  } catch (error) {
    if (!isFileBridgeError(error, "TIMEOUT")) throw error;
  }
  if (Date.now() >= expiresAt) return expiredOutcome(requestId);
  const progress = await requests.progressOf(scope, requestId);
  const got =
    progress === null
      ? "Nothing received yet."
      : `${progress.offset}${progress.length === undefined ? "" : ` of ${progress.length}`} bytes received so far.`;
  const result: CallToolResult = {
    content: [
      {
        type: "text",
        text: `The user has not finished the upload yet. ${got} Call this tool again with request_id ${requestId} to keep waiting (the link works until ${new Date(expiresAt).toISOString()}).`,
      },
    ],
    structuredContent: {
      status: "pending",
      request_id: requestId,
      expires_at: new Date(expiresAt).toISOString(),
      ...(progress === null ? {} : { offset: progress.offset }),
      ...(progress?.length === undefined ? {} : { length: progress.length }),
    },
  };
  return { status: "pending", requestId, result };
}

function uploadedOutcome(
  requests: FileRequests,
  requestId: string,
  files: FileRequestOutcome["files"] & object,
): FileRequestOutcome {
  return {
    status: "uploaded",
    requestId,
    files,
    handles: files.map((file) => formatUploadHandle(file.scope, file.id)),
    result: requests.resultFor(requestId, files) as CallToolResult,
  };
}

function errorOutcome(
  status: "timeout" | "expired",
  requestId: string,
  error: FileBridgeError,
): FileRequestOutcome {
  const result: CallToolResult = {
    ...(toToolErrorResult(error) as CallToolResult),
    structuredContent: { status, request_id: requestId, error: { code: error.code, message: error.message } },
  };
  return { status, requestId, result };
}

function expiredOutcome(requestId: string): FileRequestOutcome {
  return errorOutcome(
    "expired",
    requestId,
    new FileBridgeError("TOKEN_EXPIRED", "The upload link expired before the user finished the upload", {
      data: { request_id: requestId },
    }),
  );
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
