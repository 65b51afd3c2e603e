import { mkdir, mkdtemp, readdir, rm, rmdir, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { processGone, processSpaceId } from "./process-space.js";

/** Prefix of per-call temp folders: `call-<pid>.<space>-<random>` (see {@link callDirPrefix}). */
export const CALL_DIR_PREFIX = "call-";
/** A per-call folder's name: its process id, that process's space id (internal/process-space.ts), a random tail. */
const CALL_DIR = /^call-(\d+)\.([0-9a-f]{8})-[A-Za-z0-9]+$/;

/** The start of this process's per-call folder names: `call-<pid>.<space>-`. */
export function callDirPrefix(): string {
  return `${CALL_DIR_PREFIX}${process.pid}.${processSpaceId()}-`;
}

/**
 * Per-call folders in use anywhere in this process: {@link createCallDir} adds, {@link removeDir}
 * removes. Every `FileBridge` sweeps with it, so one bridge never removes a folder that another
 * bridge (or an upload rewrite, or an artifact capture) is still using.
 */
export const ACTIVE_CALL_DIRS: Set<string> = new Set();

/** Temp dirs already checked by {@link assertPrivateTmpDir} (a private folder stays private). */
const checkedTmpDirs = new Set<string>();

/**
 * Refuses (`STORAGE_ERROR`) a temp dir that someone else could tamper with: one owned by another
 * user (root excepted), or one anyone may write to without the sticky bit. Otherwise a local user
 * who made `/tmp/mcp-file-bridge` first could swap call folders and so the files tools read. POSIX
 * only; checked once per folder and process.
 */
export async function assertPrivateTmpDir(tmpDir: string): Promise<void> {
  if (checkedTmpDirs.has(tmpDir) || typeof process.getuid !== "function") return;
  const info = await stat(tmpDir);
  const ownedByOther = info.uid !== process.getuid() && info.uid !== 0;
  const openToAll = (info.mode & 0o002) !== 0 && (info.mode & 0o1000) === 0;
  if (!info.isDirectory() || ownedByOther || openToAll) {
    throw new FileBridgeError(
      "STORAGE_ERROR",
      "the temp folder is not private (owned by another user, or writable by anyone); set tmpDir",
      { data: { reason: "tmpDir not private" } },
    );
  }
  checkedTmpDirs.add(tmpDir);
}

/**
 * Makes a fresh private folder for one resolution under `tmpDir` (created with mode 0700 if
 * missing; refused if it is not private, see {@link assertPrivateTmpDir}), named with this process
 * id so a later sweep can tell whether its owner is still alive.
 */
export async function createCallDir(tmpDir: string): Promise<string> {
  const prefix = join(tmpDir, callDirPrefix());
  if (checkedTmpDirs.has(tmpDir)) {
    try {
      return inUse(await mkdtemp(prefix));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // The temp dir was removed meanwhile: whoever makes it again, check it again.
      checkedTmpDirs.delete(tmpDir);
    }
  }
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  await assertPrivateTmpDir(tmpDir);
  return inUse(await mkdtemp(prefix));
}

function inUse(dir: string): string {
  ACTIVE_CALL_DIRS.add(dir);
  return dir;
}

/**
 * Removes a folder and everything in it; a missing folder is fine. With `only` (the one file this
 * code put there), that file is unlinked and the folder removed in two calls; anything else in it
 * (or any error) falls back to a recursive remove.
 */
export async function removeDir(dir: string, only?: string): Promise<void> {
  if (only !== undefined && dirname(only) === dir) {
    try {
      await unlink(only);
      await rmdir(dir);
      ACTIVE_CALL_DIRS.delete(dir);
      return;
    } catch {
      // something else is in the folder, or the file went already: remove what is there
    }
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  ACTIVE_CALL_DIRS.delete(dir);
}

/** Options of {@link sweepCallDirs}. */
export interface SweepCallDirsOptions {
  /** Folders last modified before `now - olderThanMs` are removed even if their process lives. */
  olderThanMs: number;
  /** Current time in milliseconds. */
  now: number;
  /** Folders in use by this process; never removed. */
  active: ReadonlySet<string>;
  /**
   * Whether a process of this process's space is certainly gone (see internal/process-space.ts),
   * injectable for tests.
   */
  isGone?: (pid: number) => boolean;
  /** Stop looking once `Date.now()` passes this (a start-up sweep must not hold anything up). */
  deadline?: number;
}

/**
 * Removes stale per-call folders under `tmpDir`: those whose owning process is certainly gone (only
 * judged for a process of this process's space: host, boot and pid namespace), and those older than
 * `olderThanMs`. Only names matching `call-<pid>.<space>-<random>` are touched. Returns how many
 * folders were removed.
 */
export async function sweepCallDirs(tmpDir: string, options: SweepCallDirsOptions): Promise<number> {
  let names: string[];
  try {
    names = await readdir(tmpDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  const isGone = options.isGone ?? processGone;
  const space = processSpaceId();
  let removed = 0;
  for (const name of names) {
    if (options.deadline !== undefined && Date.now() > options.deadline) break;
    const match = CALL_DIR.exec(name);
    if (!match) continue;
    const dir = join(tmpDir, name);
    if (options.active.has(dir)) continue;
    const pid = Number(match[1]);
    // Another space's process id says nothing here: such a folder goes only by its age.
    let stale = match[2] === space && pid !== process.pid && isGone(pid);
    if (!stale) {
      try {
        const info = await stat(dir);
        stale = info.mtimeMs < options.now - options.olderThanMs;
      } catch {
        continue;
      }
    }
    if (stale) {
      await removeDir(dir);
      removed++;
    }
  }
  return removed;
}
