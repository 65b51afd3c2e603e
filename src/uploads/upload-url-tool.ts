/**
 * What `UploadHandleResolver.attach` registers: the upload-URL tool (`get_upload_url`), the upload
 * widget's resource when one is given, and one handle over both and the status tool.
 */
import * as z from "zod/v4";
import { FileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import { formatLimit } from "../internal/byte-size.js";
import type { HostResourceHandle, HostTool, HostToolHandle, McpHost } from "../mcp/host.js";
import type { ScopeSource } from "../scope/scope.js";
import { check } from "./resolver-settings.js";
import { type TicketAsk, ticketAskOf, ticketAskShape } from "./ticket-ask.js";
import type { UploadAttachOptions, UploadTicket } from "./types.js";

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

/** The upload-URL tool: a ticket bound to the caller's scope, as text and as `structuredContent`. */
export function uploadUrlTool(host: McpHost, deps: UploadUrlToolDeps): HostTool {
  return {
    name: deps.name,
    title: "Get an upload URL",
    description:
      "Returns a short-lived URL the user (or client) can upload files to over HTTP, for files too " +
      "large to pass inline. After the upload, pass the returned handle (upload://…) as the file " +
      "argument of another tool." +
      (deps.statusName ? ` ${deps.statusName} says whether the person finished the upload.` : ""),
    inputSchema: {
      filename: z
        .string()
        .max(200)
        .optional()
        .describe("Name of the file to upload, used in the example command line."),
      ...ticketAskShape(),
    },
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    ...(deps.meta === undefined ? {} : { _meta: deps.meta }),
    handler: async (args, { extra }) => {
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
        return { content: [{ type: "text" as const, text: ticketText(ticket) }], structuredContent: ticket };
      } catch (error) {
        return toToolErrorResult(error);
      }
    },
  };
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

/**
 * Registers the upload widget (what `uploadWidgetResource()` returns) on `host`, after checking it
 * calls the resolver's tool; `undefined` without a widget.
 */
export function registerUploadWidget(
  host: McpHost,
  widget: UploadAttachOptions["widget"],
  toolName: string,
): HostResourceHandle | undefined {
  if (widget === undefined) return undefined;
  if (typeof widget?.uri !== "string" || typeof widget.contents?.text !== "string") {
    throw check.error("widget", "must be what uploadWidgetResource() returns");
  }
  if (widget.toolName !== undefined && widget.toolName !== toolName) {
    throw check.error(
      "widget",
      `calls the tool ${JSON.stringify(widget.toolName)}, but this resolver's tool is ${JSON.stringify(toolName)}: build it with uploadWidgetResource({ toolName: ${JSON.stringify(toolName)} })`,
    );
  }
  if (!host.registerResource) {
    throw new FileBridgeError(
      "INVALID_INPUT",
      `attach(): this host (${host.kind}) cannot register resources`,
    );
  }
  const { contents } = widget;
  return host.registerResource({
    uri: widget.uri,
    name: widget.name,
    ...(widget.title === undefined ? {} : { title: widget.title }),
    ...(widget.description === undefined ? {} : { description: widget.description }),
    mimeType: widget.mimeType,
    ...(widget._meta === undefined ? {} : { _meta: widget._meta }),
    read: async () => ({ contents: [{ ...contents }] }),
  });
}

/**
 * One handle over the upload tool, its status tool and its widget: enabling or disabling it does
 * both tools, removing it removes all three. The tool's own handle when there is nothing else.
 */
export function attachedHandle(
  tool: HostToolHandle,
  status: HostToolHandle | undefined,
  widget: HostResourceHandle | undefined,
): HostToolHandle {
  if (!widget && !status) return tool;
  return {
    get enabled() {
      return tool.enabled;
    },
    set enabled(value: boolean) {
      tool.enabled = value;
      if (status) status.enabled = value;
    },
    enable: () => {
      tool.enable();
      status?.enable();
    },
    disable: () => {
      tool.disable();
      status?.disable();
    },
    remove: () => {
      tool.remove();
      status?.remove();
      widget?.remove();
    },
  };
}
