/**
 * The light part of the MCP App upload widget: its media type, default URI and the tool `_meta`
 * that links a tool to it. Kept apart from the widget's HTML (which carries the bundled ext-apps
 * script) so `UploadHandleResolver.attach` can link the widget without loading it.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";

/**
 * Media type of an MCP App resource (SEP-1865): HTML a host renders in a sandboxed iframe.
 *
 * @example
 * ```ts
 * const resource = uploadWidgetResource({ uploadOrigin: "https://files.example.com" });
 * resource.mimeType === MCP_APP_MIME_TYPE; // true
 * ```
 */
export const MCP_APP_MIME_TYPE = "text/html;profile=mcp-app";

/**
 * Default URI of the upload widget resource.
 *
 * @example
 * ```ts
 * uploadWidgetToolMeta(DEFAULT_UPLOAD_WIDGET_URI); // { ui: { resourceUri: "ui://mcp-file-bridge/upload.html" }, … }
 * ```
 */
export const DEFAULT_UPLOAD_WIDGET_URI = "ui://mcp-file-bridge/upload.html";

/**
 * The `_meta` that links a tool to the widget. Carries both the nested `ui.resourceUri` of the
 * spec and the flat `"ui/resourceUri"` key: hosts that only read one of them (Claude read only the
 * flat key when this was written) render the widget either way.
 *
 * @example
 * ```ts
 * server.registerTool("get_upload_url", { description, _meta: uploadWidgetToolMeta() }, handler);
 * ```
 */
export function uploadWidgetToolMeta(uri: string = DEFAULT_UPLOAD_WIDGET_URI): {
  ui: { resourceUri: string };
  "ui/resourceUri": string;
} {
  assertUiUri(uri);
  return { ui: { resourceUri: uri }, "ui/resourceUri": uri };
}

/** Throws `INVALID_OPTION` (option `uri`) unless `uri` is a `ui://` URI. */
export function assertUiUri(uri: string): void {
  if (typeof uri !== "string" || !/^ui:\/\/[^\s]+$/.test(uri))
    throw new FileBridgeError("INVALID_OPTION", "uploadWidgetResource: uri must be a ui:// URI", {
      data: { option: "uri" },
    });
}
