/** The `FileBridgeError`s that several of the bridge's input forms (and its materializer) raise alike. */
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";

/** `FILE_TOO_LARGE`, with the size and the limit in `data`. */
export function tooLarge(size: number, limit: number): FileBridgeError {
  return new FileBridgeError("FILE_TOO_LARGE", `the file is ${size} bytes; the limit is ${limit}`, {
    data: { size, limit },
  });
}

/** A resolver's own FileBridgeError passes through; anything else becomes `STORAGE_ERROR` (cause kept). */
export function resolverFailure(what: string, error: unknown): FileBridgeError {
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", `${what} failed`, { cause: error });
}

/** `ABORTED`: the caller's signal fired. */
export function aborted(): FileBridgeError {
  return new FileBridgeError("ABORTED", "the resolution was aborted");
}
