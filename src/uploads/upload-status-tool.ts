/**
 * The `check_upload` tool's registration (its schema and name check, run by `attach`): what the
 * resolver needs synchronously of the upload status. The answers (`upload-status.ts`) load on first
 * use (issue 39).
 */
import * as z from "zod/v4";
import { toToolErrorResult } from "../errors/file-bridge-error.js";
import { optionCheck } from "../internal/options.js";
import type { HostRequestContext, HostTool } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";

/** What the status tool tells the model it does. */
export function checkUploadDescription(uploadToolName: string): string {
  return (
    `Says whether the person finished an upload: pass the handle (upload://…) that ${uploadToolName} returned. ` +
    "Answers at once: pending (not started), receiving (bytes so far), ready (pass the handle on), or unknown (expired)."
  );
}

/**
 * The `check_upload` tool: the model's cheap "has it arrived?" for a handle from `get_upload_url`.
 * Answers at once (no waiting) with the `UploadStatus` as `structuredContent` and in the text
 * (`answer`: `uploadStatusResult` of `statusOf`, loaded on first use).
 */
export function checkUploadTool(
  name: string,
  uploadToolName: string,
  answer: (handle: string, ctx: HostRequestContext) => Promise<CallToolResult>,
): HostTool {
  return {
    name,
    title: "Check an upload",
    description: checkUploadDescription(uploadToolName),
    inputSchema: {
      handle: z.string().max(500).describe("The upload://… handle the upload URL tool returned."),
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      try {
        return await answer(String(args.handle ?? ""), ctx);
      } catch (error) {
        return toToolErrorResult(error);
      }
    },
  };
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The status tool's name from `attach(server, { statusTool })`: `check_upload` by default,
 * `undefined` for `false`; `INVALID_OPTION` for anything else that is not a tool name.
 */
export function statusToolName(option: string | false | undefined): string | undefined {
  if (option === false) return undefined;
  const name = option ?? "check_upload";
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw optionCheck("UploadHandleResolver").error(
      "statusTool",
      "must be false or 1-64 characters of A-Z a-z 0-9 _ . -",
    );
  }
  return name;
}
