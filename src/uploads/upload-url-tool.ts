/**
 * What `UploadHandleResolver.attach` registers: the upload-URL tool (`get_upload_url`), the upload
 * widget's resource when one is given, and one handle over both and the status tool.
 */
import * as z from "zod/v4";
import { FileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import { firstUse } from "../internal/first-use.js";
import type { HostResourceHandle, HostTool, HostToolHandle, McpHost } from "../mcp/host.js";
import type { CallToolResult } from "../mcp/types.js";
import { check } from "./resolver-settings.js";
import type { UploadUrlToolDeps } from "./resolver-work.js";
import { ticketAskOf, ticketAskShape } from "./ticket-ask.js";
import type { UploadAttachOptions } from "./types.js";

export type { UploadUrlToolDeps } from "./resolver-work.js";

/**
 * A call's answer (`answerUploadUrl`, with the resolver's later parts, which minting the ticket
 * loads anyway), loaded at the tool's first call (issue 39).
 */
const loadAnswer = firstUse(() => import("./resolver-later.js"));

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
    // A failed load is the call's error result, as any failure of the call is.
    handler: (args, { extra }) =>
      loadAnswer().then(
        (later) => later.answerUploadUrl(host, deps, args, ticketAskOf(args), extra),
        (error: unknown) => toToolErrorResult(error) as CallToolResult,
      ),
  };
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
