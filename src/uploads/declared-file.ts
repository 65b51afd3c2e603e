/**
 * The check of a files-extension ticket (`files/authorizeUpload`), shared by the single-request
 * upload and the tus commit: the declared size, sha-256 and media type are exact, checked on the
 * staged file before anything commits; a mismatch leaves nothing stored and the ticket unused. The
 * error's `data.reason` is the draft's name for it.
 */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { parseMediaType } from "../media/media-type.js";
import type { StoredFile } from "../storage/types.js";
import { TICKET_CLAIMS } from "./upload-handle.js";

/** The refusal of a file whose size is not the declared one (over it: `maxSizeExceeded`). */
function sizeRefusal(actual: number, declared: number): FileBridgeError {
  return new FileBridgeError(
    actual > declared ? "FILE_TOO_LARGE" : "INVALID_REQUEST",
    `The file has ${actual} bytes; ${declared} were declared`,
    {
      data: {
        reason: actual > declared ? "maxSizeExceeded" : "sizeMismatch",
        maxSize: declared,
        actualSize: actual,
      },
    },
  );
}

/** The refusal of a file whose sha-256 is not the one a files-extension ticket declared. */
export function ticketDigestRefusal(): FileBridgeError {
  return new FileBridgeError("DIGEST_MISMATCH", "The file's sha-256 is not the declared one", {
    data: { reason: "digestMismatch" },
  });
}

/**
 * The check a ticket's claims ask for, or `undefined` when the ticket declared nothing: throws the
 * first mismatch of a staged file's size, sha-256 or media type.
 */
export function declaredFileCheck(claims: Record<string, unknown>): ((file: StoredFile) => void) | undefined {
  const size = claims[TICKET_CLAIMS.exactSize];
  const sha256 = claims[TICKET_CLAIMS.sha256];
  const mimeType = claims[TICKET_CLAIMS.mimeType];
  if (size === undefined && sha256 === undefined && mimeType === undefined) return undefined;
  return (file) => {
    if (typeof size === "number" && file.size !== size) throw sizeRefusal(file.size, size);
    if (typeof sha256 === "string" && file.sha256 !== sha256) throw ticketDigestRefusal();
    if (typeof mimeType === "string" && parseMediaType(file.mimeType)?.essence !== mimeType) {
      throw new FileBridgeError("UNSUPPORTED_MEDIA_TYPE", `The file is not ${mimeType}`, {
        data: { reason: "mimeTypeNotAccepted", mimeType },
      });
    }
  };
}

/**
 * A length announced before the bytes (tus `Upload-Length`) checked against the ticket's declared
 * size, so a wrong length is refused before any byte is sent. Nothing declared: nothing to check.
 */
export function checkDeclaredLength(claims: Record<string, unknown>, length: number): void {
  const size = claims[TICKET_CLAIMS.exactSize];
  if (typeof size === "number" && length !== size) throw sizeRefusal(length, size);
}

/** A body over a files-extension ticket's declared size, cut off while streaming, gets the draft's reason too. */
export function withSizeReason(error: unknown, declared: unknown): unknown {
  if (typeof declared !== "number" || !isFileBridgeError(error, "FILE_TOO_LARGE")) return error;
  if (error.data?.reason !== undefined) return error;
  return new FileBridgeError("FILE_TOO_LARGE", error.message, {
    data: { ...error.data, reason: "maxSizeExceeded", maxSize: declared },
    cause: error,
  });
}
