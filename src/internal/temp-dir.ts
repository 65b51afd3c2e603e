import { lstatSync, type Stats } from "node:fs";
import { lstat, mkdir, mkdtemp, readdir, rm, rmdir, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { processGone, processSpaceId } from "./process-space.js";

/** Prefix of per-call temp folders: `call-<pid>.<space>-<random>` (see {@link callDirPrefix}). */
export const CALL_DIR_PREFIX = "call-";
/** The start of this process's per-call folder names: `call-<pid>.<space>-` (its process id, that process's space id, see internal/process-space.ts). */
export function callDirPrefix(): string {
  return leftoverPrefix(CALL_DIR_PREFIX);
}

/**
 * Per-call folders in use anywhere in this process: {@link createCallDir} adds, {@link removeDir}
 * removes. Every `FileBridge` sweeps with it, so one bridge never removes a folder that another
 * bridge (or an upload rewrite, or an artifact capture) is still using.
 */
export const ACTIVE_CALL_DIRS: Set<string> = new Set();

/**
 * What a folder of ours in a shared place is, for the error when it is not ours: its role ("the tus
 * staging folder") and the option that moves it (`tus.staging`).
 */
export interface FolderRole {
  readonly what: string;
  readonly option: string;
}

/** This process's user id, or `undefined` where there are none (Windows: owner and mode go unchecked). */
function myUid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/**
 * The error for a folder that is not ours. The message names the folder by its role and the option
 * that moves it; its path (a server path the model or an uploading client must not be shown) is in
 * the `cause`, which `onError` and the server's logs get.
 */
function notPrivate(dir: string, role: FolderRole, why: string): FileBridgeError {
  return new FileBridgeError(
    "STORAGE_ERROR",
    `${role.what} is not private to this server (${why}); make it a folder of this user with mode 0700, or set ${role.option}`,
    { data: { reason: "folder not private", option: role.option }, cause: new Error(`${dir}: ${why}`) },
  );
}

/** Why `info` is not a private folder of this user (`undefined` when it is one), under `strict` or the temp-dir rule. */
function whyNotPrivate(info: Stats, strict: boolean): string | undefined {
  if (info.isSymbolicLink()) return "it is a symlink";
  if (!info.isDirectory()) return "it is not a folder";
  const uid = myUid();
  if (uid === undefined) return undefined;
  const mode = (info.mode & 0o7777).toString(8).padStart(4, "0");
  if (strict) {
    if (info.uid !== uid) return `owned by uid ${info.uid}, not ${uid}`;
    if ((info.mode & 0o077) !== 0) return `mode ${mode}, open to other users`;
    return undefined;
  }
  // A temp dir may be a shared sticky folder (like /tmp itself): others cannot move what we make in it.
  const sticky = (info.mode & 0o1000) !== 0;
  if (info.uid !== uid && !(sticky && info.uid === 0)) return `owned by uid ${info.uid}, not ${uid}`;
  if ((info.mode & 0o022) !== 0 && !sticky) return `mode ${mode}, writable by other users`;
  return undefined;
}

/**
 * Checks, with `lstat` (a symlink is never followed), that `dir` is a folder of this user private to
 * it (mode 0700, nothing for group or others): `STORAGE_ERROR` naming `role` when not. Cheap (one
 * `lstat`): call it on each use of the folder, not once per process — a folder removed and made
 * again by another user while the server runs is refused at its next use. Resolves `false` when the
 * folder does not exist.
 */
export async function checkPrivateDir(dir: string, role: FolderRole): Promise<boolean> {
  let info: Stats;
  try {
    info = await lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const why = whyNotPrivate(info, true);
  if (why !== undefined) throw notPrivate(dir, role, why);
  return true;
}

/**
 * Makes `dir` if it is missing — `mkdir` with mode 0700, which fails on anything already there, so a
 * folder someone else made first is never taken for ours — and checks it with {@link checkPrivateDir}
 * (`STORAGE_ERROR` naming `role` when it is not ours and private). Missing parents are made 0700 too.
 * Call it each time the folder is used.
 *
 * @returns `dir`.
 */
export async function privateDir(dir: string, role: FolderRole): Promise<string> {
  if (await checkPrivateDir(dir, role)) return dir;
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      await mkdir(dirname(dir), { recursive: true, mode: 0o700 });
      await mkdir(dir, { mode: 0o700 }).catch((again: NodeJS.ErrnoException) => {
        if (again.code !== "EEXIST") throw again;
      });
    } else if (code !== "EEXIST") throw error;
  }
  // Made now, or by someone else in between: either way it must be ours and private.
  if (!(await checkPrivateDir(dir, role))) throw notPrivate(dir, role, "it vanished while it was made");
  return dir;
}

/** The role of a bridge's temp dir (the parent of its per-call folders). */
const TMP_DIR_ROLE: FolderRole = { what: "the temp folder", option: "tmpDir" };

/**
 * Refuses (`STORAGE_ERROR`) a temp dir that someone else could tamper with: a symlink, one owned by
 * another user (root excepted for a sticky folder such as `/tmp` itself), or one others may write to
 * without the sticky bit. Otherwise a local user who made `/tmp/mcp-file-bridge` first could swap
 * call folders and so the files tools read. Checked with `lstat` on every use (one call each),
 * never once per process: removed and made again by another user, the folder is refused. POSIX only.
 * Resolves `false` when the folder does not exist.
 */
