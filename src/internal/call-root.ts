/**
 * The private folder a process puts its single-file calls in: one `call-<pid>-<random>` folder (mode
 * 0700, made with `mkdtemp`) per temp dir and process, made on first use and kept, so a call that
 * needs one file costs one exclusive create (`O_EXCL`, mode 0600, an unguessable name) and one unlink
 * on dispose instead of a `mkdtemp` and a `rmdir` per call. It is named like a per-call folder, so the
 * start-up sweep of a later process removes it after a crash; on a normal exit it is removed at once.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { type FileHandle, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ACTIVE_CALL_DIRS, createCallDir } from "./temp-dir.js";

/** Mode of a call file: readable and writable by this user only. */
const FILE_MODE = 0o600;

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

/** A fresh unguessable prefix for a call file: 20 hex digits (80 random bits). */
export function callFilePrefix(): string {
  return randomBytes(10).toString("hex");
}

/** A new call file, open for writing. */
export interface CallFile {
  /** The root it is in. */
  readonly root: string;
  /** Its path: `<root>/<name>`. */
  readonly path: string;
  readonly handle: FileHandle;
}

/**
 * Creates `<root>/<name>` exclusively (`O_EXCL`, mode 0600) in this process's call root under
 * `tmpDir`. `name` must already be safe (no separators) and should start with
 * {@link callFilePrefix}. If the root was removed meanwhile (another process's age sweep, a manual
 * clean-up), a new root is made and the create tried once more.
 */
export async function createCallFile(tmpDir: string, name: string): Promise<CallFile> {
  for (let attempt = 0; ; attempt++) {
    const root = await callRoot(tmpDir);
    const path = join(root, name);
    try {
      return { root, path, handle: await open(path, "wx", FILE_MODE) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt > 0) throw error;
      forgetRoot(tmpDir, root);
    }
  }
}

/**
 * Removes a call file made by {@link createCallFile} (exactly that file; one unlink). A file already
 * gone is fine; any other failure is left for the exit clean-up and the sweep, never thrown.
 */
export async function removeCallFile(path: string): Promise<void> {
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
