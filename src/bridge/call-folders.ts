/**
 * Per-call private folders, pre-made: each temp dir keeps a small pool of empty `call-<pid>.<space>-<random>`
 * folders (mode 0700, 96 random bits in the name), refilled off the critical path once a call's file
 * is written (while the tool runs), so a call that needs one file takes a folder that is already
 * there and costs one exclusive create (`O_EXCL`, mode 0600, under the file's own name), its writes
 * and a close.
 *
 * A folder serves one call at a time, and never two scopes: when a call of a scope is disposed and
 * its folder is empty again (the file unlinked, nothing else in it), the folder goes back to a small
 * pool of that scope's own, for that scope's later calls only. A folder the tool left something in is
 * removed with all of it. So a tool that lists or writes beside its input sees only its own call's
 * files, and a path kept past dispose can only ever show a later file of the same scope — never
 * another scope's. Reuse saves a `mkdir` and an `rmdir` per call, which on ext4 cost more CPU than
 * the file itself (docs/performance.md).
 *
 * The folders are named like any per-call folder, so the start-up sweep of a later process removes
 * them after a crash; on a normal exit every folder made here and not yet removed (spare, kept for
 * reuse or in use) is removed at once.
 */

import { open, rmSync } from "node:fs";
import { mkdir, readdir, rmdir, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomBytes } from "../internal/node-builtins.js";
import {
  ACTIVE_CALL_DIRS,
  assertPrivateTmpDir,
  callDirPrefix,
  createCallDir,
  removeDir,
} from "../internal/temp-dir.js";

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
/** Emptied folders kept for reuse per scope (per temp dir). */
export const REUSE_PER_SCOPE = 8;
/** Emptied folders kept for reuse per temp dir, all scopes together (the longest unused go first). */
export const REUSE_PER_TMP_DIR = 64;

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
  /** Removal of spare folders found too old or left over (see {@link discard}). */
  discarding: Promise<void>;
  /**
   * Per scope, emptied folders of its earlier calls, oldest first; the scope used last is last in
   * the map (so the first one is the one to give up when the temp dir keeps too many).
   */
  readonly reusable: Map<string, Spare[]>;
  /** Folders in {@link Pool.reusable}, all scopes together. */
  reusableCount: number;
  /** Resolutions under way in the temp dir, each settled (see {@link underWay}). */
  readonly resolving: Set<Promise<unknown>>;
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
    pool = {
      spare: [],
      making: new Set(),
      refill: undefined,
      discarding: Promise.resolve(),
      reusable: new Map(),
      reusableCount: 0,
      resolving: new Set(),
    };
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
    const dir = track(join(tmpDir, `${callDirPrefix()}${randomBytes(12).toString("hex")}`));
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

/**
 * Counts a resolution of files into `tmpDir` (`FileBridge.resolve`, a `withFiles` call until its
 * files are ready or removed again) as under way until it settles, and returns it:
 * {@link releaseCallFolders} waits for those started before it, so nothing of theirs is made in the
 * temp dir after it.
 */
export function underWay<T>(tmpDir: string, resolution: Promise<T>): Promise<T> {
  const { resolving } = poolOf(tmpDir);
  const drop = (): void => void resolving.delete(settled);
  const settled = resolution.then(drop, drop);
  resolving.add(settled);
  return resolution;
}

/**
 * Lets `tmpDir`'s pool go idle: waits for the resolutions under way (each has then written its file
 * or, failing, removed its folder), then for its refill and removals under way, then removes its
 * spare folders and the emptied ones kept for reuse (a kept folder with anything in it goes with all
 * of it). Folders of files still in use are not touched, and a later call starts the pool again.
 * Never throws: what cannot be removed is left for the exit clean-up and the sweep.
 */
