/**
 * The private folder a process puts its single-file calls in: one `call-<pid>-<random>` folder (mode
 * 0700, made with `mkdtemp`) per temp dir and process, made on first use and kept, so a call that
 * needs one file costs one exclusive create (`O_EXCL`, mode 0600, under the file's own name) and one
 * unlink on dispose instead of a `mkdtemp` and a `rmdir` per call. It is named like a per-call folder, so the
 * start-up sweep of a later process removes it after a crash; on a normal exit it is removed at once.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { type FileHandle, mkdtemp, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ACTIVE_CALL_DIRS, createCallDir, removeDir } from "./temp-dir.js";

/** Mode of a call file: readable and writable by this user only. */
const FILE_MODE = 0o600;
/** Prefix of a call's own folder inside the root (when its file name is taken, or it has none yet). */
const FOLDER_PREFIX = "c-";

/** Per temp dir: this process's call root (a promise while it is being made). */
const roots = new Map<string, Promise<string>>();
/** Per temp dir: the root its entry in `roots` resolved to. */
const resolved = new Map<string, string>();
/** Roots removed when the process exits (one `exit` listener for all of them). */
const made = new Set<string>();
let exitHook = false;

function removeAllOnExit(): void {
  for (const root of made) {
    try {
      rmSync(root, { recursive: true, force: true });
    } catch {
      // exiting anyway: the next start-up sweep removes what is left
    }
  }
}

/**
 * This process's call root under `tmpDir` (made on first use, with the checks of
 * {@link createCallDir}; kept in {@link ACTIVE_CALL_DIRS} so no sweep of this process takes it).
 */
export function callRoot(tmpDir: string): Promise<string> {
  let root = roots.get(tmpDir);
  if (root === undefined) {
    root = createCallDir(tmpDir).then((dir) => {
      made.add(dir);
      resolved.set(tmpDir, dir);
      if (!exitHook) {
        exitHook = true;
        process.once("exit", removeAllOnExit);
      }
      return dir;
    });
    roots.set(tmpDir, root);
    // A failed attempt is not cached: the next call tries again (and reports its own error).
    root.catch(() => {
      if (roots.get(tmpDir) === root) roots.delete(tmpDir);
    });
  }
  return root;
}

/** Forgets a root that has gone (removed by someone else); the next {@link callRoot} makes a new one. */
function forgetRoot(tmpDir: string, root: string): void {
  // Only if no other call has replaced it already (`resolved` says which root the entry holds).
  if (resolved.get(tmpDir) === root) {
    roots.delete(tmpDir);
    resolved.delete(tmpDir);
  }
  made.delete(root);
  ACTIVE_CALL_DIRS.delete(root);
}

/** A new call file, open for writing. */
export interface CallFile {
  /** The root it is in. */
  readonly root: string;
  /** The folder made for this call alone inside the root, if one was needed; `undefined` otherwise. */
  readonly folder: string | undefined;
  /** Its path: `<root>/<name>`, or `<root>/<folder>/<name>`. */
  readonly path: string;
  readonly handle: FileHandle;
}

/**
 * Creates a new file named `name` (already safe: no separators) exclusively (`O_EXCL`, mode 0600) in
 * this process's call root under `tmpDir`: as `<root>/<name>` when that name is free, so the file
 * keeps its own name at the cost of one `open`; when another call holds that name (or with
 * `ownFolder`), in a fresh private folder of its own inside the root (`mkdtemp`). Nobody else can
 * enter the root (0700) and `O_EXCL` never opens what is there already, so names need not be
 * unguessable. If the root was removed meanwhile (another process's age sweep, a manual clean-up),
 * a new root is made and the create tried once more.
 */
export async function createCallFile(
  tmpDir: string,
  name: string,
  { ownFolder = false }: { ownFolder?: boolean } = {},
): Promise<CallFile> {
  for (let attempt = 0; ; attempt++) {
    const root = await callRoot(tmpDir);
    try {
      if (!ownFolder) {
        const path = join(root, name);
        try {
          return { root, folder: undefined, path, handle: await open(path, "wx", FILE_MODE) };
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
      }
      const folder = await mkdtemp(join(root, FOLDER_PREFIX));
      const path = join(folder, name);
      return { root, folder, path, handle: await open(path, "wx", FILE_MODE) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt > 0) throw error;
      forgetRoot(tmpDir, root);
    }
  }
}

/**
 * Removes a call file made by {@link createCallFile}: exactly that file (one unlink), and the
 * call's own folder if it had one (with anything the caller added to it). A file already gone is
 * fine; any other failure is left for the exit clean-up and the sweep, never thrown.
 */
export async function removeCallFile(path: string, folder?: string): Promise<void> {
  if (folder !== undefined) {
    await removeDir(folder, path).catch(() => {});
    return;
  }
  try {
    await unlink(path);
  } catch {
    // gone already, or the root was removed with it
  }
}

/** Whether `dir` is a call root of this process (kept between calls, so a check for leftovers looks inside). */
export function isCallRoot(dir: string): boolean {
  return made.has(dir);
}
