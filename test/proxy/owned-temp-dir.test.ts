import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
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

/** The id of a process that has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

/** A proxy temp folder as a proxy leaves it, owned by `owner` (no `.owner` file when undefined). */
async function leftFolder(name: string, owner: string | undefined): Promise<string> {
  const dir = join(root, `mcp-file-proxy-${name}`);
  await mkdir(join(dir, "0123456789abcdef0123456789abcdef"), { recursive: true });
  await writeFile(join(dir, "0123456789abcdef0123456789abcdef", "x.json"), "{}");
  if (owner !== undefined) await writeFile(join(dir, ".owner"), owner);
  return dir;
}

describe("the proxy's own temp folder", () => {
  it("is private, names its owner, and removes the folders of proxies that are gone", async () => {
    const gone = await leftFolder("gone01", `${deadPid()}\n`);
    const running = await leftFolder("live01", `${process.pid}\n`);
    const unmarked = await leftFolder("old001", undefined);
    const garbled = await leftFolder("bad001", "not a pid");
    const unrelated = join(root, "something-else");
    await writeFile(join(root, "mcp-file-proxy-file"), "a file, not a folder");
    await mkdir(unrelated);

    const dir = await makeOwnedTempDir(root);
    expect(dir.startsWith(join(root, "mcp-file-proxy-"))).toBe(true);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readFile(join(dir, ".owner"), "utf8")).toBe(`${process.pid}\n`);

    const left = await readdir(root);
    expect(left).not.toContain("mcp-file-proxy-gone01");
    for (const kept of [running, unmarked, garbled, unrelated, dir]) {
      expect(left).toContain(kept.slice(root.length + 1));
    }
    expect(left).toContain("mcp-file-proxy-file");
    expect(gone).not.toBe(dir);
  });

  it("finds nothing to remove in a folder that does not exist", async () => {
    expect(await removeAbandonedTempDirs(join(root, "missing"))).toEqual([]);
  });

  it("removes the folder a killed proxy left when the next one starts", async () => {
    const killed = await makeOwnedTempDir(root);
    // As if the process that made it had been killed: its id now names a process that is gone.
    await writeFile(join(killed, ".owner"), `${deadPid()}\n`);
    expect(await removeAbandonedTempDirs(root)).toEqual([killed]);
    expect(await readdir(root)).toEqual([]);
  });
});