export async function releaseCallFolders(tmpDir: string): Promise<void> {
  const pool = pools.get(tmpDir);
  if (pool === undefined) return;
  await Promise.all(pool.resolving);
  // A refill may end by starting no other, but removals may queue more: wait until both are quiet.
  for (let settled = false; !settled; ) {
    const { refill, discarding } = pool;
    await Promise.all([refill, discarding]);
    settled = pool.refill === undefined && pool.discarding === discarding;
  }
  for (const spare of pool.spare.splice(0)) discard(pool, spare.dir);
  for (const kept of pool.reusable.values()) for (const spare of kept) discard(pool, spare.dir, true);
  pool.reusable.clear();
  pool.reusableCount = 0;
  await pool.discarding;
}

/** How many spare (never used) folders `tmpDir`'s pool holds now. */
export function spareCallFolders(tmpDir: string): number {
  return pools.get(tmpDir)?.spare.length ?? 0;
}

/** How many emptied folders `tmpDir`'s pool keeps for reuse by `scope` (by all scopes without one). */
export function reusableCallFolders(tmpDir: string, scope?: string): number {
  const pool = pools.get(tmpDir);
  if (pool === undefined) return 0;
  return scope === undefined ? pool.reusableCount : (pool.reusable.get(scope)?.length ?? 0);
}

/**
 * Whether `dir` is a folder of this process's pools between calls (a spare one, made or being made,
 * or an emptied one kept for reuse): a check for leftovers looks inside it.
 */
export function isSpareCallFolder(dir: string): boolean {
  for (const pool of pools.values()) {
    if (pool.spare.some((spare) => spare.dir === dir) || pool.making.has(dir)) return true;
    for (const kept of pool.reusable.values()) if (kept.some((spare) => spare.dir === dir)) return true;
  }
  return false;
}

/**
 * Removes a pool folder in the background (with anything in it when `recursive`). A folder that
 * cannot be removed stays tracked: the exit clean-up takes it.
 */
function discard(pool: Pool, dir: string, recursive = false): void {
  const removed = (recursive ? removeDir(dir) : rmdir(dir)).then(
    () => untrack(dir),
    () => {},
  );
  pool.discarding = Promise.all([pool.discarding, removed]).then(() => {});
}

/** Drops every folder the pool holds (the temp dir is gone, and them with it). */
function forget(pool: Pool): void {
  for (const spare of pool.spare.splice(0)) untrack(spare.dir);
  for (const kept of pool.reusable.values()) for (const spare of kept) untrack(spare.dir);
  pool.reusable.clear();
  pool.reusableCount = 0;
}

/** The first folder of `list` young enough to use; older ones are removed in the background. */
function takeYoung(pool: Pool, list: Spare[], now: number): string | undefined {
  for (let spare = list.shift(); spare !== undefined; spare = list.shift()) {
    if (now - spare.at <= SPARE_MAX_AGE_MS) return spare.dir;
    discard(pool, spare.dir);
  }
  return undefined;
}

/** An emptied folder of `scope`'s earlier calls young enough to use, if the pool keeps one. */
function takeReusable(pool: Pool, scope: string): string | undefined {
  const kept = pool.reusable.get(scope);
  if (kept === undefined) return undefined;
  const before = kept.length;
  const dir = takeYoung(pool, kept, Date.now());
  pool.reusableCount -= before - kept.length;
  if (kept.length === 0) pool.reusable.delete(scope);
  return dir;
}

/**
 * Keeps an emptied folder for `scope`'s later calls, giving up the longest-unused folders of the
 * temp dir beyond {@link REUSE_PER_SCOPE} / {@link REUSE_PER_TMP_DIR}.
 */
function keepForReuse(pool: Pool, scope: string, dir: string): void {
  let kept = pool.reusable.get(scope);
  if (kept === undefined) kept = [];
  else pool.reusable.delete(scope); // re-inserted last: the scope used most recently
  pool.reusable.set(scope, kept);
  kept.push({ dir, at: Date.now() });
  pool.reusableCount += 1;
  if (kept.length > REUSE_PER_SCOPE) {
    discard(pool, (kept.shift() as Spare).dir);
    pool.reusableCount -= 1;
  }
  while (pool.reusableCount > REUSE_PER_TMP_DIR) {
    const [oldest, list] = pool.reusable.entries().next().value as [string, Spare[]];
    discard(pool, (list.shift() as Spare).dir);
    pool.reusableCount -= 1;
    if (list.length === 0) pool.reusable.delete(oldest);
  }
}

