/**
 * Two local users for the shared-folder attacks of issue 40: the tests run as root (also in CI) and
 * play the server; the attacker is a child process run with `{ uid: 1002, gid: 1002 }` (no account
 * needed). The shared place is a private test root with mode 1777 made for the test (never the real
 * `/tmp`), like a shared temp folder.
 */
import { spawnSync } from "node:child_process";
import { chmod, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The attacker's user and group id. */
export const ATTACKER_UID = 1002;

/** Whether the two-uid tests can run (only root can start a child as another user). */
export const IS_ROOT = process.getuid?.() === 0;

/** Why the two-uid tests are skipped where they are. */
export const SKIP_REASON = "needs root to run the attacker as uid 1002 (the tests run as root in CI)";

/** A fresh shared temp root: mode 1777 (anyone may create, the sticky bit keeps others' entries). */
export async function sharedTempRoot(prefix: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  await chmod(root, 0o1777);
  return root;
}

/**
 * Runs `script` (ES module source, for `node --input-type=module -e`) as the attacker; it reads `args`
 * as `process.argv.slice(1)`. Throws with its stderr when it fails.
 *
 * @returns what it printed.
 */
export function asAttacker(script: string, ...args: string[]): string {
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script, "--", ...args], {
    uid: ATTACKER_UID,
    gid: ATTACKER_UID,
    encoding: "utf8",
    cwd: "/",
    env: { PATH: process.env.PATH ?? "" },
  });
  if (run.status !== 0) throw new Error(`attacker script failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}
