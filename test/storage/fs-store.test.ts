import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fsStore } from "../../src/storage/fs-store.js";
import { codeOf, readAll, runFileStoreSuite } from "../../src/testing/index.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-fs-store-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

runFileStoreSuite("fsStore", (now) => fsStore(dir, { now }), {
  quota: (now, quota) => fsStore(dir, { now, quota }),
});

/** Every file under `root`, as relative paths, sorted. */
async function walk(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

const scopeFolder = (scope: string) => createHash("sha256").update(scope).digest("hex").slice(0, 32);
const text = (value: string) => new TextEncoder().encode(value);

describe("fsStore", () => {
  it("validates its arguments with INVALID_OPTION", () => {
    for (const bad of ["", 42, null, "a\0b"]) {
      expect(() => fsStore(bad as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    }
    for (const bad of [{ now: 1 }, { staleAfter: "later" }, { sweepInterval: -5 }, null]) {
      expect(() => fsStore(dir, bad as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    }
  });

  it("a new store's first calls, made at once, all land (its code loads once, on first use), and its argument errors come without a disk access", async () => {
    const store = fsStore(join(dir, "not-yet"));
    // Argument errors and answers that need no disk: the same codes, and no folder made.
    await expect(store.put(text("x"), { scope: "", name: "a.txt" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(store.list("s", { limit: 0 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(await store.head("s", "not an id")).toBeNull();
    expect(await store.usage("")).toEqual({ bytes: 0, files: 0 });
    expect(
      await store.adopt(
        { path: join(dir, "small"), size: 10, sha256: "0".repeat(64) },
        { scope: "", name: "a" },
      ),
    ).toBeNull();
    expect(await readdir(dir)).toEqual([]);
    const [a, b, page, none] = await Promise.all([
      store.put(text("a"), { scope: "s", name: "a.txt" }),
      store.put(text("b"), { scope: "s", name: "b.txt" }),
      store.list("s"),
      store.read("s", "0".repeat(26)),
    ]);
    expect(none).toBeNull();
    expect(page.files.length).toBeLessThanOrEqual(2);
    expect((await store.list("s")).files.map((file) => file.id).sort()).toEqual([a.id, b.id].sort());
    await store.close?.();
  });

  it("lays files out by scope hash and random id: no scope or user name in any path", async () => {
    const store = fsStore(dir);
    const scope = "../../chat 42";
    const file = await store.put(text("hello"), { scope, name: "../../etc/secret name.txt" });
    const big = await store.put(randomBytes(20_000), { scope, name: "../../etc/secret big.bin" });
    // A small file lives inside its record (one file on disk); a larger one has its bytes beside it.
    expect(await walk(dir)).toEqual(
      [`${file.id}.json`, big.id, `${big.id}.json`].map((name) => join(scopeFolder(scope), name)).sort(),
    );
    // localPath() writes a small file's bytes out beside its record, once.
    expect(await store.localPath(scope, file.id)).toBe(join(dir, scopeFolder(scope), file.id));
    expect(await store.localPath(scope, file.id)).toBe(join(dir, scopeFolder(scope), file.id));
    const files = await walk(dir);
    expect(files).toEqual(
      [file.id, `${file.id}.json`, big.id, `${big.id}.json`]
        .map((name) => join(scopeFolder(scope), name))
        .sort(),
    );
    for (const path of files) {
      expect(path).not.toContain("secret");
      expect(path).not.toContain("chat");
    }
    expect((await readFile(join(dir, scopeFolder(scope), file.id))).toString()).toBe("hello");
    const mode = (await stat(join(dir, scopeFolder(scope), file.id))).mode & 0o777;
    expect(mode).toBe(0o600);
    await store.close?.();
  });

  it("survives a restart: a new instance over the same folder sees the same files", async () => {
    const first = fsStore(dir);
    const bytes = randomBytes(50_000);
    const a = await first.put(bytes, {
      scope: "s",
      name: "a.bin",
      kind: "upload",
      ttl: "1h",
      metadata: { x: "1" },
    });
    const b = await first.put(text("b"), { scope: "s", name: "docs/b.txt" });
    await first.close?.();
    const second = fsStore(dir);
    expect(await second.head("s", a.id)).toEqual(a);
    expect((await second.list("s")).files).toEqual([a, b].sort((x, y) => (x.id < y.id ? -1 : 1)));
    expect((await readAll(await second.read("s", a.id))).equals(bytes)).toBe(true);
    expect(await second.delete("s", b.id)).toBe(true);
    await second.close?.();
  });

  it("aborting mid-stream removes the temp file: only committed files remain", async () => {
    const store = fsStore(dir);
    const kept = await store.put(text("kept"), { scope: "s", name: "kept.txt" });
    const before = await walk(dir);
    const controller = new AbortController();
    let sawTemp = false;
    const source = (async function* () {
      for (let i = 0; i < 8; i++) yield Buffer.alloc(64 * 1024, i);
      // By now the bytes exist on disk under their id, without metadata (invisible): prove it, then abort.
      const paths = await walk(dir);
      sawTemp = paths.some((path) => /[0-9a-z]{26}$/.test(path) && !paths.includes(`${path}.json`));
      controller.abort();
      await new Promise(() => {});
    })();
    expect(await codeOf(store.put(source, { scope: "s", name: "big.bin", signal: controller.signal }))).toBe(
      "ABORTED",
    );
    expect(sawTemp).toBe(true);
    expect(await walk(dir)).toEqual(before);
    expect((await store.list("s")).files.map((f) => f.id)).toEqual([kept.id]);
    await store.close?.();
  });

  it("no temp file is left by any failed put", async () => {
    const store = fsStore(dir);
    const kept = await store.put(text("kept"), { scope: "s", name: "kept.txt" });
    const before = await walk(dir);
    const failing = (async function* () {
      yield Buffer.alloc(10_000);
      throw new Error("source broke");
    })();
    const endless = (async function* () {
      for (;;) yield Buffer.alloc(64 * 1024);
    })();
    expect(await codeOf(store.put(endless, { scope: "s", name: "a", maxBytes: 1_000_000 }))).toBe(
      "FILE_TOO_LARGE",
    );
    expect(
      await codeOf(store.put(text("abc"), { scope: "s", name: "a", expectedSha256: "0".repeat(64) })),
    ).toBe("DIGEST_MISMATCH");
    expect(await codeOf(store.put(failing, { scope: "s", name: "a" }))).toBe("STORAGE_ERROR");
    expect(await codeOf(store.put(42 as never, { scope: "s", name: "a" }))).toBe("INVALID_INPUT");
    // A small staged file waits in memory; a larger one on disk, and aborting removes it.
    const small = await store.stage(text("staged"), { scope: "s", name: "a" });
    expect(await walk(dir)).toEqual(before);
    await small.abort();
    const staged = await store.stage(randomBytes(20_000), { scope: "s", name: "a" });
    expect((await walk(dir)).length).toBe(before.length + 1);
    await staged.abort();
    expect(await walk(dir)).toEqual(before);
    expect(await store.head("s", kept.id)).toEqual(kept);
    await store.close?.();
  });

  it("data without metadata is invisible, and corrupt metadata reads as missing", async () => {
    const store = fsStore(dir);
    const file = await store.put(text("x"), { scope: "s", name: "a.txt" });
    const metaPath = join(dir, scopeFolder("s"), `${file.id}.json`);
    const saved = await readFile(metaPath, "utf8");
    await writeFile(metaPath, saved.slice(0, 20));
    expect(await store.head("s", file.id)).toBeNull();
    expect(await store.read("s", file.id)).toBeNull();
    expect((await store.list("s")).files).toEqual([]);
    // Metadata naming another scope (e.g. copied between folders) does not open the file.
    await writeFile(metaPath, saved.replace('"scope":"s"', '"scope":"t"'));
    expect(await store.head("s", file.id)).toBeNull();
    await writeFile(metaPath, saved);
    expect(await store.head("s", file.id)).toEqual(file);
    await store.close?.();
  });

  it("a small file's record is written under its own name: no prefix of it is a file, and the sweep removes a cut-off one once stale", async () => {
    let time = Date.now();
    const store = fsStore(dir, { now: () => time, staleAfter: "1h", sweepInterval: 0 });
    const file = await store.put(text("small bytes inside the record"), { scope: "s", name: "a.txt" });
    const folder = join(dir, scopeFolder("s"));
    // One file on disk, no temp name left: the record holds the bytes.
    expect(await readdir(folder)).toEqual([`${file.id}.json`]);
    const metaPath = join(folder, `${file.id}.json`);
    const saved = await readFile(metaPath, "utf8");
    // What a reader could meet while the record is being written, or after a crash mid-write:
    // every prefix reads as no file at all.
    for (let cut = 0; cut < saved.length; cut++) {
      await writeFile(metaPath, saved.slice(0, cut));
      expect(await store.head("s", file.id)).toBeNull();
      if (cut % 16 === 0) {
        expect(await store.read("s", file.id)).toBeNull();
        expect((await store.list("s")).files).toEqual([]);
      }
    }
    // A record cut off mid-write stays while fresh (a put may still be writing it), goes once stale;
    // a JSON record this version does not read (another version's) is never swept.
    const other = join(folder, `${"1".repeat(26)}.json`);
    await writeFile(other, JSON.stringify({ v: 99, id: "1".repeat(26) }));
    expect(await store.sweep()).toBe(0);
    time += 2 * 3_600_000;
    expect(await store.sweep()).toBe(1);
    expect(await readdir(folder)).toEqual([`${"1".repeat(26)}.json`]);
    // A new put of the same bytes is whole again.
    const again = await store.put(text("small bytes inside the record"), { scope: "s", name: "a.txt" });
    expect(new TextDecoder().decode(await readAll(await store.read("s", again.id)))).toBe(
      "small bytes inside the record",
    );
    await store.close?.();
  });

  it("sweep removes stale leftovers of interrupted puts, but not fresh ones", async () => {
    let time = Date.now();
    const store = fsStore(dir, { now: () => time, staleAfter: "1h", sweepInterval: 0 });
    const kept = await store.put(text("kept"), { scope: "s", name: "kept.txt" });
    const folder = join(dir, scopeFolder("s"));
    const orphanId = "0".repeat(26);
    // What a crash could leave: a partial data file, a metadata temp, data renamed without metadata.
    await writeFile(join(folder, `${orphanId}.abc.part`), "partial");
    await writeFile(join(folder, `${kept.id}.json.abc.tmp`), "{");
    await writeFile(join(folder, orphanId), "orphan");
    const staged = await store.stage(randomBytes(20_000), { scope: "s", name: "a" });
    expect(await store.sweep()).toBe(0); // all fresh
    expect((await walk(dir)).length).toBe(5); // kept.txt is small: its bytes are inside its record
    time += 2 * 3_600_000;
    // The real mtimes are "now"; the store's clock is two hours ahead, so they are stale.
    expect(await store.sweep()).toBe(4);
    expect(await walk(dir)).toEqual([join(scopeFolder("s"), `${kept.id}.json`)]);
    expect(await codeOf(staged.commit())).toBe("STORAGE_ERROR");
    expect(await store.head("s", staged.file.id)).toBeNull();
    expect(await store.head("s", kept.id)).toEqual(kept);
    await store.close?.();
  });

  it("sweep removes empty old scope folders, and a later put re-creates them", async () => {
    let time = Date.now();
    const store = fsStore(dir, { now: () => time, sweepInterval: 0 });
    const file = await store.put(text("x"), { scope: "s", name: "a", ttl: 1 });
    const busy = await store.put(text("x"), { scope: "busy", name: "a" });
    const recent = new Date(time + 3 * 3_600_000);
    time += 3 * 3_600_000;
    expect(await store.sweep()).toBe(1);
    expect(await readdir(dir)).toEqual([scopeFolder("busy")]);
    // An empty folder that changed recently (by the store's clock) stays.
    await store.delete("busy", busy.id);
    await utimes(join(dir, scopeFolder("busy")), recent, recent);
    await store.sweep();
    expect(await readdir(dir)).toEqual([scopeFolder("busy")]);
    expect(await store.head("s", file.id)).toBeNull();
    const again = await store.put(text("y"), { scope: "s", name: "b" });
    expect((await store.list("s")).files.map((f) => f.id)).toEqual([again.id]);
    await store.close?.();
  });

  it("reading an empty folder, or none at all, is empty and not an error", async () => {
    const store = fsStore(join(dir, "not-yet-created"));
    expect((await store.list("s")).files).toEqual([]);
    expect(await store.head("s", "0".repeat(26))).toBeNull();
    expect(await store.sweep()).toBe(0);
    await store.close?.();
  });

  it("concurrent puts and deletes across two instances over one folder stay consistent", async () => {
    const a = fsStore(dir);
    const b = fsStore(dir);
    const files = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        (i % 2 ? a : b).put(text(`f${i}`), { scope: "s", name: `f${i}` }),
      ),
    );
    const deletions = await Promise.all(files.map((file, i) => (i % 2 ? b : a).delete("s", file.id)));
    expect(deletions.every(Boolean)).toBe(true);
    expect((await a.list("s")).files).toEqual([]);
    expect(await walk(dir)).toEqual([]);
    await a.close?.();
    await b.close?.();
  });

  it("validates quota with INVALID_OPTION, declares it, and has none by default", async () => {
    for (const quota of [5, { maxBytesPerScope: -1 }, { maxFilesPerScope: 0.5 }]) {
      expect(() => fsStore(dir, { quota } as never)).toThrowError(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
    }
    expect(fsStore(dir).quota).toBeUndefined();
    expect(fsStore(dir, { quota: {} }).quota).toBeUndefined();
    expect(fsStore(dir, { quota: { maxFilesPerScope: 2 } }).quota).toEqual({ maxFilesPerScope: 2 });
  });

  it("a refused commit leaves no temp file, staged or not, and usage counts only live files", async () => {
    let now = Date.UTC(2030, 0, 1);
    const store = fsStore(dir, { quota: { maxBytesPerScope: 1000 }, sweepInterval: 0, now: () => now });
    const staged = await store.stage(Buffer.alloc(600), { scope: "s", name: "staged" });
    await store.put(Buffer.alloc(500), { scope: "s", name: "a", ttl: 60 });
    expect(await codeOf(staged.commit())).toBe("QUOTA_EXCEEDED");
    expect(await codeOf(store.put(Buffer.alloc(600), { scope: "s", name: "b" }))).toBe("QUOTA_EXCEEDED");
    expect((await walk(dir)).filter((path) => !/\/[0-9a-z]{26}(\.json)?$/.test(path))).toEqual([]);
    expect(await store.usage("s")).toEqual({ bytes: 500, files: 1 });
    now += 61_000;
    expect(await store.usage("s")).toEqual({ bytes: 0, files: 0 });
    expect(await store.usage("")).toEqual({ bytes: 0, files: 0 });
    expect(await store.usage("never-used")).toEqual({ bytes: 0, files: 0 });
    await store.put(Buffer.alloc(1000), { scope: "s", name: "c" });
    await store.close?.();
  });

  it("quota checks see files another process wrote into the folder (the listing is the truth)", async () => {
    const store = fsStore(dir, { quota: { maxFilesPerScope: 2 }, sweepInterval: 0 });
    const other = fsStore(dir, { sweepInterval: 0 }); // no quota of its own, e.g. another process
    await store.put(Buffer.alloc(1), { scope: "s", name: "a" }); // primes the usage cache
    await other.put(Buffer.alloc(1), { scope: "s", name: "b" });
    expect(await codeOf(store.put(Buffer.alloc(1), { scope: "s", name: "c" }))).toBe("QUOTA_EXCEEDED");
    await store.close?.();
    await other.close?.();
  });
});
