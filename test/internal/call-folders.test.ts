import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import {
  CALL_FOLDER_POOL_SIZE,
  callFoldersRefilled,
  createCallFile,
  isSpareCallFolder,
  refillCallFolders,
  removeCallFile,
  SPARE_MAX_AGE_MS,
  spareCallFolders,
} from "../../src/internal/call-folders.js";
import { ACTIVE_CALL_DIRS, sweepCallDirs } from "../../src/internal/temp-dir.js";

let base: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-callfolders-")));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(base, { recursive: true, force: true });
});

const CALL_FOLDER = new RegExp(`/call-${process.pid}-[a-f0-9]{24}$`);

describe("per-call folders", () => {
  it("gives each call a private folder of its own with the file under its own name", async () => {
    const tmp = join(base, "tmp");
    const [a, b] = await Promise.all([createCallFile(tmp, "same.txt"), createCallFile(tmp, "same.txt")]);
    await Promise.all([a.handle.close(), b.handle.close()]);
    expect(a.folder).not.toBe(b.folder);
    for (const file of [a, b]) {
      expect(dirname(file.folder)).toBe(tmp);
      expect(file.path).toBe(join(file.folder, "same.txt"));
      expect((await stat(file.folder)).mode & 0o777).toBe(0o700);
      expect((await stat(file.path)).mode & 0o777).toBe(0o600);
      expect(ACTIVE_CALL_DIRS.has(file.folder)).toBe(true);
      expect(isSpareCallFolder(file.folder)).toBe(false);
    }
    await removeCallFile(a.path, a.folder);
    await removeCallFile(b.path, b.folder);
    await removeCallFile(b.path, b.folder); // gone already: fine
    refillCallFolders(tmp);
    await callFoldersRefilled(tmp);
    const left = await readdir(tmp);
    expect(left).toHaveLength(CALL_FOLDER_POOL_SIZE);
    for (const name of left) expect(isSpareCallFolder(join(tmp, name))).toBe(true);
  });

  it("takes pre-made folders from the pool, never the same one twice, and refills it", async () => {
    const tmp = join(base, "tmp");
    const first = await createCallFile(tmp, "a.bin"); // pool empty: makes its own folder
    expect(spareCallFolders(tmp)).toBe(0);
    refillCallFolders(tmp); // as materialize() does once the file is written
    await callFoldersRefilled(tmp);
    expect(spareCallFolders(tmp)).toBe(CALL_FOLDER_POOL_SIZE);
    const spares = (await readdir(tmp)).map((name) => join(tmp, name)).filter(isSpareCallFolder);
    expect(spares).toHaveLength(CALL_FOLDER_POOL_SIZE);
    for (const dir of spares) {
      expect(dir).toMatch(CALL_FOLDER);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect(await readdir(dir)).toEqual([]);
    }
    // Its own sweep never takes a spare or a folder in use, however old.
    expect(
      await sweepCallDirs(tmp, { olderThanMs: 0, now: Date.now() + 1000, active: ACTIVE_CALL_DIRS }),
    ).toBe(0);
    const taken = await Promise.all(
      Array.from({ length: CALL_FOLDER_POOL_SIZE + 2 }, (_, i) => createCallFile(tmp, `f${i}.bin`)),
    );
    const folders = new Set([first.folder, ...taken.map((file) => file.folder)]);
    expect(folders.size).toBe(CALL_FOLDER_POOL_SIZE + 3);
    for (const dir of spares) expect(folders.has(dir)).toBe(true);
    expect(spareCallFolders(tmp)).toBe(0);
    refillCallFolders(tmp);
    await callFoldersRefilled(tmp);
    expect(spareCallFolders(tmp)).toBe(CALL_FOLDER_POOL_SIZE);
    for (const file of [first, ...taken]) {
      await file.handle.close();
      await removeCallFile(file.path, file.folder);
      await expect(stat(file.folder)).rejects.toMatchObject({ code: "ENOENT" });
    }
    // A used folder never goes back to the pool.
    for (const dir of folders) expect(isSpareCallFolder(dir)).toBe(false);
  });

  it("removes what the tool left beside its input with the call's folder", async () => {
    const tmp = join(base, "tmp");
    const bridge = new FileBridge({ tmpDir: tmp });
    await bridge.resolve("data:,warm", { scope: "s" }).then((file) => file.dispose());
    await callFoldersRefilled(tmp);
    const file = await bridge.resolve("data:text/plain;name=foo.docx,doc", { scope: "s" });
    expect(file.path.endsWith("/foo.docx")).toBe(true);
    await writeFile(join(dirname(file.path), "foo.pdf"), "byproduct");
    expect((await readdir(dirname(file.path))).sort()).toEqual(["foo.docx", "foo.pdf"]);
    await file.dispose();
    await expect(stat(dirname(file.path))).rejects.toMatchObject({ code: "ENOENT" });
    await callFoldersRefilled(tmp);
    for (const name of await readdir(tmp)) {
      expect(isSpareCallFolder(join(tmp, name))).toBe(true);
      expect(await readdir(join(tmp, name))).toEqual([]);
    }
  });

  it("makes its own folder when a spare one was removed meanwhile (another process's age sweep)", async () => {
    const tmp = join(base, "tmp");
    const first = await createCallFile(tmp, "a.bin");
    await first.handle.close();
    refillCallFolders(tmp);
    await callFoldersRefilled(tmp);
    for (const name of await readdir(tmp)) {
      const dir = join(tmp, name);
      if (dir !== first.folder) await rm(dir, { recursive: true });
    }
    const second = await createCallFile(tmp, "b.bin");
    await second.handle.writeFile("again");
    await second.handle.close();
    expect(await readFile(second.path, "utf8")).toBe("again");
    expect((await stat(second.folder)).mode & 0o777).toBe(0o700);
    await removeCallFile(first.path, first.folder);
    await removeCallFile(second.path, second.folder);
    refillCallFolders(tmp);
    await callFoldersRefilled(tmp);
    for (const name of await readdir(tmp)) {
      expect(isSpareCallFolder(join(tmp, name))).toBe(true);
      expect(ACTIVE_CALL_DIRS.has(join(tmp, name))).toBe(true);
    }
  });

  it("never hands out a spare folder old enough for an age sweep; removes it instead", async () => {
    const tmp = join(base, "tmp");
    const first = await createCallFile(tmp, "a.bin");
    await first.handle.close();
    refillCallFolders(tmp);
    await callFoldersRefilled(tmp);
    const spares = (await readdir(tmp)).map((name) => join(tmp, name)).filter(isSpareCallFolder);
    expect(spares).toHaveLength(CALL_FOLDER_POOL_SIZE);
    const later = Date.now() + SPARE_MAX_AGE_MS + 1;
    vi.spyOn(Date, "now").mockReturnValue(later);
    const second = await createCallFile(tmp, "b.bin");
    await second.handle.close();
    expect(spares).not.toContain(second.folder);
    await callFoldersRefilled(tmp);
    for (const dir of spares) await expect(stat(dir)).rejects.toMatchObject({ code: "ENOENT" });
    await removeCallFile(first.path, first.folder);
    await removeCallFile(second.path, second.folder);
    expect(await readdir(tmp)).toEqual([]);
  });

  it("removes spare folders and folders in use, with anything left in them, when the process exits", async () => {
    const tmp = join(base, "tmp");
    const script = join(base, "child.mts");
    const bridge = resolve("src/bridge/file-bridge.ts");
    const folders = resolve("src/internal/call-folders.ts");
    await writeFile(
      script,
      `import { FileBridge } from ${JSON.stringify(bridge)};
import { callFoldersRefilled } from ${JSON.stringify(folders)};
import { readdirSync } from "node:fs";
const bridge = new FileBridge({ tmpDir: ${JSON.stringify(tmp)} });
await (await bridge.resolve("data:,done", { scope: "s" })).dispose();
const file = await bridge.resolve("data:,left", { scope: "s" });
await callFoldersRefilled(${JSON.stringify(tmp)});
console.log(JSON.stringify({ path: file.path, entries: readdirSync(${JSON.stringify(tmp)}).length }));`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script]);
    const seen = JSON.parse(stdout.trim()) as { path: string; entries: number };
    expect(seen.path.startsWith(`${tmp}/call-`)).toBe(true);
    // The folder in use plus a full pool were there before exit.
    expect(seen.entries).toBe(CALL_FOLDER_POOL_SIZE + 1);
    expect(await readdir(tmp)).toEqual([]);
  });
});
