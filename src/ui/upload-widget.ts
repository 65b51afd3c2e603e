import { assertUiUri, DEFAULT_UPLOAD_WIDGET_URI, MCP_APP_MIME_TYPE } from "../uploads/widget-meta.js";
import { UPLOAD_CSS } from "./generated/page-assets.js";
import { WIDGET_SCRIPT } from "./generated/widget-assets.js";
import { escapeHtml, jsonForScript, uploaderMarkup } from "./markup.js";

export {
  DEFAULT_UPLOAD_WIDGET_URI,
  MCP_APP_MIME_TYPE,
  uploadWidgetToolMeta,
} from "../uploads/widget-meta.js";

import { optionCheck } from "../internal/options.js";

/**
 * Options of {@link uploadWidgetResource}.
 *
 * @example
 * ```ts
 * const options: UploadWidgetOptions = {
 *   uploadOrigin: "https://files.example.com", // where createFileRoutes is reachable
 *   toolName: "get_upload_url",
 *   domain: "a904794854a047f6.claudemcpcontent.com",
 * };
 * ```
 */
export interface UploadWidgetOptions {
  /**
   * Origin (or origins) of the file routes the widget uploads to, e.g. `"https://files.example.com"`:
   * declared in `_meta.ui.csp.connectDomains` so the host's sandbox lets the widget connect there.
   * The routes must answer CORS for the host's sandbox origin (see docs/people-in-the-loop.md).
   */
  uploadOrigin: string | readonly string[];
  /**
   * The `ui://` URI of the resource.
   * @default "ui://mcp-file-bridge/upload.html"
   */
  uri?: string;
  /**
   * The tool the widget is linked to: its result's `structuredContent` is an upload ticket
   * (`upload_url`, `max_bytes`, `max_files`, `expires_at`), as `get_upload_url` returns. The widget
   * takes the ticket from the tool result the host passes it, and calls the tool again through the
   * host when it has none or the link expired.
   * @default "get_upload_url"
   */
  toolName?: string;
  /**
   * Dedicated sandbox origin to ask the host for (`_meta.ui.domain`); the format is host-specific
   * (Claude: `{hash}.claudemcpcontent.com`). Needed by some hosts to render the widget at all, and
   * gives a stable origin to allow in CORS.
   * @default none (the host picks its default sandbox origin)
   */
  domain?: string;
  /**
   * Ask the host for a visible border (`_meta.ui.prefersBorder`).
   * @default true
   */
  prefersBorder?: boolean;
  /**
   * After an upload, also post a chat message (`ui/message`) listing the new handles, so the model
   * acts on them at once. The model context (`ui/update-model-context`) is always updated when the
   * host supports it.
   * @default true
   */
  sendMessage?: boolean;
  /**
   * Heading of the widget.
   * @default "Upload files"
   */
  title?: string;
  /**
   * Text under the heading.
   * @default none
   */
  message?: string;
  /**
   * File types the picker offers (`accept` attribute); a hint, the server decides.
   * @default any file
   */
  accept?: readonly string[];
}

/**
 * `_meta.ui` of the widget resource (SEP-1865 `McpUiResourceMeta`).
 *
 * @example
 * ```ts
 * const meta: UploadWidgetUiMeta = { csp: { connectDomains: ["https://files.example.com"] }, prefersBorder: true };
 * ```
 */
export interface UploadWidgetUiMeta {
  /** Sandbox CSP: the widget only connects to the file routes. */
  csp: { connectDomains: string[]; resourceDomains: string[] };
  /** Dedicated sandbox origin, when configured. */
  domain?: string;
  /** Visible border preference. */
  prefersBorder: boolean;
}

/**
 * The widget as an MCP resource: what `resources/list` shows (`uri`, `name`, `title`,
 * `description`, `mimeType`, `_meta`) and what `resources/read` returns ({@link UploadWidgetResource.contents}).
 *
 * @example
 * ```ts
 * const widget: UploadWidgetResource = uploadWidgetResource({ uploadOrigin });
 * server.registerResource(widget.name, widget.uri, { title: widget.title, description: widget.description,
 *   mimeType: widget.mimeType, _meta: widget._meta }, async () => ({ contents: [widget.contents] }));
 * ```
 */
