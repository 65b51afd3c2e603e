import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callRoot, createCallFile, removeCallFile } from "../../src/internal/call-root.js";
import { ACTIVE_CALL_DIRS, sweepCallDirs } from "../../src/internal/temp-dir.js";

let base: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-callroot-")));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("the call root", () => {
  it("is one private folder per temp dir and process; a file keeps its name, a taken name gets a folder of its own", async () => {
    const tmp = join(base, "tmp");
    const a = await createCallFile(tmp, "same.txt");
    const b = await createCallFile(tmp, "same.txt");
    await Promise.all([a.handle.close(), b.handle.close()]);
    expect(a.root).toBe(b.root);
    expect(a.root).toBe(await callRoot(tmp));
    expect(dirname(a.root)).toBe(tmp);
    expect(a.root).toMatch(new RegExp(`/call-${process.pid}-[A-Za-z0-9]+$`));
    expect(a).toMatchObject({ folder: undefined, path: join(a.root, "same.txt") });
    expect(b.folder && dirname(b.folder)).toBe(a.root);
    expect(b.path).toBe(join(b.folder as string, "same.txt"));
    expect((await stat(a.root)).mode & 0o777).toBe(0o700);
    expect((await stat(b.folder as string)).mode & 0o777).toBe(0o700);
    expect((await stat(a.path)).mode & 0o777).toBe(0o600);
    expect(ACTIVE_CALL_DIRS.has(a.root)).toBe(true);
    // Its own sweep never takes the root, however old.
    expect(
      await sweepCallDirs(tmp, { olderThanMs: 0, now: Date.now() + 1000, active: ACTIVE_CALL_DIRS }),
    ).toBe(0);
    await removeCallFile(a.path);
    await removeCallFile(a.path); // gone already: fine
    await removeCallFile(b.path, b.folder);
    expect(await readdir(a.root)).toEqual([]);
  });

  it("never opens what is already there (O_EXCL): a planted symlink leaves its target untouched", async () => {
    const tmp = join(base, "tmp");
    const root = await callRoot(tmp);
    const outside = join(base, "outside.txt");
    await writeFile(outside, "keep");
    await symlink(outside, join(root, "x.txt"));
    const file = await createCallFile(tmp, "x.txt");
    await file.handle.writeFile("mine");
    await file.handle.close();
    expect(file.folder).toBeDefined();
    expect(await readFile(outside, "utf8")).toBe("keep");
    expect(await readFile(file.path, "utf8")).toBe("mine");
    await removeCallFile(file.path, file.folder);
    await rm(join(root, "x.txt"));
  });

  it("puts a file in a folder of its own when asked (a name to be chosen later)", async () => {
    const tmp = join(base, "tmp");
    const file = await createCallFile(tmp, ".partial", { ownFolder: true });
    await file.handle.close();
    expect(file.folder && dirname(file.folder)).toBe(file.root);
    await removeCallFile(file.path, file.folder);
    expect(await readdir(file.root)).toEqual([]);
  });

  it("is made again when someone removes it (another process's age sweep)", async () => {
    const tmp = join(base, "tmp");
    const first = await createCallFile(tmp, "a.bin");
    await first.handle.close();
    await rm(first.root, { recursive: true, force: true });
    const second = await createCallFile(tmp, "b.bin");
    await second.handle.writeFile("again");
    await second.handle.close();
    expect(second.root).not.toBe(first.root);
    expect(ACTIVE_CALL_DIRS.has(first.root)).toBe(false);
    expect(await readFile(second.path, "utf8")).toBe("again");
    expect((await stat(second.root)).mode & 0o777).toBe(0o700);
  });

  it("is removed, with anything left in it, when the process exits", async () => {
    const tmp = join(base, "tmp");
    const script = join(base, "child.mts");
    const bridge = resolve("src/bridge/file-bridge.ts");
    await writeFile(
      script,
      `import { FileBridge } from ${JSON.stringify(bridge)};
const file = await new FileBridge({ tmpDir: ${JSON.stringify(tmp)} }).resolve("data:,left", { scope: "s" });
console.log(file.path);`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script]);
    expect(stdout.trim().startsWith(`${tmp}/call-`)).toBe(true);
    expect(await readdir(tmp)).toEqual([]);
  });
});
