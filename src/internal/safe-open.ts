import { constants } from "node:fs";
import { type FileHandle, open, readlink, realpath, stat } from "node:fs/promises";
import { FileBridgeError } from "../errors/file-bridge-error.js";

/**
 * Opening a local file on someone's behalf, safely: the path is checked, then opened ONCE, and
 * everything after (size, hash, copy) works from that descriptor. A symlink swapped in after the
 * check cannot redirect the read:
 * - the last component is opened with `O_NOFOLLOW`, so a symlink there fails the open;
 * - where `/proc/self/fd` exists (Linux) the descriptor's own path is read back and checked again,
 *   which also catches a folder higher up that was swapped for a symlink;
 * - elsewhere the descriptor's (dev, ino) must equal those of the path that was checked.
 * A hard link inside an allowed folder to a file outside it cannot be told apart from a real file
 * (docs/security.md says so).
 */

const OPEN_FLAGS =
  constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** A file opened by {@link openContainedFile}. Close `handle` when done. */
export interface OpenedFile {
  /** The open descriptor: read from it, never from the path again. */
  readonly handle: FileHandle;
  /** The real path that was checked and opened. */
  readonly path: string;
  /** Size in bytes at open time (from `fstat`). */
  readonly size: number;
}

/** Decides whether a real (symlink-free) path may be opened. */
export type AllowedPath = (realPath: string) => boolean;

function notAllowed(message: string): FileBridgeError {
  return new FileBridgeError("PATH_NOT_ALLOWED", message);
}

function mapOpenError(cause: unknown): FileBridgeError {
  const code = (cause as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR")
    return new FileBridgeError("NOT_FOUND", "no file at that path", { cause });
  if (code === "ELOOP" || code === "EMLINK")
    return notAllowed("path is a symlink that changed after it was checked");
  if (code === "EISDIR") return new FileBridgeError("INVALID_INPUT", "path is a folder, not a file");
  return notAllowed("path cannot be read");
}

const DELETED = " (deleted)";
let procFdWorks: boolean | undefined;

/** The path the kernel has for an open descriptor (`/proc/self/fd/N`), or `null` where unknown. */
async function descriptorPath(handle: FileHandle): Promise<string | null> {
  if (procFdWorks === false) return null;
  try {
    const path = await readlink(`/proc/self/fd/${handle.fd}`);
    procFdWorks = true;
    return path;
  } catch {
    procFdWorks = false;
    return null;
  }
}

/**
 * Resolves `candidate` to its real path, checks it with `allowed`, opens it once without following a
 * symlink at the last component, and verifies that what was opened is what was checked. Throws
 * `PATH_NOT_ALLOWED` (outside, or swapped), `NOT_FOUND`, or `INVALID_INPUT` (not a regular file).
 */
export async function openContainedFile(candidate: string, allowed: AllowedPath): Promise<OpenedFile> {
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (cause) {
    throw mapOpenError(cause);
  }
  if (!allowed(real)) throw notAllowed("path leads outside the allowed folders (symlink)");
  let handle: FileHandle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (cause) {
    throw mapOpenError(cause);
  }
  try {
    const opened = await handle.stat();
    if (opened.isDirectory()) throw new FileBridgeError("INVALID_INPUT", "path is a folder, not a file");
    if (!opened.isFile()) throw new FileBridgeError("INVALID_INPUT", "path is not a regular file");
    const actual = await descriptorPath(handle);
    if (actual !== null) {
      // The kernel's path of what was opened. A file replaced after the open reads "<path> (deleted)":
      // it was at <path> when opened, which is what matters.
      const where = actual.endsWith(DELETED) ? actual.slice(0, -DELETED.length) : actual;
      if (!allowed(where)) throw notAllowed("path changed while it was opened");
    } else {
      // No /proc: the descriptor must be the very file that was checked.
      let checked: Awaited<ReturnType<typeof stat>>;
      try {
        checked = await stat(real);
      } catch {
        throw notAllowed("path changed while it was opened");
      }
      if (checked.dev !== opened.dev || checked.ino !== opened.ino) {
        throw notAllowed("path changed while it was opened");
      }
    }
    return { handle, path: real, size: opened.size };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}
