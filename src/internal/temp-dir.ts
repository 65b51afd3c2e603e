import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/** Prefix of per-call temp folders: `call-<pid>-<random>`. */
export const CALL_DIR_PREFIX = "call-";
const CALL_DIR = /^call-(\d+)-[A-Za-z0-9]+$/;

/**
 * Makes a fresh private folder for one resolution under `tmpDir` (created with mode 0700 if
 * missing), named with this process id so a later sweep can tell whether its owner is still alive.
 */
export async function createCallDir(tmpDir: string): Promise<string> {
  const prefix = join(tmpDir, `${CALL_DIR_PREFIX}${process.pid}-`);
  try {
    return await mkdtemp(prefix);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    return mkdtemp(prefix);
  }
}

/** Removes a folder and everything in it; a missing folder is fine. */
export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** True when a process with this id exists (EPERM means it exists but is not ours). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Options of {@link sweepCallDirs}. */
export interface SweepCallDirsOptions {
  /** Folders last modified before `now - olderThanMs` are removed even if their process lives. */
  olderThanMs: number;
  /** Current time in milliseconds. */
  now: number;
  /** Folders in use by this process; never removed. */
  active: ReadonlySet<string>;
  /** Liveness test, injectable for tests. */
  isAlive?: (pid: number) => boolean;
}

/**
 * Removes stale per-call folders under `tmpDir`: those whose owning process is gone, and those older
 * than `olderThanMs`. Only names matching `call-<pid>-<random>` are touched. Returns how many
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
  const isAlive = options.isAlive ?? isProcessAlive;
  let removed = 0;
  for (const name of names) {
    const match = CALL_DIR.exec(name);
    if (!match) continue;
    const dir = join(tmpDir, name);
    if (options.active.has(dir)) continue;
    const pid = Number(match[1]);
    let stale = pid !== process.pid && !isAlive(pid);
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