export async function assertPrivateTmpDir(tmpDir: string): Promise<boolean> {
  let info: Stats;
  try {
    // Synchronous on purpose: it runs on every call's way to its file, and one `lstat` of a local
    // folder costs ~3 µs inline against ~20 µs through the thread pool (measured on the shared box).
    info = lstatSync(tmpDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  const why = whyNotPrivate(info, false);
  if (why !== undefined) throw notPrivate(tmpDir, TMP_DIR_ROLE, why);
  return true;
}

/**
 * Makes a fresh private folder for one resolution under `tmpDir` (created with mode 0700 if
 * missing; refused if it is not private, see {@link assertPrivateTmpDir}), named with this process
 * id so a later sweep can tell whether its owner is still alive.
 */
export async function createCallDir(tmpDir: string): Promise<string> {
  if (!(await assertPrivateTmpDir(tmpDir))) {
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    if (!(await assertPrivateTmpDir(tmpDir))) throw notPrivate(tmpDir, TMP_DIR_ROLE, "it vanished");
  }
  return inUse(await mkdtemp(join(tmpDir, callDirPrefix())));
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

/** Options of {@link sweepLeftovers}: which names, and whether they are folders or files. */
export interface SweepLeftoversOptions extends SweepCallDirsOptions {
  /** Entries named `<prefix><pid>.<space>-<random>` (see {@link leftoverPrefix}). */
  prefix: string;
  /** What the entries are: folders (removed with what is in them) or single files. @default "dir" */
  kind?: "dir" | "file";
  /** Names of an older layout without process id: they go by their age only. */
  legacy?: RegExp;
}

/** The start of this process's names for things it leaves in a shared folder: `<prefix><pid>.<space>-`. */
export function leftoverPrefix(prefix: string): string {
  return `${prefix}${process.pid}.${processSpaceId()}-`;
}

/**
 * Removes crash leftovers under `root`: entries named `<prefix><pid>.<space>-<random>` whose process
 * is certainly gone (judged only for a process of this process's space: host, boot and pid
 * namespace), and those older than `olderThanMs`. Each is looked at with `lstat` and taken only when
 * it is a real folder (or file, with `kind: "file"`) of this user: a symlink is never followed, and
 * nothing of another user is touched. A folder goes with everything in it (`rm` does not follow links
 * inside either). Returns how many were removed.
 */
export async function sweepLeftovers(root: string, options: SweepLeftoversOptions): Promise<number> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
  const isGone = options.isGone ?? processGone;
  const space = processSpaceId();
  const uid = myUid();
  const pattern = new RegExp(
    `^${options.prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\d+)\\.([0-9a-f]{8})-[A-Za-z0-9]+$`,
  );
  let removed = 0;
  for (const name of names) {
    if (options.deadline !== undefined && Date.now() > options.deadline) break;
    const match = pattern.exec(name);
    if (!match && !options.legacy?.test(name)) continue;
    const path = join(root, name);
    if (options.active.has(path)) continue;
    let info: Stats;
    try {
      info = await lstat(path);
    } catch {
      continue;
    }
    const isKind = options.kind === "file" ? info.isFile() : info.isDirectory();
    if (!isKind || (uid !== undefined && info.uid !== uid)) continue;
    const pid = Number(match?.[1]);
    // Another space's process id says nothing here: such an entry goes only by its age.
    const gone = match !== null && match[2] === space && pid !== process.pid && isGone(pid);
    if (!gone && info.mtimeMs >= options.now - options.olderThanMs) continue;
    if (options.kind === "file") await unlink(path).catch(() => undefined);
    else await removeDir(path);
    removed++;
  }
  return removed;
}

/** How often the leftover sweeps registered with {@link sweepOnTimer} run. */
export const LEFTOVER_SWEEP_EVERY_MS = 10 * 60_000;
const timedSweeps = new Map<string, () => Promise<unknown>>();
let sweepTimer: NodeJS.Timeout | undefined;

/**
 * Runs `sweep` every {@link LEFTOVER_SWEEP_EVERY_MS} while the process runs: one unref'd timer for
 * every folder (it never keeps the process alive), one sweep per `key` (registering a key again
 * replaces its sweep). A failing sweep is ignored until the next round.
 */
export function sweepOnTimer(key: string, sweep: () => Promise<unknown>): void {
  timedSweeps.set(key, sweep);
  if (sweepTimer !== undefined) return;
  sweepTimer = setInterval(() => {
    for (const run of timedSweeps.values()) void run().catch(() => undefined);
  }, LEFTOVER_SWEEP_EVERY_MS).unref();
}

/**
 * Removes stale per-call folders under `tmpDir`: those whose owning process is certainly gone (only
 * judged for a process of this process's space: host, boot and pid namespace), and those older than
 * `olderThanMs`. Only real folders of this user named `call-<pid>.<space>-<random>` are touched
 * (see {@link sweepLeftovers}). Returns how many folders were removed.
 */
export function sweepCallDirs(tmpDir: string, options: SweepCallDirsOptions): Promise<number> {
  return sweepLeftovers(tmpDir, { ...options, prefix: CALL_DIR_PREFIX });
}
