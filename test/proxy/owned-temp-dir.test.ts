import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeOwnedTempDir, removeAbandonedTempDirs } from "../../src/proxy/owned-temp-dir.js";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "mfb-owned-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * A process id no process has: above the largest `pid_max` Linux allows (2^22). The id of a process
 * that has exited would do only until it is handed out again, which a busy machine with the default
 * `pid_max` of 32768 does soon.
 */
const NO_SUCH_PID = 2 ** 22 + 1;

/** The `.owner` a proxy writes, read back from a folder this process made. */
async function ownOwner(): Promise<Record<string, unknown>> {
  const { dir, swept } = await makeOwnedTempDir(root);
  await swept;
  const owner = JSON.parse(await readFile(join(dir, ".owner"), "utf8")) as Record<string, unknown>;
  await rm(dir, { recursive: true });
  return owner;
}

/** A proxy temp folder as a proxy leaves it (`0700`, a scope folder with a record), owned by `owner`. */
async function leftFolder(name: string, owner: string | undefined): Promise<string> {
  const dir = join(root, `mcp-file-proxy-${name}`);
  await mkdir(join(dir, "0123456789abcdef0123456789abcdef"), { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  await writeFile(join(dir, "0123456789abcdef0123456789abcdef", "x.json"), "{}");
  if (owner !== undefined) await writeFile(join(dir, ".owner"), owner);
  return dir;
}

describe("the proxy's own temp folder", () => {
  it("is private and names its owner: pid, host, boot and pid namespace", async () => {
    const { dir, swept } = await makeOwnedTempDir(root);
    expect(await swept).toEqual([]);
    expect(dir.startsWith(join(root, "mcp-file-proxy-"))).toBe(true);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const owner = JSON.parse(await readFile(join(dir, ".owner"), "utf8"));
    expect(owner).toMatchObject({ pid: process.pid, host: hostname() });
    if (process.platform === "linux") {
      expect(owner.boot).toMatch(/^[0-9a-f-]{36}$/);
      expect(owner.pidns).toMatch(/^pid:\[\d+\]$/);
    }
  });

  it("removes only the folders whose owner is certainly gone", async () => {
    const me = await ownOwner();
    const gone = JSON.stringify({ ...me, pid: NO_SUCH_PID });
    await leftFolder("gone01", gone);
    const kept = [
      await leftFolder("live01", JSON.stringify(me)),
      await leftFolder("live02", JSON.stringify({ ...me, pid: process.ppid })),
      // The same pid seen from another pid namespace, boot or host says nothing about the owner here.
      await leftFolder("ns0001", JSON.stringify({ ...JSON.parse(gone), pidns: "pid:[1]" })),
      await leftFolder("boot01", JSON.stringify({ ...JSON.parse(gone), boot: "another-boot" })),
      await leftFolder("host01", JSON.stringify({ ...JSON.parse(gone), host: `${hostname()}-other` })),
      await leftFolder("nopid1", JSON.stringify({ ...me, pid: undefined })),
      await leftFolder("bigpid", JSON.stringify({ ...me, pid: 2 ** 31 })),
      await leftFolder("oldfmt", `${NO_SUCH_PID}\n`),
      await leftFolder("noown1", undefined),
    ];
    // Not private: not a folder this package made.
    const open = await leftFolder("open01", gone);
    await chmod(open, 0o755);
    kept.push(open);
    // A link to a folder whose owner is gone: neither the link nor its target goes.
    const target = await leftFolder("target", gone);
    await rename(target, join(root, "elsewhere"));
    await symlink(join(root, "elsewhere"), join(root, "mcp-file-proxy-link01"));
    kept.push(join(root, "mcp-file-proxy-link01"), join(root, "elsewhere"));
    await writeFile(join(root, "mcp-file-proxy-file"), "a file, not a folder");

    expect(await removeAbandonedTempDirs(root)).toEqual([join(root, "mcp-file-proxy-gone01")]);
    const left = await readdir(root);
    for (const dir of kept) expect(left).toContain(dir.slice(root.length + 1));
    expect(await readdir(join(root, "elsewhere"))).toContain(".owner");
    expect(left).toContain("mcp-file-proxy-file");
    expect(left).not.toContain("mcp-file-proxy-gone01");
  });

  it("stops at its deadline, and finds nothing in a folder that does not exist", async () => {
    const me = await ownOwner();
    await leftFolder("gone01", JSON.stringify({ ...me, pid: NO_SUCH_PID }));
    expect(await removeAbandonedTempDirs(root, Date.now() - 1)).toEqual([]);
    expect(await readdir(root)).toEqual(["mcp-file-proxy-gone01"]);
    expect(await removeAbandonedTempDirs(join(root, "missing"))).toEqual([]);
  });

  it("removes the folder of a proxy that was killed when the next one starts", async () => {
    const { dir: killed, swept: first } = await makeOwnedTempDir(root);
    // Its own start-up sweep runs in the background: done before the owner file changes under it.
    expect(await first).toEqual([]);
    const owner = JSON.parse(await readFile(join(killed, ".owner"), "utf8"));
    // As if the process that made it had been killed: its id now names a process that is gone.
    await writeFile(join(killed, ".owner"), JSON.stringify({ ...owner, pid: NO_SUCH_PID }));
    const { dir, swept } = await makeOwnedTempDir(root);
    expect(await swept).toEqual([killed]);
    expect(await readdir(root)).toEqual([dir.slice(root.length + 1)]);
  });
});