export interface UploadWidgetResource {
  /** The `ui://` URI. */
  uri: string;
  /** Resource name. */
  name: string;
  /** Display title. */
  title: string;
  /** What it is. */
  description: string;
  /** `text/html;profile=mcp-app`. */
  mimeType: typeof MCP_APP_MIME_TYPE;
  /** The whole HTML document: styles and script inline (ext-apps bundled), no external asset. */
  text: string;
  /** `{ ui: { csp, domain?, prefersBorder } }`. */
  _meta: { ui: UploadWidgetUiMeta };
  /** The tool the widget is linked to and calls for a fresh link (`UploadHandleResolver.attach` checks it). */
  toolName: string;
  /** The `resources/read` content entry: `{ uri, mimeType, text, _meta }`. */
  contents: {
    uri: string;
    mimeType: typeof MCP_APP_MIME_TYPE;
    text: string;
    _meta: { ui: UploadWidgetUiMeta };
  };
}

const check = optionCheck("uploadWidgetResource");

function originOf(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw check.error("uploadOrigin", `must be an http(s) origin, got ${JSON.stringify(value)}`);
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.origin === "null") {
    throw check.error("uploadOrigin", `must be an http(s) origin, got ${JSON.stringify(value)}`);
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw check.error(
      "uploadOrigin",
      `must be an origin only (scheme, host, port), got ${JSON.stringify(value)}`,
    );
  }
  return url.origin;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The MCP App upload widget as a `ui://` resource (`text/html;profile=mcp-app`). Everything is
 * inline (the ext-apps `App` is bundled in; no CDN): the person picks or drops files, they go
 * straight to the signed upload URL of the linked tool's result with a progress bar each, and the
 * widget tells the conversation which `upload://` handles now exist (model context, and a chat
 * message unless `sendMessage: false`). Covers host quirks: both link keys
 * ({@link uploadWidgetToolMeta}), the `ui/notifications/initialized` handshake, a configurable
 * `ui.domain`, and one-file-at-a-time picking when a `multiple` pick returns no file.
 *
 * @example
 * ```ts
 * const widget = uploadWidgetResource({ uploadOrigin: "https://files.example.com" });
 * server.registerResource(widget.name, widget.uri, { mimeType: widget.mimeType, _meta: widget._meta },
 *   async () => ({ contents: [widget.contents] }));
 * server.registerTool("get_upload_url", { _meta: uploadWidgetToolMeta(widget.uri) }, handler);
 * ```
 */
export function uploadWidgetResource(options: UploadWidgetOptions): UploadWidgetResource {
  if (typeof options !== "object" || options === null) throw check.error("options", "must be an object");
  const origins = (
    typeof options.uploadOrigin === "string" ? [options.uploadOrigin] : [...(options.uploadOrigin ?? [])]
  ).map(originOf);
  if (origins.length === 0) throw check.error("uploadOrigin", "must name at least one origin");
  const uri = options.uri ?? DEFAULT_UPLOAD_WIDGET_URI;
  assertUiUri(uri);
  const toolName = options.toolName ?? "get_upload_url";
  if (typeof toolName !== "string" || !TOOL_NAME.test(toolName)) {
    throw check.error("toolName", "must be 1-64 characters of A-Z a-z 0-9 _ . -");
  }
  if (options.domain !== undefined && (typeof options.domain !== "string" || options.domain.trim() === "")) {
    throw check.error("domain", "must be a non-empty string");
  }
  const title = options.title ?? "Upload files";
  const config = { toolName, sendMessage: options.sendMessage ?? true, version: "1" };
  const text = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${UPLOAD_CSS}</style>
</head>
<body>
${uploaderMarkup({ title, message: options.message, accept: options.accept, doneText: "Your files are uploaded." })}
<script type="application/json" id="upload-config">${jsonForScript(config)}</script>
<script>${WIDGET_SCRIPT}</script>
</body>
</html>
`;
  const ui: UploadWidgetUiMeta = {
    csp: { connectDomains: [...new Set(origins)], resourceDomains: [] },
    prefersBorder: options.prefersBorder ?? true,
  };
  if (options.domain !== undefined) ui.domain = options.domain;
  const _meta = { ui };
  return {
    uri,
    name: "upload-widget",
    title,
    description: "Pick or drop files to upload them to this server; the chat gets their handles.",
    mimeType: MCP_APP_MIME_TYPE,
    text,
    _meta,
    toolName,
    contents: { uri, mimeType: MCP_APP_MIME_TYPE, text, _meta },
  };
}
