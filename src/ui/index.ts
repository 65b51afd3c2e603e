/**
 * `mcp-file-bridge/ui`: the pieces for people in the loop — the upload page, the MCP App upload
 * widget and URL-mode file requests. None of them imports the MCP SDK.
 */

export { FileRequests } from "../uploads/request-files.js";
export type {
  FileRequest,
  FileRequestsOptions,
  FileRequestToolResult,
  RequestFilesOptions,
  UrlElicitationParams,
  WaitOptions,
} from "../uploads/request-files-types.js";
export type {
  UploadPage,
  UploadPageForTokenOptions,
  UploadPageOptions,
  UploadPageProblem,
} from "./upload-page.js";
export {
  renderUploadPage,
  renderUploadPageProblem,
  UPLOAD_PAGE_CLAIMS,
  uploadPageForToken,
  uploadPageRenderer,
  uploadPageResponse,
  wantsUploadPage,
} from "./upload-page.js";
export type {
  UploadWidgetOptions,
  UploadWidgetResource,
  UploadWidgetUiMeta,
} from "./upload-widget.js";
export {
  DEFAULT_UPLOAD_WIDGET_URI,
  MCP_APP_MIME_TYPE,
  uploadWidgetResource,
  uploadWidgetToolMeta,
} from "./upload-widget.js";
