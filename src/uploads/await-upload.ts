/**
 * The poll path of a pending upload: a tool call that waits a bounded time (below a client's request
 * timeout) for the person's upload of a file request, sending MCP progress while bytes arrive, and
 * answers either the files, `pending` with how far the upload got (the model calls again), or a
 * clear `TOKEN_EXPIRED` error once the link expired. Bound to the caller's scope: a request of
 * another scope is unknown (`NOT_FOUND`).
 */
import * as z from "zod/v4";
import { toToolErrorResult } from "../errors/file-bridge-error.js";
import { firstUse } from "../internal/first-use.js";
import type { HostRequestContext, HostTool } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import type { FileRequests } from "./request-files.js";

/** The wait of one call (`await-upload-work.ts`), loaded at the first `await_upload` call (issue 39). */
const loadWork = firstUse(() => import("./await-upload-work.js"));

/** Default and longest wait of one `await_upload` call, seconds (below the SDKs' 60 s request timeout). */
export const AWAIT_UPLOAD_DEFAULT_SECONDS = 25;
export const AWAIT_UPLOAD_MAX_SECONDS = 55;

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
        const outcome = await (await loadWork()).awaitUploadThrough(
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
