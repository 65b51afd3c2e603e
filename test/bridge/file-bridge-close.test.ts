/**
 * `FileBridge.close()`: the temp folder goes quiet (no refill, no spare or kept call folder left), a
 * file still in use stays valid, and the bridge keeps working after it.
 */
import { mkdtemp, readdir, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reusableCallFolders, spareCallFolders } from "../../src/bridge/call-folders.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";

const dataUrl = (text: string) => `data:text/plain;name=a.txt;base64,${Buffer.from(text).toString("base64")}`;

let base: string;
let tmp: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-close-")));
  tmp = join(base, "tmp");
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

describe("FileBridge.close", () => {
  it("removes the spare and kept call folders, after the refill under way, so the temp folder can go", async () => {
    const bridge = new FileBridge({ tmpDir: tmp });
    for (const scope of ["alice", "bob", "alice"]) {
      const file = await bridge.resolve(dataUrl(`hello ${scope}`), { scope });
      await file.dispose();
    }
    // No waiting here: a refill of spare folders may still be under way.
    await bridge.close();
    expect(spareCallFolders(tmp)).toBe(0);
    expect(reusableCallFolders(tmp)).toBe(0);
    expect(await readdir(tmp)).toEqual([]);
    // A removal without retries: nothing of the bridge's is being made in the folder any more.
    await rm(tmp, { recursive: true });
  });

  it("keeps a file still in use, which its dispose then removes; the bridge works after closing", async () => {
    const bridge = new FileBridge({ tmpDir: tmp });
    const kept = await bridge.resolve(dataUrl("still in use"), { scope: "alice" });
    const done = await bridge.resolve(dataUrl("done"), { scope: "alice" });
    await done.dispose();
    await bridge.close();
    expect(await readFile(kept.path, "utf8")).toBe("still in use");
    expect(await readdir(tmp)).toHaveLength(1); // the folder of the file in use, nothing else
    await kept.dispose();
    await expect(stat(kept.path)).rejects.toMatchObject({ code: "ENOENT" });

    const again = await bridge.resolve(dataUrl("again"), { scope: "alice" });
    expect(await readFile(again.path, "utf8")).toBe("again");
    await again.dispose();
    await bridge.close();
    expect(await readdir(tmp)).toEqual([]);
  });

  it("closes at the end of an `await using` block", async () => {
    {
      await using bridge = new FileBridge({ tmpDir: tmp });
      await using file = await bridge.resolve(dataUrl("scoped"), { scope: "alice" });
      expect(await readFile(file.path, "utf8")).toBe("scoped");
    }
    expect(spareCallFolders(tmp)).toBe(0);
    expect(await readdir(tmp)).toEqual([]);
  });
});
