/**
 * The `get_upload_url` tool the proxy serves itself when an upstream tool takes uploads: a
 * short-lived upload ticket of the caller's scope, described for the model (URL, limits, an example
 * command line, the handle to pass on).
 */
import * as z from "zod/v4";
import { formatLimit } from "../internal/byte-size.js";
import { ticketAskOf, ticketAskShape } from "../uploads/ticket-ask.js";
import type { UploadHandleResolver } from "../uploads/upload-handle-resolver.js";
import { uploadStatusResult } from "../uploads/upload-status.js";
import { checkUploadDescription } from "../uploads/upload-status-tool.js";
import type { JsonObject, LocalTool } from "./types.js";

/** The JSON Schema of the ticket's ask arguments (message, accept, max_files). */
function askProperties(): JsonObject {
  const schema = z.toJSONSchema(z.object(ticketAskShape())) as JsonObject;
  return (schema.properties ?? {}) as JsonObject;
}

/** The `get_upload_url` tool served by the proxy itself. */
export function uploadUrlTool(uploads: UploadHandleResolver): LocalTool {
  return {
    definition: {
      name: uploads.toolName,
      title: "Get an upload URL",
      description:
        "Returns a short-lived URL the user (or client) can upload files to over HTTP, for files too large to " +
        "pass inline. After the upload, pass the returned handle (upload://…) as the file argument of another tool.",
      inputSchema: {
        type: "object",
        properties: {
          filename: {
            type: "string",
            maxLength: 200,
            description: "Name of the file to upload, used in the example command line.",
          },
          ...askProperties(),
        },
      },
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    async call(args, { scope }) {
      const filename = typeof args.filename === "string" && args.filename ? args.filename : undefined;
      await uploads.assertTicketAllowed(scope, uploads.toolName);
      const ticket = await uploads.createTicket(scope, {
        ...(filename ? { filename } : {}),
        ...ticketAskOf(args as Record<string, unknown>),
      });
      const text = [
        `Upload URL (${ticket.method} multipart/form-data, field "${ticket.field}", or PUT the raw bytes with ?filename=…): ${ticket.upload_url}`,
        `Expires at ${ticket.expires_at}; at most ${ticket.max_files} file(s) of ${formatLimit(ticket.max_bytes)} each${ticket.single_use ? "; works for one successful upload." : "."}`,
        `Example: ${ticket.curl}`,
        `After the upload, pass ${ticket.handle} (or the handles in the upload's JSON reply) as the file argument.`,
      ].join("\n");
      return { content: [{ type: "text", text }], structuredContent: ticket as unknown as JsonObject };
    },
  };
}

/**
 * The `check_upload` tool served by the proxy next to `get_upload_url`: where a handle stands for
 * the caller's scope (pending, receiving n of m bytes, ready, unknown), answered at once.
 */
export function checkUploadLocalTool(uploads: UploadHandleResolver, name = "check_upload"): LocalTool {
  return {
    definition: {
      name,
      title: "Check an upload",
      description: checkUploadDescription(uploads.toolName),
      inputSchema: {
        type: "object",
        properties: {
          handle: {
            type: "string",
            maxLength: 500,
            description: "The upload://… handle the upload URL tool returned.",
          },
        },
        required: ["handle"],
      },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async call(args, { scope }) {
      const handle = typeof args.handle === "string" ? args.handle : "";
      return uploadStatusResult(await uploads.statusOf(handle, { scope })) as unknown as JsonObject;
    },
  };
}
