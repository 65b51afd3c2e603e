import { execFile } from "node:child_process";
import { closeSync, writeSync } from "node:fs";
import { mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  CALL_FOLDER_POOL_SIZE,
  callFoldersRefilled,
  createCallFile,
  isSpareCallFolder,
  REUSE_PER_SCOPE,
  REUSE_PER_TMP_DIR,
  refillCallFolders,
  releaseCallFile,
  removeCallFile,
  reusableCallFolders,
  SPARE_MAX_AGE_MS,
  spareCallFolders,
} from "../../src/bridge/call-folders.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { processSpaceId } from "../../src/internal/process-space.js";
import { ACTIVE_CALL_DIRS, sweepCallDirs } from "../../src/internal/temp-dir.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

let base: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-callfolders-")));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await callFoldersRefilled(join(base, "tmp")); // no refill racing the removal
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

const CALL_FOLDER = new RegExp(`/call-${process.pid}\\.${processSpaceId()}-[a-f0-9]{24}$`);

describe("per-call folders", () => {
  it("gives each call a private folder of its own with the file under its own name", async () => {
    const tmp = join(base, "tmp");
    const [a, b] = await Promise.all([createCallFile(tmp, "same.txt"), createCallFile(tmp, "same.txt")]);
    closeSync(a.fd);
    closeSync(b.fd);
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
      closeSync(file.fd);
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
    closeSync(first.fd);
    refillCallFolders(tmp);
    await callFoldersRefilled(tmp);
    for (const name of await readdir(tmp)) {
      const dir = join(tmp, name);
      if (dir !== first.folder) await rm(dir, { recursive: true });
    }
    const second = await createCallFile(tmp, "b.bin");
    writeSync(second.fd, "again");
    closeSync(second.fd);
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
    closeSync(first.fd);
    refillCallFolders(tmp);
    await callFoldersRefilled(tmp);
    const spares = (await readdir(tmp)).map((name) => join(tmp, name)).filter(isSpareCallFolder);
    expect(spares).toHaveLength(CALL_FOLDER_POOL_SIZE);
    const later = Date.now() + SPARE_MAX_AGE_MS + 1;
    vi.spyOn(Date, "now").mockReturnValue(later);
    const second = await createCallFile(tmp, "b.bin");
    closeSync(second.fd);
    expect(spares).not.toContain(second.folder);
    await callFoldersRefilled(tmp);
    for (const dir of spares) await expect(stat(dir)).rejects.toMatchObject({ code: "ENOENT" });
    await removeCallFile(first.path, first.folder);
    await removeCallFile(second.path, second.folder);
    expect(await readdir(tmp)).toEqual([]);
  });

  it("gives an emptied folder back to the same scope's later calls only", async () => {
    const tmp = join(base, "tmp");
    const bridge = new FileBridge({ tmpDir: tmp });
    const first = await bridge.resolve("data:text/plain;name=a.txt,alice-1", { scope: "alice" });
    const folder = dirname(first.path);
    await first.dispose();
    // Unlinked, and the empty folder kept for alice (not a leftover, not removed).
    await expect(stat(first.path)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readdir(folder)).toEqual([]);
    expect(reusableCallFolders(tmp, "alice")).toBe(1);
    expect(isSpareCallFolder(folder)).toBe(true);
    expect(ACTIVE_CALL_DIRS.has(folder)).toBe(true);
    // Bob never gets it, even with the same name.
    const bob = await bridge.resolve("data:text/plain;name=a.txt,bob", { scope: "bob" });
    expect(dirname(bob.path)).not.toBe(folder);
    expect(reusableCallFolders(tmp, "alice")).toBe(1);
    // Alice's next call does, and sees only its own file there.
    const second = await bridge.resolve("data:text/plain;name=b.txt,alice-2", { scope: "alice" });
    expect(dirname(second.path)).toBe(folder);
    expect(await readdir(folder)).toEqual(["b.txt"]);
    expect(await readFile(second.path, "utf8")).toBe("alice-2");
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(second.path)).mode & 0o777).toBe(0o600);
    expect(reusableCallFolders(tmp, "alice")).toBe(0);
    // Two calls at once never share a folder.
    const [x, y] = await Promise.all([
      bridge.resolve("data:,x", { scope: "alice" }),
      bridge.resolve("data:,y", { scope: "alice" }),
    ]);
    expect(new Set([folder, dirname(x.path), dirname(y.path)]).size).toBe(3);
    for (const file of [bob, second, x, y]) await file.dispose();
    expect(reusableCallFolders(tmp, "alice")).toBe(3);
    expect(reusableCallFolders(tmp, "bob")).toBe(1);
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("never keeps a folder the tool left something in, and drops a kept one whose name came back", async () => {
    const tmp = join(base, "tmp");
    const bridge = new FileBridge({ tmpDir: tmp });
    const file = await bridge.resolve("data:text/plain;name=in.txt,doc", { scope: "s" });
    await writeFile(join(dirname(file.path), "out.pdf"), "byproduct");
    await file.dispose();
    await expect(stat(dirname(file.path))).rejects.toMatchObject({ code: "ENOENT" });
    expect(reusableCallFolders(tmp, "s")).toBe(0);

    // A kept folder in which a late writer put the very name the next call wants: that call gets a
    // folder of its own and the kept one goes, with the late file.
    const kept = await bridge.resolve("data:text/plain;name=in.txt,one", { scope: "s" });
    const folder = dirname(kept.path);
    await kept.dispose();
    expect(reusableCallFolders(tmp, "s")).toBe(1);
    await writeFile(join(folder, "in.txt"), "late");
    const next = await bridge.resolve("data:text/plain;name=in.txt,two", { scope: "s" });
    expect(dirname(next.path)).not.toBe(folder);
    expect(await readFile(next.path, "utf8")).toBe("two");
    await callFoldersRefilled(tmp);
    await expect(stat(folder)).rejects.toMatchObject({ code: "ENOENT" });
    await next.dispose();
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("keeps at most REUSE_PER_SCOPE folders a scope and REUSE_PER_TMP_DIR in all; never reuses an old one", async () => {
    const tmp = join(base, "tmp");
    const made = await Promise.all(
      Array.from({ length: REUSE_PER_SCOPE + 2 }, (_, i) => createCallFile(tmp, `f${i}.bin`, "s")),
    );
    for (const file of made) {
      closeSync(file.fd);
      await releaseCallFile(tmp, "s", file.folder, file.path);
    }
    await callFoldersRefilled(tmp);
    expect(reusableCallFolders(tmp, "s")).toBe(REUSE_PER_SCOPE);
    // The two released first (the longest unused) were removed.
    for (const file of made.slice(0, 2))
      await expect(stat(file.folder)).rejects.toMatchObject({ code: "ENOENT" });
    // Other scopes push the temp dir past its cap: the least recently used scope's folders go first.
    const scopes = Array.from({ length: REUSE_PER_TMP_DIR / REUSE_PER_SCOPE }, (_, i) => `t${i}`);
    for (const scope of scopes) {
      const files = await Promise.all(
        Array.from({ length: REUSE_PER_SCOPE }, (_, i) => createCallFile(tmp, `g${i}.bin`, scope)),
      );
      for (const file of files) {
        closeSync(file.fd);
        await releaseCallFile(tmp, scope, file.folder, file.path);
      }
    }
    await callFoldersRefilled(tmp);
    expect(reusableCallFolders(tmp)).toBe(REUSE_PER_TMP_DIR);
    expect(reusableCallFolders(tmp, "s")).toBe(0);
    for (const file of made) await expect(stat(file.folder)).rejects.toMatchObject({ code: "ENOENT" });
    // Without a scope, a folder is never kept.
    const plain = await createCallFile(tmp, "p.bin");
    closeSync(plain.fd);
    await releaseCallFile(tmp, undefined, plain.folder, plain.path);
    await expect(stat(plain.folder)).rejects.toMatchObject({ code: "ENOENT" });
    // A kept folder older than SPARE_MAX_AGE_MS is removed, not handed out.
    const oldOnes = (await readdir(tmp)).map((name) => join(tmp, name)).filter(isSpareCallFolder);
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + SPARE_MAX_AGE_MS + 1);
    const fresh = await createCallFile(tmp, "late.bin", "t0");
    closeSync(fresh.fd);
    expect(oldOnes).not.toContain(fresh.folder);
    await removeCallFile(fresh.path, fresh.folder);
  });

  it("removes spare folders and folders in use, with anything left in them, when the process exits", async () => {
    const tmp = join(base, "tmp");
    const script = join(base, "child.mts");
    const bridge = resolve("src/bridge/file-bridge.ts");
    const folders = resolve("src/bridge/call-folders.ts");
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
