/**
 * Descriptor-safe reads of files inside allowed folders (upstream output folders, the shim's
 * allowed local folders): the file is opened once with `O_NOFOLLOW`, its real path must be inside a
 * folder, the opened descriptor must be the same file (device and inode) as the checked path, and
 * every byte is read from that descriptor — a symlink swapped in after the check cannot redirect the
 * read.
 * The opening itself is `openContainedFile` (src/internal/safe-open.ts), the same as the bridge's.
 */
import type { FileHandle } from "node:fs/promises";
import { realpath } from "node:fs/promises";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { openContainedFile } from "../internal/safe-open.js";

/** A file opened inside an allowed folder; read it through `handle`, then `close()`. */
export interface ConfinedFile {
  handle: FileHandle;
  /** The checked real path. */
  path: string;
  name: string;
  size: number;
  close(): Promise<void>;
}

/** True when `child` is `parent` or inside it (both absolute, normalized). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** Allowed folders: as given (absolute) for the lexical check, and their real paths. */
export interface Folders {
  readonly given: readonly string[];
  readonly real: readonly string[];
}

/** Resolves allowed folders (each must exist). */
export async function confinedFolders(folders: readonly string[]): Promise<Folders> {
  const given = folders.map((folder) => resolve(folder));
  const real = await Promise.all(given.map((folder) => realpath(folder)));
  return { given: [...new Set([...given, ...real])], real };
}

function refused(path: string, why: string): FileBridgeError {
  return new FileBridgeError("PATH_NOT_ALLOWED", `${path} ${why}`, { data: { path } });
}

/**
 * Opens `path` for reading if it is a regular file inside one of `folders`. A
 * relative path is taken relative to the first folder. Errors: `PATH_NOT_ALLOWED` (outside, a
 * symlink out, swapped during the check), `NOT_FOUND`, `INVALID_INPUT` (not a regular file),
 * `FILE_TOO_LARGE` (over `maxBytes`).
 */
export async function openConfined(
  path: string,
  folders: Folders,
  options: { maxBytes?: number; shown?: string } = {},
): Promise<ConfinedFile> {
  // Errors name the path as the caller gave it (`shown`), never a folder it was resolved against.
  const shown = options.shown ?? path;
  if (typeof path !== "string" || path.length === 0 || path.includes("\0")) {
    throw new FileBridgeError("INVALID_INPUT", "the path must be a non-empty string without NUL bytes");
  }
  if (folders.real.length === 0) throw refused(shown, "is not inside an allowed folder (none configured)");
  const absolute = isAbsolute(path) ? resolve(path) : resolve(folders.real[0] as string, path);
  // Lexical check first, so nothing outside is even looked at.
  if (!folders.given.some((folder) => isInside(folder, absolute))) {
    throw refused(shown, "is not inside an allowed folder");
  }
  // The one descriptor-safe opener (src/internal/safe-open.ts), shared with the bridge's local paths.
  const {
    handle,
    path: real,
    size,
  } = await openContainedFile(absolute, (candidate) =>
    folders.real.some((folder) => isInside(folder, candidate)),
  );
  const opened = { size };
  try {
    if (options.maxBytes !== undefined && opened.size > options.maxBytes) {
      throw new FileBridgeError(
        "FILE_TOO_LARGE",
        `${basename(real)} is ${opened.size} bytes; the limit is ${options.maxBytes}`,
        {
          data: { limit: options.maxBytes, size: opened.size },
        },
      );
    }
    let closed = false;
    return {
      handle,
      path: real,
      name: basename(real),
      size: opened.size,
      async close() {
        if (closed) return;
        closed = true;
        await handle.close().catch(() => undefined);
      },
    };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}
