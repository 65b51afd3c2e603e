/**
 * What one call of the upload-URL tool (`upload-url-tool.ts`) answers: a ticket bound to the
 * caller's scope, as text and as `structuredContent`. Loaded at the tool's first call (issue 39);
 * the tool's name, schema and description register at `attach` time.
 */
import { toToolErrorResult } from "../errors/file-bridge-error.js";
import { formatLimit } from "../internal/byte-size.js";
import type { McpHost } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import type { ScopeSource } from "../scope/scope.js";
import { type TicketAsk, ticketAskOf } from "./ticket-ask.js";
import type { UploadTicket } from "./types.js";

/** What the upload-URL tool asks of its resolver. */
export interface UploadUrlToolDeps {
  name: string;
  /** The status tool's name, named in the description when it is attached. */
  statusName: string | undefined;
  meta: Record<string, unknown> | undefined;
  scope: (extra: ScopeSource) => string;
  assertTicketAllowed(scope: string, tool: string): Promise<void>;
  createTicket(
    scope: string,
    options: { filename?: string; serverName?: string } & TicketAsk,
  ): Promise<UploadTicket>;
}

/**
 * One call of the upload-URL tool: asks the rate limit, mints a ticket in the caller's scope and
 * answers it (a tool error result for any failure).
 *
 * @example
 * ```ts
 * handler: async (args, { extra }) => answerUploadUrl(host, deps, args, extra),
 * ```
 */
export async function answerUploadUrl(
  host: McpHost,
  deps: UploadUrlToolDeps,
  args: Record<string, unknown>,
  extra: unknown,
): Promise<CallToolResult> {
  try {
    const scope = deps.scope(extra as ScopeSource);
    await deps.assertTicketAllowed(scope, deps.name);
    const filename = typeof args.filename === "string" ? args.filename : undefined;
    const info = host.serverInfo?.();
    const serverName = info?.title ?? info?.name;
    const ticket = await deps.createTicket(scope, {
      ...(filename ? { filename } : {}),
      ...(serverName === undefined ? {} : { serverName }),
      ...ticketAskOf(args),
    });
    return {
      content: [{ type: "text" as const, text: ticketText(ticket) }],
      structuredContent: ticket,
    };
  } catch (error) {
    return toToolErrorResult(error) as CallToolResult;
  }
}

/** The ticket as the model reads it: where to send the bytes, the limits, and what to pass on. */
function ticketText(ticket: UploadTicket): string {
  return [
    `Upload URL (${ticket.method} multipart/form-data, field "${ticket.field}", or PUT the raw bytes ` +
      `with ?filename=…): ${ticket.upload_url}`,
    `Expires at ${ticket.expires_at}; at most ${ticket.max_files} file(s) of ${formatLimit(ticket.max_bytes)} each` +
      (ticket.single_use ? "; works for one successful upload." : "."),
    `Example: ${ticket.curl}`,
    `After the upload, pass ${ticket.handle} as the file argument: it stands for every uploaded file ` +
      "(for an argument that takes one file after several were uploaded, pass one of the files' own handles from the upload's JSON reply).",
  ].join("\n");
}
