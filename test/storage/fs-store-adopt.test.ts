/**
 * `fsStore().adopt()`: a measured local file is linked into place and checked like a streamed put
 * (size cap, declared size and sha256, scope quota at commit); the caller's file is left as it was.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fsStore } from "../../src/storage/fs-store.js";
import { codeOf, readAll } from "../../src/testing/index.js";

let dir: string;
let source: string;
let bytes: Buffer;
let sha256: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-fs-adopt-"));
  source = join(dir, "staged.bin");
  bytes = randomBytes(200_000);
  sha256 = createHash("sha256").update(bytes).digest("hex");
  await writeFile(source, bytes);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** Every file the store holds (its folder, without the caller's file). */
async function storeFiles(root: string): Promise<string[]> {
  return (await readdir(root, { recursive: true })).filter((name) => name.includes("/"));
}

describe("fsStore adopt", () => {
  it("links a measured file into place: committed bytes exact, the caller's file untouched", async () => {
    const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
    const staged = await store.adopt(
      { path: source, size: bytes.length, sha256 },
      { scope: "s", name: "clip.bin", kind: "upload" },
    );
    expect(staged).not.toBeNull();
    // Invisible until committed.
    expect(await store.head("s", staged?.file.id as string)).toBeNull();
    const file = await staged?.commit();
    expect(file).toMatchObject({ scope: "s", name: "clip.bin", size: bytes.length, sha256, kind: "upload" });
    const read = await store.read("s", file?.id as string);
    expect(Buffer.from(await readAll(read as NonNullable<typeof read>)).equals(bytes)).toBe(true);
    expect((await readFile(source)).equals(bytes)).toBe(true);
    // One inode, two names: no byte was copied.
    const path = await store.localPath("s", file?.id as string);
    expect((await stat(path as string)).ino).toBe((await stat(source)).ino);
  });

  it("refuses over the cap, a wrong declared size or sha256, and a size the file does not have", async () => {
    const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
    const measured = { path: source, size: bytes.length, sha256 };
    const options = { scope: "s", name: "a.bin" };
    expect(await codeOf(store.adopt(measured, { ...options, maxBytes: 1000 }))).toBe("FILE_TOO_LARGE");
    expect(await codeOf(store.adopt(measured, { ...options, expectedSize: 10 }))).toBe("DIGEST_MISMATCH");
    expect(await codeOf(store.adopt(measured, { ...options, expectedSha256: "0".repeat(64) }))).toBe(
      "DIGEST_MISMATCH",
    );
    expect(await codeOf(store.adopt({ ...measured, size: bytes.length + 1 }, options))).toBe("INVALID_INPUT");
    expect(await storeFiles(join(dir, "store")).catch(() => [])).toEqual([]);
    expect((await readFile(source)).equals(bytes)).toBe(true);
  });

  it("holds the scope quota at commit, and an aborted adoption leaves nothing", async () => {
    const store = fsStore(join(dir, "store"), {
      sweepInterval: 0,
      quota: { maxBytesPerScope: 300_000 },
    });
    const measured = { path: source, size: bytes.length, sha256 };
    const first = await store.adopt(measured, { scope: "s", name: "a.bin" });
    const second = await store.adopt(measured, { scope: "s", name: "b.bin" });
    await first?.commit();
    expect(await codeOf(second?.commit() as Promise<unknown>)).toBe("QUOTA_EXCEEDED");
    const third = await store.adopt(measured, { scope: "t", name: "c.bin" });
    await third?.abort();
    expect((await store.list("s")).files.map((file) => file.name)).toEqual(["a.bin"]);
    expect(await storeFiles(join(dir, "store"))).toHaveLength(2); // a.bin's bytes and record
    expect((await readFile(source)).equals(bytes)).toBe(true);
  });

  it("leaves small files to stage(): null", async () => {
    const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
    const small = Buffer.from("small");
    await writeFile(source, small);
    const measured = {
      path: source,
      size: small.length,
      sha256: createHash("sha256").update(small).digest("hex"),
    };
    expect(await store.adopt(measured, { scope: "s", name: "a.txt" })).toBeNull();
  });
});