/** A new call file, open for writing, in a folder of its own. */
export interface CallFile {
  /** The call's own folder (taken from the pool, or made for it). */
  readonly folder: string;
  /** Its path: `<folder>/<name>`. */
  readonly path: string;
  /** The open file's descriptor (the caller closes it). */
  readonly fd: number;
}

/** Opens `name` in `folder` exclusively (`O_EXCL`, mode 0600). */
function openIn(folder: string, name: string): Promise<CallFile> {
  const path = join(folder, name);
  return new Promise((resolve, reject) => {
    open(path, "wx", FILE_MODE, (error, fd) => (error ? reject(error) : resolve({ folder, path, fd })));
  });
}

/**
 * Creates a new file named `name` (already safe: no separators) exclusively (`O_EXCL`, mode 0600) in
 * a private folder of its own under `tmpDir`: with a `scope`, an emptied folder of that scope's
 * earlier calls when the pool keeps one (see {@link releaseCallFile}); else a spare one from the pool
 * (made less than {@link SPARE_MAX_AGE_MS} ago); else one made now with the checks of
 * {@link createCallDir}. The temp dir is checked on each call ({@link assertPrivateTmpDir}). The caller refills the pool ({@link refillCallFolders}) once the file is
 * written, off the call's critical path. A pool folder removed meanwhile (a manual clean-up) is given
 * up and the call makes its own folder instead; so is a kept folder in which the name exists again.
 */
export async function createCallFile(tmpDir: string, name: string, scope?: string): Promise<CallFile> {
  const pool = poolOf(tmpDir);
  // The temp dir is checked on every call (one `lstat`), never once per process: removed and made
  // again by another user while the server runs, it is refused here, before a file goes into it.
  if (!(await assertPrivateTmpDir(tmpDir))) forget(pool);
  const kept = scope === undefined ? undefined : takeReusable(pool, scope);
  if (kept !== undefined) {
    try {
      return await openIn(kept, name);
    } catch (error) {
      discard(pool, kept, true);
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "EEXIST") throw error;
    }
  }
  const spare = takeYoung(pool, pool.spare, Date.now());
  if (spare !== undefined) {
    try {
      return await openIn(spare, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        await removeCallFile(join(spare, name), spare);
        throw error;
      }
      untrack(spare);
      for (const gone of pool.spare.splice(0)) untrack(gone.dir);
    }
  }
  const folder = track(await createCallDir(tmpDir));
  try {
    return await openIn(folder, name);
  } catch (error) {
    await removeCallFile(join(folder, name), folder);
    throw error;
  }
}

/**
 * Ends a call's use of the file {@link createCallFile} made for it (`tmpDir` and `scope` as given
 * there; `path` may have been renamed within the folder since): the file is unlinked, and when the
 * folder is then empty it is kept for `scope`'s later calls (at most {@link REUSE_PER_SCOPE} per
 * scope); otherwise (no scope, the tool left something beside its input, the pool is full) the folder
 * is removed with everything in it, as {@link removeCallFile} does. Never throws.
 */
export async function releaseCallFile(
  tmpDir: string,
  scope: string | undefined,
  folder: string,
  path: string,
): Promise<void> {
  if (scope !== undefined && dirname(path) === folder) {
    try {
      await unlink(path);
      if ((await readdir(folder)).length === 0) {
        keepForReuse(poolOf(tmpDir), scope, folder);
        return;
      }
    } catch {
      // gone already, or unreadable: removed below
    }
  }
  await removeCallFile(path, folder);
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
