/**
 * `FileBridge.close()`: the temp folder goes quiet (no refill, no spare or kept call folder left), a
 * file still in use stays valid, and the bridge keeps working after it.
 */
import { mkdtemp, readdir, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
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

  // A CI run saw ENOTEMPTY removing a temp folder after a refused base64 input: whatever a call that
  // fails or succeeds starts (its folder, the file in it, the refill of spare folders) is over once
  // its result is back and close() has resolved, so a plain removal (no retries) never races it.
  it("after refused and accepted calls side by side, close() leaves nothing being made (200 rounds)", async () => {
    const valid = Buffer.alloc(5 * 1024 * 1024 + 3, 7).toString("base64");
    // Invalid only past the first 4 MB window: refused after bytes were written into the call's file.
    const lateBad = `${valid.slice(0, -8)}*${valid.slice(-7)}`;
    const codeOf = (result: { isError?: boolean; content: Array<{ text: string }> }) =>
      result.isError ? /^Error ([A-Z0-9_]+):/.exec(result.content[0]?.text ?? "")?.[1] : "ok";
    for (let round = 0; round < 200; round++) {
      const tmpDir = join(base, `tmp-${round}`);
      const bridge = new FileBridge({ tmpDir });
      const tool = bridge.withFiles(
        async ({ file }: { file: unknown }) => ({
          content: [{ type: "text" as const, text: await readFile(file as string, "utf8") }],
        }),
        { fields: ["file"], scope: () => `scope-${round % 3}` },
      );
      const results = await Promise.all([
        tool({ file: { name: "a.bin", content: "!!!!" } }, {}),
        tool({ file: { name: "b.bin", content: lateBad } }, {}),
        tool({ file: dataUrl(`ok ${round}`) }, {}),
        tool({ file: { name: "c.txt", content: Buffer.from("fine").toString("base64") } }, {}),
        bridge.resolve({ name: "d.bin", content: "QQ=A" }, { scope: "direct" }).then(
          (file) => file.dispose().then(() => "ok"),
          (error: { code?: string }) => error.code ?? "no code",
        ),
      ]);
      expect(results.map((r) => (typeof r === "string" ? r : codeOf(r)))).toEqual([
        "INVALID_BASE64",
        "INVALID_BASE64",
        "ok",
        "ok",
        "INVALID_BASE64",
      ]);
      await bridge.close();
      expect(await readdir(tmpDir)).toEqual([]);
      await rm(tmpDir, { recursive: true });
    }
  }, 120_000);

  it("waits for files being written when it is called: nothing is made in the temp folder after it resolves", async () => {
    const valid = Buffer.alloc(5 * 1024 * 1024 + 3, 7).toString("base64");
    const lateBad = `${valid.slice(0, -8)}*${valid.slice(-7)}`;
    for (let round = 0; round < 20; round++) {
      const tmpDir = join(base, `tmp-${round}`);
      const bridge = new FileBridge({ tmpDir });
      // In flight when close() is called: one refused after bytes were written, one accepted.
      const refused = bridge.resolve({ name: "b.bin", content: lateBad }, { scope: "alice" }).then(
        () => "ok",
        (error: { code?: string }) => error.code ?? "no code",
      );
      const accepted = bridge.resolve({ name: "c.bin", content: valid }, { scope: "alice" });
      await bridge.close();
      const atClose = (await readdir(tmpDir)).sort();
      const file = await accepted;
      expect(await refused).toBe("INVALID_BASE64");
      // Only the folder of the file in use, complete; nothing made or removed after close() resolved.
      expect(atClose).toEqual([basename(dirname(file.path))]);
      expect((await stat(file.path)).size).toBe(5 * 1024 * 1024 + 3);
      await new Promise((done) => setTimeout(done, 5));
      expect((await readdir(tmpDir)).sort()).toEqual(atClose);
      await file.dispose();
      await bridge.close();
      expect(await readdir(tmpDir)).toEqual([]);
      await rm(tmpDir, { recursive: true });
    }
  }, 60_000);

  it("waits for a withFiles call refused before its handler: its folder is gone when close() resolves", async () => {
    const content = Buffer.alloc(1024 * 1024, 7).toString("base64");
    for (let round = 0; round < 50; round++) {
      const tmpDir = join(base, `tmp-${round}`);
      const bridge = new FileBridge({ tmpDir });
      let ran = false;
      const tool = bridge.withFiles(
        async () => {
          ran = true;
          return { content: [] };
        },
        { fields: ["file"], scope: () => "alice", accept: ["image/png"] },
      );
      const called = tool({ file: { name: "a.bin", content } }, {});
      await bridge.close();
      const atClose = await readdir(tmpDir);
      const result = await called;
      expect(ran).toBe(false);
      expect(/^Error ([A-Z0-9_]+):/.exec(result.content[0]?.text ?? "")?.[1]).toBe("UNSUPPORTED_MEDIA_TYPE");
      expect(atClose).toEqual([]);
      expect(await readdir(tmpDir)).toEqual([]);
      await rm(tmpDir, { recursive: true });
    }
  }, 60_000);

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
