import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { type FsFileStore, fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { codeOf } from "../support/helpers.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

let dir: string;
let tmp: string;
let store: FsFileStore;
let uploads: UploadHandleResolver;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-rewrite-"));
  tmp = join(dir, "tmp");
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:9", state });
  uploads = new UploadHandleResolver({ store, minter, state, tmpDir: tmp });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function tempEntries(): Promise<string[]> {
  return tempLeftovers(tmp);
}

describe("UploadHandleResolver.rewrite through the bridge's materializer", () => {
  it("gives two uploads with the same name two separate local copies", async () => {
    const a = randomBytes(64);
    const b = randomBytes(64);
    const first = await store.put(a, { scope: "s1", name: "same.bin" });
    const second = await store.put(b, { scope: "s1", name: "same.bin" });
    const args = { files: [uploads.handleFor(first), uploads.handleFor(second)] };
    await using rewritten = await uploads.rewrite(args, ["files[]"], { scope: "s1" });
    const [pathA, pathB] = rewritten.args.files as [string, string];
    expect(pathA).not.toBe(pathB);
    expect(pathA.endsWith("same.bin") && pathB.endsWith("same.bin")).toBe(true);
    expect((await readFile(pathA)).equals(a)).toBe(true);
    expect((await readFile(pathB)).equals(b)).toBe(true);
    expect(dirname(dirname(pathA))).toBe(tmp);
  });

  it("keeps its copies while in use when a bridge sweeps the same temp folder", async () => {
    const bytes = randomBytes(32);
    const file = await store.put(bytes, { scope: "s1", name: "kept.bin" });
    const rewritten = await uploads.rewrite({ file: uploads.handleFor(file) }, ["file"], { scope: "s1" });
    const bridge = new FileBridge({ tmpDir: tmp, now: () => Date.now() + 3_600_000 });
    expect(await bridge.sweep({ olderThan: "1s" })).toBe(0);
    expect((await readFile(rewritten.args.file)).equals(bytes)).toBe(true);
    await rewritten.dispose();
    expect(await tempEntries()).toEqual([]);
  });

  it("copies an empty upload (rewrite has no EMPTY_FILE rule)", async () => {
    const file = await store.put(Buffer.alloc(0), { scope: "s1", name: "empty.txt" });
    await using rewritten = await uploads.rewrite({ file: uploads.handleFor(file) }, ["file"], {
      scope: "s1",
    });
    expect(await readFile(rewritten.args.file)).toHaveLength(0);
  });

  it("refuses a stored file whose bytes no longer match its sha256, and keeps no copies", async () => {
    const good = await store.put(randomBytes(16), { scope: "s1", name: "good.bin" });
    const bad = await store.put(Buffer.from("original bytes"), { scope: "s1", name: "bad.txt" });
    const onDisk = await store.localPath("s1", bad.id);
    if (!onDisk) throw new Error("fsStore has local paths");
    await writeFile(onDisk, "tampered bytes"); // same length, other content
    const args = { files: [uploads.handleFor(good), uploads.handleFor(bad)] };
    expect(await codeOf(uploads.rewrite(args, ["files[]"], { scope: "s1" }))).toBe("DIGEST_MISMATCH");
    expect(await tempEntries()).toEqual([]);
  });
});
