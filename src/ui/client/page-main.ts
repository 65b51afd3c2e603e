/**
 * Browser entry of the upload page (bundled by `scripts/browser/build-ui.ts`): reads the page's
 * JSON config block and mounts the uploader.
 */
import { mountUploader, type UploadTarget } from "./uploader.js";

interface PageConfig {
  uploadUrl: string;
  maxBytes: number;
  maxFiles: number;
  expiresAt?: string;
}

const config = JSON.parse(document.getElementById("upload-config")?.textContent ?? "{}") as PageConfig;
const target: UploadTarget = {
  uploadUrl: config.uploadUrl,
  maxBytes: config.maxBytes,
  maxFiles: config.maxFiles,
  expiresAt: config.expiresAt,
};
mountUploader(document, { target, singlePickFallback: true });
