/**
 * What the upload page and widget say for an error code of the upload route (or a network failure):
 * words for the person at the browser, never advice to the server's author.
 *
 * Browser code: bundled by `scripts/browser/build-ui.ts` with `uploader.ts`.
 */
import { formatLimit } from "../../internal/byte-size.js";

/** The message shown for an error code of the upload route (or a network failure). */
export function messageFor(code: string, status: number, limit?: number): string {
  switch (code) {
    case "TOKEN_EXPIRED":
      return "This upload link has expired. Ask for a new one in the chat.";
    case "TOKEN_ALREADY_USED":
      return "This upload link was already used. Ask for a new one in the chat.";
    case "INVALID_TOKEN":
    case "NOT_FOUND":
      return "This upload link is not valid. Ask for a new one in the chat.";
    case "FILE_TOO_LARGE":
      return limit
        ? `A file is larger than the limit of ${formatLimit(limit)}. Nothing was uploaded.`
        : "A file is too large. Nothing was uploaded.";
    case "UPLOAD_IN_PROGRESS":
      // The ticket is claimed while an upload runs; a dropped upload releases it within moments.
      return "An upload with this link is still under way. Wait a moment, then try again.";
    case "RATE_LIMITED":
      return "Too many uploads right now. Wait a moment, then try again.";
    case "NETWORK":
      return "The upload failed: the server could not be reached or the connection dropped. Try again.";
    case "NO_TARGET":
      return "There is no upload link yet. Ask for one in the chat.";
    default:
      return status >= 500
        ? "The server could not store the files. Nothing was uploaded. Try again later."
        : "The server refused the upload. Nothing was uploaded.";
  }
}
