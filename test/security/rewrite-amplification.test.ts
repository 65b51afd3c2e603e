import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { type FsFileStore, fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { codeOf } from "../support/helpers.js";

// Attack: one small tool argument repeats one 1 MiB upload handle 300 times (14.7 KB of JSON). Before,
// rewrite() made 300 copies (301 MiB of temp files). Each distinct handle must be copied once per
// call, and a call may name at most maxFiles distinct handles.

let dir: string;
let tmp: string;
let store: FsFileStore;
let uploads: UploadHandleResolver;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-amplify-"));
  tmp = join(dir, "tmp");
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: "s".repeat(40), baseUrl: "http://127.0.0.1:9", state });
  uploads = new UploadHandleResolver({ store, minter, state, tmpDir: tmp });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function tempBytes(): Promise<number> {
  const { stat } = await import("node:fs/promises");
  let total = 0;
  for (const call of await readdir(tmp).catch(() => [] as string[])) {
    for (const name of await readdir(join(tmp, call))) total += (await stat(join(tmp, call, name))).size;
  }
  return total;
}

describe("attack: one handle repeated to amplify temp files", () => {
  it("copies a handle repeated 300 times once", async () => {
    const file = await store.put(randomBytes(1024 * 1024), { scope: "s1", name: "big.bin" });
    const handle = uploads.handleFor(file);
    const args = { files: Array.from({ length: 300 }, () => handle) };
    expect(JSON.stringify(args).length).toBeLessThan(30_000);
    await using rewritten = await uploads.rewrite(args, ["files[]"], { scope: "s1" });
    const paths = new Set(rewritten.args.files);
    expect(paths.size).toBe(1);
    expect(await tempBytes()).toBe(1024 * 1024);
  });

  it("refuses more distinct handles than maxFiles with TOO_MANY_FILES before copying anything", async () => {
    const handles = [];
    for (let i = 0; i < 33; i++)
      handles.push(uploads.handleFor(await store.put(randomBytes(16), { scope: "s1", name: `f${i}` })));
    expect(await codeOf(uploads.rewrite({ files: handles }, ["files[]"], { scope: "s1" }))).toBe(
      "TOO_MANY_FILES",
    );
    expect(
      await codeOf(
        uploads.rewrite({ files: handles.slice(0, 3) }, ["files[]"], { scope: "s1", maxFiles: 2 }),
      ),
    ).toBe("TOO_MANY_FILES");
    expect(await tempBytes()).toBe(0);
    await using ok = await uploads.rewrite({ files: handles.slice(0, 32) }, ["files[]"], { scope: "s1" });
    expect(new Set(ok.args.files).size).toBe(32);
  });
});
