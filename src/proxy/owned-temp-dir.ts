/**
 * The proxy's own temp storage folder (when the config names none): `mcp-file-proxy-XXXXXX` in the
 * OS temp folder, made `0700` by `mkdtemp`, with an `.owner` file naming the process that made it.
 * A proxy that shuts down removes its folder; one that was killed (`SIGKILL`, a crash, the OOM
 * killer) cannot, so a proxy that starts removes, in the background, the folders whose owner is
 * certainly gone: the session's uploads and artifacts do not outlive it by more than the next start.
 *
 * "Certainly gone" is decided only for an owner seen exactly as this process would see itself: the
 * same host, boot and pid namespace (a container or sandbox sharing `/tmp` sees other process ids),
 * and then only when signalling its pid says there is no such process (`ESRCH`). Anything else — a
 * live pid, a pid of another namespace, an owner file missing or of another form — keeps the folder.
 */
import { lstat, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProcessSpace, processGone, processSpace, sameSpace } from "../internal/process-space.js";
import { assertPrivateTmpDir } from "../internal/temp-dir.js";

const PREFIX = "mcp-file-proxy-";
const OWNER = ".owner";
/** How long a start-up sweep may run before it leaves the rest to the next start. */
const SWEEP_MS = 10_000;

/** What `.owner` holds: the process and the space its id belongs to. */
interface Owner extends ProcessSpace {
  pid: number;
}

/** This process as an {@link Owner}. */
function self(): Owner {
  return { pid: process.pid, ...processSpace() };
}

/** Whether `text` names an owner of this host, boot and pid namespace whose process is gone. */
function ownerGone(text: string, me: Owner): boolean {
  let owner: Partial<Owner>;
  try {
    owner = JSON.parse(text) as Partial<Owner>;
  } catch {
    return false;
  }
  if (typeof owner !== "object" || owner === null) return false;
  const { pid } = owner;
  if (typeof pid !== "number" || pid === me.pid || !sameSpace(owner, me)) return false;
  return processGone(pid);
}

/**
 * Removes the proxy temp folders under `root` whose owner is certainly gone (see the module
 * comment): only real folders (not links) of this user, private (`0700`), in a temp folder no other
 * user can tamper with. Stops at `deadline` (epoch ms). Never throws.
 *
 * @returns the folders removed.
 */
export async function removeAbandonedTempDirs(
  root: string = tmpdir(),
  deadline: number = Date.now() + SWEEP_MS,
): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    await assertPrivateTmpDir(root);
    names = await readdir(root);
  } catch {
    return removed;
  }
  const me = self();
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  for (const name of names) {
    if (Date.now() > deadline) break;
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(root, name);
    try {
      const info = await lstat(dir);
      if (!info.isDirectory() || (info.mode & 0o077) !== 0) continue;
      if (uid !== undefined && info.uid !== uid) continue;
      if (!ownerGone(await readFile(join(dir, OWNER), "utf8"), me)) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Not ours to judge (no owner file, gone meanwhile, unreadable): left as it is.
    }
  }
  return removed;
}

/**
 * Makes the proxy's temp storage folder under `root` and marks it as this process's, then starts
 * {@link removeAbandonedTempDirs} in the background (the proxy does not wait for it).
 *
 * @returns the folder, and the background sweep (for tests; it never rejects).
 */
export async function makeOwnedTempDir(
  root: string = tmpdir(),
): Promise<{ dir: string; swept: Promise<string[]> }> {
  const dir = await mkdtemp(join(root, PREFIX));
  try {
    await writeFile(join(dir, OWNER), `${JSON.stringify(self())}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const swept = removeAbandonedTempDirs(root).catch(() => []);
  return { dir, swept };
}
