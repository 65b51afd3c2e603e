/**
 * Which files a call may capture as its artifacts (issue 21, part 1). An upstream's output folders
 * are shared by every caller of a multi-user proxy, and locators read text the caller can influence
 * (`convert {text: "q3-salaries.txt"}` makes "Saved to q3-salaries.txt" appear). So a call captures
 * only what that call produced:
 * - the `none` locator's pre-allocated path is confined to the call's own folder (a symlink to a
 *   file of another call leaves that folder and is refused);
 * - a `regex` / `structured` rule with `outputDirArg` hands the upstream a folder of the call's own
 *   and captures only inside it (another call's folder is outside: refused, whatever its timing);
 * - `regex` / `structured` paths must name a file written during the call: checked on the opened
 *   descriptor (its mtime is not older than the call's start as the folder's own file system
 *   stamps it, and it has exactly one link, so it is no hardlink to an older inode);
 * - relative paths are refused unless the rule says what they are relative to (`relativeTo`).
 * A stale file answers exactly like a missing one (no existence oracle on other callers' files).
 * Without a call folder (a `regex` / `structured` rule writing into a shared output folder) two calls
 * running at the same time can still name each other's fresh files: the residual docs/proxy.md states.
 */
import type { FileHandle } from "node:fs/promises";
import { mkdtemp, rm, rmdir, stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { confinedFolders, type Folders, isInside } from "./confined-file.js";

/** When a call started, as each output folder's file system stamps times. */
export interface CallStart {
  /** Output folder (real path) → its file system's time at the call's start, in ms. */
  readonly byFolder: ReadonlyMap<string, number>;
}

/**
 * Takes each output folder's own clock at the start of a call: a marker folder is made, its mtime
 * read and the marker removed. Comparing a file's mtime with this (not with `Date.now()`) is exact
 * whatever the file system's timestamp granularity or the kernel's coarse clock.
 */
export async function markCallStart(folders: readonly string[]): Promise<CallStart> {
  const byFolder = new Map<string, number>();
  await Promise.all(
    folders.map(async (folder) => {
      const marker = await mkdtemp(join(folder, ".call-"));
      try {
        byFolder.set(folder, (await stat(marker)).mtimeMs);
      } finally {
        await rmdir(marker).catch(() => undefined);
      }
    }),
  );
  return { byFolder };
}

/** A folder's own clock now: the mtime of `folder` itself just after it was made (a call's folder). */
export async function folderStart(folder: string): Promise<CallStart> {
  return { byFolder: new Map([[folder, (await stat(folder)).mtimeMs]]) };
}

/** A folder of one call's own, inside an output folder: the only place its outputs are taken from. */
export interface CallFolder {
  /** Its real path (what the upstream is given). */
  readonly dir: string;
  /** The folder as an allowed-folder set, for `openConfined`. */
  readonly folders: Folders;
  /** Its own clock when it was made. */
  readonly start: CallStart;
  /** Removes it and whatever the upstream left in it (symlinks are removed, never followed). */
  remove(): Promise<void>;
}

/**
 * Makes a fresh folder for one call inside `parent` (an output folder's real path): `out-` plus a
 * random tail, mode 0700 (`mkdtemp`), so no other call can be handed it or guess it.
 */
export async function makeCallFolder(parent: string): Promise<CallFolder> {
  const dir = await mkdtemp(join(parent, "out-"));
  try {
    return {
      dir,
      folders: await confinedFolders([dir]),
      start: await folderStart(dir),
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The answer to a path the call did not write: the same whether the file is missing or stale. */
export function notWrittenByCall(path: string): FileBridgeError {
  return new FileBridgeError("NOT_FOUND", `no file written by this call at ${path}`, { data: { path } });
}

/**
 * The absolute path a located output names. Relative paths need the rule's `relativeTo`; without
 * it they are refused (`PATH_NOT_ALLOWED`), since which folder they meant is a guess.
 */
export function outputPath(path: string, relativeTo: string | undefined): string {
  if (isAbsolute(path)) return path;
  if (relativeTo === undefined) {
    throw new FileBridgeError(
      "PATH_NOT_ALLOWED",
      `${path} is a relative path; set relativeTo on the tool's artifacts rule to say what it is relative to`,
      { data: { path } },
    );
  }
  return resolve(relativeTo, path);
}

/**
 * Checks on the opened descriptor that the file was written during the call: one link, and an mtime
 * not older than the call's start in the output folder that holds it. Throws `NOT_FOUND` (as for a
 * missing file) when not.
 */
export async function assertWrittenDuringCall(
  handle: FileHandle,
  realPath: string,
  given: string,
  start: CallStart,
): Promise<void> {
  let since: number | undefined;
  for (const [folder, time] of start.byFolder) {
    if (isInside(folder, realPath)) since = Math.max(since ?? time, time);
  }
  const info = await handle.stat();
  if (since === undefined || info.nlink !== 1 || info.mtimeMs < since) throw notWrittenByCall(given);
}
