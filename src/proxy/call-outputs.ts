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
import {
  checkPrivateDir,
  type FolderRole,
  leftoverPrefix,
  sweepLeftovers,
  sweepOnTimer,
} from "../internal/temp-dir.js";
import { confinedFolders, type Folders, isInside } from "./confined-file.js";

/** Call folders: `out-<pid>.<space>-<random>`, so a sweep can tell those of a killed proxy. */
const OUT_PREFIX = "out-";
/** Call folders of an older layout (`out-` and `mkdtemp`'s six characters): they go by age only. */
const LEGACY_OUT = /^out-[A-Za-z0-9]{6}$/;
/** A call folder older than this whose process cannot be judged (another pid namespace) is a leftover. */
const OUT_MAX_AGE_MS = 24 * 60 * 60_000;
/** Call folders of this process in use: never swept. */
const ACTIVE_OUT = new Set<string>();

/** A call folder's role, for the error when it is not ours. */
const OUT_ROLE: FolderRole = {
  what: "a call's own output folder (out-*)",
  option: "the server's outputDirs in the proxy config",
};

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
  /**
   * Checks with `lstat` that it is still this user's private folder (not swapped for a symlink or
   * another user's folder): `STORAGE_ERROR` when it is not, `NOT_FOUND` when it is gone.
   */
  check(): Promise<void>;
}

/**
 * Makes a fresh folder for one call inside `parent` (an output folder's real path):
 * `out-<pid>.<space>-` plus a random tail, made exclusively with mode 0700 (`mkdtemp`), so no other
 * call can be handed it or guess it, and a later start sweeps it if this process is killed
 * ({@link sweepCallFolders}).
 */
export async function makeCallFolder(parent: string): Promise<CallFolder> {
  const dir = await mkdtemp(join(parent, leftoverPrefix(OUT_PREFIX)));
  ACTIVE_OUT.add(dir);
  const remove = async () => {
    await rm(dir, { recursive: true, force: true });
    ACTIVE_OUT.delete(dir);
  };
  try {
    return {
      dir,
      folders: await confinedFolders([dir]),
      start: await folderStart(dir),
      remove,
      async check() {
        if (!(await checkPrivateDir(dir, OUT_ROLE))) throw notWrittenByCall("the call's output folder");
      },
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

/**
 * Removes the call folders (`out-*`) under `parent` that a killed proxy left, with the outputs in
 * them: those whose process is certainly gone, and any older than a day; only real folders of this
 * user, looked at with `lstat` (a symlink is never followed). Never rejects; resolves with how many.
 */
export function sweepCallFolders(parent: string, now: number = Date.now()): Promise<number> {
  return sweepLeftovers(parent, {
    prefix: OUT_PREFIX,
    legacy: LEGACY_OUT,
    olderThanMs: OUT_MAX_AGE_MS,
    now,
    active: ACTIVE_OUT,
  }).catch(() => 0);
}

/**
 * Sweeps `parent` now ({@link sweepCallFolders}, in the background) and every ten minutes while the
 * process runs (one unref'd timer for all output folders).
 *
 * @returns the first sweep (for tests; it never rejects).
 */
export function keepCallFoldersSwept(parent: string): Promise<number> {
  sweepOnTimer(`out:${parent}`, () => sweepCallFolders(parent));
  return sweepCallFolders(parent);
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
