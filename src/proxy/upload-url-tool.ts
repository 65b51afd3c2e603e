/**
 * The `get_upload_url` tool the proxy serves itself when an upstream tool takes uploads: a
 * short-lived upload ticket of the caller's scope, described for the model (URL, limits, an example
 * command line, the handle to pass on).
 */
import { formatLimit } from "../internal/byte-size.js";
import type { UploadHandleResolver } from "../uploads/upload-handle-resolver.js";
import type { JsonObject, LocalTool } from "./types.js";

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
        },
      },
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    async call(args, { scope }) {
      const filename = typeof args.filename === "string" && args.filename ? args.filename : undefined;
      await uploads.assertTicketAllowed(scope, uploads.toolName);
      const ticket = await uploads.createTicket(scope, filename ? { filename } : {});
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
