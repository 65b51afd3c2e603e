/**
 * The proxy's own temp storage folder (when the config names none): `mcp-file-proxy-XXXXXX` in the
 * OS temp folder, made `0700` by `mkdtemp`, with an `.owner` file holding the process id. A proxy
 * that shuts down removes its folder; one that was killed (`SIGKILL`, a crash, the machine's OOM
 * killer) cannot, so each proxy that makes a folder first removes those whose owner process is
 * gone: the session's uploads and artifacts do not outlive it by more than the next start.
 */
import { lstat, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PREFIX = "mcp-file-proxy-";
const OWNER = ".owner";

/** Whether a process with this id exists (one of another user counts: it cannot be signalled). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the proxy temp folders under `root` that this user owns and whose `.owner` names a process
 * that no longer exists. A folder without a readable `.owner` (being made right now, or from an older
 * version) is left alone, and so is one whose owner is alive. Never throws.
 *
 * @returns the folders removed.
 */
export async function removeAbandonedTempDirs(root: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return removed;
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(root, name);
    try {
      const info = await lstat(dir);
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
      const owner = (await readFile(join(dir, OWNER), "utf8")).trim();
      if (!/^[1-9]\d{0,9}$/.test(owner) || alive(Number(owner))) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Not ours to judge (no owner file, gone meanwhile, unreadable): left as it is.
    }
  }
  return removed;
}

/**
 * Makes the proxy's temp storage folder under `root` (after removing abandoned ones, see
 * {@link removeAbandonedTempDirs}) and marks it as this process's.
 */
export async function makeOwnedTempDir(root: string = tmpdir()): Promise<string> {
  await removeAbandonedTempDirs(root);
  const dir = await mkdtemp(join(root, PREFIX));
  try {
    await writeFile(join(dir, OWNER), `${process.pid}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return dir;
}
