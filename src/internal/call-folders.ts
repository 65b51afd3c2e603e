/**
 * Per-call private folders, pre-made: each temp dir keeps a small pool of empty `call-<pid>-<random>`
 * folders (mode 0700, 96 random bits in the name), refilled off the critical path once a call's file
 * is written (while the tool runs), so a call that needs one file takes a folder that is already
 * there and costs one exclusive create (`O_EXCL`, mode 0600, under the file's own name), its writes
 * and a close. Every folder serves exactly one call: it is never handed out twice and never returned
 * to the pool; dispose unlinks the file and removes the folder (recursively when the tool left
 * something beside its input). The folders are named like any per-call folder, so the start-up sweep
 * of a later process removes them after a crash; on a normal exit every folder made here and not yet
 * removed (spare or in use) is removed at once.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { type FileHandle, mkdir, open, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { ACTIVE_CALL_DIRS, CALL_DIR_PREFIX, createCallDir, removeDir } from "./temp-dir.js";

/** Mode of a call file: readable and writable by this user only. */
const FILE_MODE = 0o600;
/** Spare folders kept ready per temp dir. */
export const CALL_FOLDER_POOL_SIZE = 4;
/**
 * A spare folder older than this is not handed out but removed (and the call makes its own): well
 * under the sweep's default age (1 h), so another process's age sweep on the same temp dir never
 * removes a folder a call is about to use.
 */
export const SPARE_MAX_AGE_MS = 10 * 60 * 1000;

/** A spare folder and when it was made. */
interface Spare {
  readonly dir: string;
  readonly at: number;
}

/** Per temp dir: spare folders ready to be taken, and whether a refill is under way. */
interface Pool {
  readonly spare: Spare[];
  /** Folders being made for the pool (counted as spare by {@link isSpareCallFolder}). */
  readonly making: Set<string>;
  refill: Promise<void> | undefined;
  /** Removal of spare folders found too old (see {@link takeSpare}). */
  discarding: Promise<void>;
}

const pools = new Map<string, Pool>();
/** Folders made here and not yet removed (spare, being made, or in use): removed on exit. */
const made = new Set<string>();
let exitHook = false;

function removeAllOnExit(): void {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // exiting anyway: the next start-up sweep removes what is left
    }
  }
}

function track(dir: string): string {
  made.add(dir);
  ACTIVE_CALL_DIRS.add(dir);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", removeAllOnExit);
  }
  return dir;
}

function untrack(dir: string): void {
  made.delete(dir);
  ACTIVE_CALL_DIRS.delete(dir);
}

function poolOf(tmpDir: string): Pool {
  let pool = pools.get(tmpDir);
  if (pool === undefined) {
    pool = { spare: [], making: new Set(), refill: undefined, discarding: Promise.resolve() };
    pools.set(tmpDir, pool);
  }
  return pool;
}

/**
 * Makes spare folders one at a time until the pool is full. Only with a plain `mkdir` of the folder
 * (never of the temp dir): the temp dir was made and checked by the call that started the refill, and
 * if it has gone since, the refill stops instead of making it again.
 */
async function fill(tmpDir: string, pool: Pool): Promise<void> {
  while (pool.spare.length + pool.making.size < CALL_FOLDER_POOL_SIZE) {
    const dir = track(join(tmpDir, `${CALL_DIR_PREFIX}${process.pid}-${randomBytes(12).toString("hex")}`));
    pool.making.add(dir);
    try {
      await mkdir(dir, { mode: 0o700 });
      pool.spare.push({ dir, at: Date.now() });
    } catch {
      untrack(dir);
      return;
    } finally {
      pool.making.delete(dir);
    }
  }
}

/** Starts refilling the pool of `tmpDir` unless a refill is under way; never throws. */
function refill(tmpDir: string, pool: Pool): void {
  if (pool.refill !== undefined) return;
  pool.refill = fill(tmpDir, pool).finally(() => {
    pool.refill = undefined;
  });
}

