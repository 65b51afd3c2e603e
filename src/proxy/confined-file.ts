/**
 * Descriptor-safe reads of files inside allowed folders (upstream output folders, the shim's
 * allowed local folders): the file is opened once with `O_NOFOLLOW`, its real path must be inside a
 * folder, the opened descriptor must be the same file (device and inode) as the checked path, and
 * every byte is read from that descriptor — a symlink swapped in after the check cannot redirect the
 * read.
 *
 * TODO(issue 10): unify with the bridge's descriptor-safe reader once it lands.
 */
import { constants, type Stats } from "node:fs";
import { type FileHandle, open, realpath, stat } from "node:fs/promises";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";
import { FileBridgeError } from "../errors/file-bridge-error.js";

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
  options: { maxBytes?: number } = {},
): Promise<ConfinedFile> {
  if (typeof path !== "string" || path.length === 0 || path.includes("\0")) {
    throw new FileBridgeError("INVALID_INPUT", "the path must be a non-empty string without NUL bytes");
  }
  if (folders.real.length === 0) throw refused(path, "is not inside an allowed folder (none configured)");
  const absolute = isAbsolute(path) ? resolve(path) : resolve(folders.real[0] as string, path);
  // Lexical check first, so nothing outside is even looked at.
  if (!folders.given.some((folder) => isInside(folder, absolute))) {
    throw refused(path, "is not inside an allowed folder");
  }
  let handle: FileHandle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new FileBridgeError("NOT_FOUND", `${path} does not exist`, { data: { path }, cause });
    }
    if (code === "ELOOP" || code === "EMLINK") throw refused(path, "is a symbolic link");
    throw new FileBridgeError("STORAGE_ERROR", `cannot open ${path}`, { cause });
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new FileBridgeError("INVALID_INPUT", `${path} is not a regular file`);
    let real: string;
    let checked: Stats;
    try {
      real = await realpath(absolute);
      checked = await stat(real);
    } catch {
      throw refused(path, "changed while it was checked");
    }
    if (!folders.real.some((folder) => isInside(folder, real))) {
      throw refused(path, "resolves to a file outside the allowed folders");
    }
    if (checked.dev !== opened.dev || checked.ino !== opened.ino) {
      throw refused(path, "changed while it was checked");
    }
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