/**
 * Brings the pool of `tmpDir` back to {@link CALL_FOLDER_POOL_SIZE} spare folders in the background
 * (never throws). Called once a call's file is written and closed, so the new folders are made while
 * the tool runs rather than on the call's way to its file.
 */
export function refillCallFolders(tmpDir: string): void {
  const pool = pools.get(tmpDir);
  if (pool !== undefined) refill(tmpDir, pool);
}

/**
 * Waits for the refill of `tmpDir`'s pool under way, if any, and for the removal of spare folders
 * found too old (for tests and benchmarks).
 */
export async function callFoldersRefilled(tmpDir: string): Promise<void> {
  const pool = pools.get(tmpDir);
  await Promise.all([pool?.refill, pool?.discarding]);
}

/** How many spare folders `tmpDir`'s pool holds now. */
export function spareCallFolders(tmpDir: string): number {
  return pools.get(tmpDir)?.spare.length ?? 0;
}

/**
 * Whether `dir` is a spare folder of this process's pools (made, or being made, and not taken yet):
 * it is there between calls, so a check for leftovers looks inside it.
 */
export function isSpareCallFolder(dir: string): boolean {
  for (const pool of pools.values()) {
    if (pool.spare.some((spare) => spare.dir === dir) || pool.making.has(dir)) return true;
  }
  return false;
}

/** The next spare folder young enough to use; older ones are removed in the background. */
function takeSpare(pool: Pool): string | undefined {
  const now = Date.now();
  for (let spare = pool.spare.shift(); spare !== undefined; spare = pool.spare.shift()) {
    if (now - spare.at <= SPARE_MAX_AGE_MS) return spare.dir;
    const { dir } = spare;
    // A folder that cannot be removed stays tracked: the exit clean-up takes it.
    const removed = rmdir(dir).then(
      () => untrack(dir),
      () => {},
    );
    pool.discarding = Promise.all([pool.discarding, removed]).then(() => {});
  }
  return undefined;
}

/** A new call file, open for writing, in a folder of its own. */
export interface CallFile {
  /** The call's own folder (taken from the pool, or made for it). */
  readonly folder: string;
  /** Its path: `<folder>/<name>`. */
  readonly path: string;
  readonly handle: FileHandle;
}

/**
 * Creates a new file named `name` (already safe: no separators) exclusively (`O_EXCL`, mode 0600) in
 * a private folder of its own under `tmpDir`: a spare one from the pool when there is one (made less
 * than {@link SPARE_MAX_AGE_MS} ago), else one made now with the checks of {@link createCallDir}. The
 * caller refills the pool ({@link refillCallFolders}) once the file is written, off the call's
 * critical path. A spare folder removed meanwhile (a manual clean-up) empties the pool and the call
 * makes its own folder instead.
 */
export async function createCallFile(tmpDir: string, name: string): Promise<CallFile> {
  const pool = poolOf(tmpDir);
  const spare = takeSpare(pool);
  if (spare !== undefined) {
    const path = join(spare, name);
    const opening = open(path, "wx", FILE_MODE);
    try {
      return { folder: spare, path, handle: await opening };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        await removeCallFile(path, spare);
        throw error;
      }
      untrack(spare);
      for (const gone of pool.spare.splice(0)) untrack(gone.dir);
    }
  }
  const folder = track(await createCallDir(tmpDir));
  const path = join(folder, name);
  try {
    const handle = await open(path, "wx", FILE_MODE);
    return { folder, path, handle };
  } catch (error) {
    await removeCallFile(path, folder);
    throw error;
  }
}

/**
 * Removes a call file made by {@link createCallFile} with its folder: the file is unlinked and the
 * folder removed (`rmdir`); when the folder is not empty (the tool left something beside its input)
 * it is removed with everything in it — it was this call's alone. Never throws: what cannot be
 * removed is left for the exit clean-up and the sweep.
 */
export async function removeCallFile(path: string, folder: string): Promise<void> {
  try {
    await removeDir(folder, path);
    made.delete(folder);
  } catch {
    // left for the exit clean-up and the sweep
  }
}
