/**
 * Records and small files of `fsStore`: written by the process's writer thread through shared memory
 * (`fs-writer-thread.ts`), or on the thread pool. Files are created exclusively with their mode,
 * errors are Node's own (`code`, `syscall`, `path`: `fsStore` decides on `EEXIST` and `ENOENT`),
 * more writes than slots all land, writes too large for a slot and every write after the thread
 * failed go to the thread pool, and an idle writer thread never keeps a process alive.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FsSmallWrites } from "../../src/storage/fs-small-writes.js";
import { fsStore } from "../../src/storage/fs-store.js";
import {
  FsWriterThread,
  fsWriterThread,
  SLOT_BYTES,
  WriterUnavailable,
} from "../../src/storage/fs-writer-thread.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-small-writes-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The process's writer thread, once it has started. */
async function writerThread(): Promise<FsWriterThread> {
  fsWriterThread();
  for (;;) {
    const writer = fsWriterThread();
    if (writer) return writer;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("FsWriterThread", () => {
  it("creates files exclusively with their mode and bytes, and renames", async () => {
    const writer = await writerThread();
    expect(writer).toBeDefined();
    const path = join(dir, "a ü 日本.json");
    await writer.write(path, new TextEncoder().encode("hello"), 0o600);
    expect(await readFile(path, "utf8")).toBe("hello");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await writer.write(join(dir, "empty"), new Uint8Array(0), 0o640);
    expect((await stat(join(dir, "empty"))).size).toBe(0);
    expect((await stat(join(dir, "empty"))).mode & 0o777).toBe(0o640);
    await writer.rename(path, join(dir, "b.json"));
    expect(await readdir(dir)).toEqual(["b.json", "empty"].sort());
  });

  it("fails as Node's fs does: EEXIST for a taken name (left as it was), ENOENT for a missing folder or rename source", async () => {
    const writer = await writerThread();
    await writeFile(join(dir, "taken"), "theirs");
    await expect(writer.write(join(dir, "taken"), new Uint8Array([1]), 0o600)).rejects.toMatchObject({
      code: "EEXIST",
      syscall: "open",
      path: join(dir, "taken"),
    });
    expect(await readFile(join(dir, "taken"), "utf8")).toBe("theirs");
    await expect(writer.write(join(dir, "no", "x"), new Uint8Array([1]), 0o600)).rejects.toMatchObject({
      code: "ENOENT",
    });
    await expect(writer.rename(join(dir, "gone"), join(dir, "b"))).rejects.toMatchObject({
      code: "ENOENT",
      syscall: "rename",
      path: join(dir, "gone"),
    });
  });

  it("takes many more writes at once than it has slots: every one lands with its own bytes", async () => {
    const writer = await writerThread();
    const count = 500;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        writer.write(join(dir, `f${i}`), new TextEncoder().encode(`file ${i} `.repeat(i % 50)), 0o600),
      ),
    );
    expect(await readdir(dir)).toHaveLength(count);
    for (const i of [0, 1, 49, 250, 499]) {
      expect(await readFile(join(dir, `f${i}`), "utf8")).toBe(`file ${i} `.repeat(i % 50));
    }
  });

  it("goes on past the point where its shared counters wrap (2^31 writes)", async () => {
    const writer = new FsWriterThread(2 ** 31 - 40);
    expect(await writer.started()).toBe(true);
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => writer.write(join(dir, `w${i}`), new Uint8Array([i]), 0o600)),
    );
    expect(await readdir(dir)).toHaveLength(100);
    expect(await readFile(join(dir, "w77"))).toEqual(Buffer.from([77]));
    await writer.close();
  });

  it("closed with writes in flight and waiting: finished ones hold their bytes, waiting ones go to the thread pool, nothing lands after", async () => {
    const writer = new FsWriterThread();
    expect(writer.usable).toBe(false);
    expect(await writer.started()).toBe(true);
    const writes = new FsSmallWrites("writer-thread", () => writer);
    const body = (i: number) => Buffer.alloc(4096, i % 251);
    // 200 writes for 8 slots: most wait for a slot when the thread is closed.
    const settled = Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => writes.write(join(dir, `f${i}`), body(i), 0o600)),
    );
    await writer.close();
    const results = await settled;
    expect(writer.usable).toBe(false);
    const failed = results.flatMap((result, i) => (result.status === "rejected" ? [{ i, result }] : []));
    // Only writes the thread had taken can fail, and with the thread's own error (never "unavailable").
    expect(failed.length).toBeLessThanOrEqual(32);
    for (const { result } of failed) {
      expect(String((result as PromiseRejectedResult).reason)).toMatch(/writer thread was closed/);
    }
    for (const [i, result] of results.entries()) {
      if (result.status === "fulfilled") expect(await readFile(join(dir, `f${i}`))).toEqual(body(i));
    }
    const files = (await readdir(dir)).sort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await readdir(dir)).sort()).toEqual(files);
    // Later writes and renames go to the thread pool.
    await writes.write(join(dir, "after"), new Uint8Array([2]), 0o600);
    await writes.rename(join(dir, "after"), join(dir, "renamed"));
    expect(await readFile(join(dir, "renamed"))).toEqual(Buffer.from([2]));
    await expect(writer.write(join(dir, "direct"), new Uint8Array([1]), 0o600)).rejects.toBeInstanceOf(
      WriterUnavailable,
    );
  });

  // A size budget: the shared memory is allocated after start-up and counts, as external memory,
  // against V8's old-generation limit; what a process keeps there brings on the back-to-back full
  // collections of big uploads sooner (docs/performance.md, Sessions 17 and 18).
  it("keeps at most 640 KiB of shared memory for its slots", async () => {
    const before = process.memoryUsage().arrayBuffers;
    const writer = new FsWriterThread();
    const held = process.memoryUsage().arrayBuffers - before;
    try {
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThanOrEqual(640 * 1024);
    } finally {
      await writer.started();
      await writer.close();
    }
  });

  it("reports the failing step and errno as Node does, and refuses a write that does not fit a slot before taking one", async () => {
    const writer = await writerThread();
    const error = await writer.write(join(dir, "no", "x"), new Uint8Array([1]), 0o600).catch((e) => e);
    expect(error).toMatchObject({ code: "ENOENT", syscall: "open", errno: -2, path: join(dir, "no", "x") });
    await expect(writer.write(join(dir, "big"), Buffer.alloc(SLOT_BYTES + 1), 0o600)).rejects.toBeInstanceOf(
      RangeError,
    );
    // Every slot is still there: 64 writes at once land.
    await Promise.all(
      Array.from({ length: 64 }, (_, i) => writer.write(join(dir, `s${i}`), new Uint8Array([i]), 0o600)),
    );
    expect(await readdir(dir)).toHaveLength(64);
  });
});

describe("FsSmallWrites", () => {
  it("writes what does not fit a writer slot on the thread pool, exactly", async () => {
    let asked = 0;
    const writer = await writerThread();
    const writes = new FsSmallWrites("writer-thread", () => {
      asked++;
      return writer;
    });
    const big = Buffer.alloc(SLOT_BYTES + 1, 7);
    expect(writer.fits(join(dir, "big"), big)).toBe(false);
    await writes.write(join(dir, "big"), big, 0o600);
    expect(await readFile(join(dir, "big"))).toEqual(big);
    expect(asked).toBe(1);
    await expect(writes.write(join(dir, "big"), big, 0o600)).rejects.toMatchObject({ code: "EEXIST" });
  });

  it('never asks for the writer thread with "thread-pool"', async () => {
    const writes = new FsSmallWrites("thread-pool", () => {
      throw new Error("asked for the writer thread");
    });
    await writes.write(join(dir, "a"), new Uint8Array([9]), 0o600);
    await writes.rename(join(dir, "a"), join(dir, "b"));
    expect(await readFile(join(dir, "b"))).toEqual(Buffer.from([9]));
    await expect(writes.write(join(dir, "b"), new Uint8Array([1]), 0o600)).rejects.toMatchObject({
      code: "EEXIST",
    });
  });

  it("an idle writer thread does not keep the process alive (under --input-type=module too)", async () => {
    // A put before the thread has started (thread pool), then 20 through the started thread.
    const script = `
      const { fsStore } = await import(${JSON.stringify(new URL("../../src/storage/fs-store.ts", import.meta.url).href)});
      const { fsWriterThread } = await import(${JSON.stringify(new URL("../../src/storage/fs-writer-thread.ts", import.meta.url).href)});
      const store = fsStore(${JSON.stringify(join(dir, "child"))}, { sweepInterval: 0 });
      const first = await store.put(new TextEncoder().encode("from a child"), { scope: "s", name: "a.txt" });
      while (!fsWriterThread()) await new Promise((resolve) => setTimeout(resolve, 5));
      const more = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        store.put(new TextEncoder().encode("file " + i), { scope: "s", name: i + ".txt" })));
      console.log(first.size, more.length);
    `;
    const started = Date.now();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { timeout: 20_000 },
    );
    expect(stdout.trim()).toBe("12 20");
    expect(await readdir(join(dir, "child"))).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe("fsStore smallWrites", () => {
  it('stores small files with "writer-thread" (the default) and "thread-pool", and refuses other values', async () => {
    for (const smallWrites of ["writer-thread", "thread-pool", undefined] as const) {
      const store = fsStore(join(dir, String(smallWrites)), {
        sweepInterval: 0,
        ...(smallWrites ? { smallWrites } : {}),
      });
      const files = await Promise.all(
        ["small", "x".repeat(20_000), "y".repeat(60_000)].map((text, i) =>
          store.put(new TextEncoder().encode(text), { scope: "s", name: `${i}.txt` }),
        ),
      );
      for (const [i, text] of ["small", "x".repeat(20_000), "y".repeat(60_000)].entries()) {
        const path = await store.localPath("s", (files[i] as { id: string }).id);
        expect(await readFile(path as string, "utf8")).toBe(text);
      }
    }
    for (const bad of ["adaptive", "sync", true, null]) {
      expect(() => fsStore(dir, { smallWrites: bad as never })).toThrow(
        expect.objectContaining({ code: "INVALID_OPTION", message: expect.stringContaining("smallWrites") }),
      );
    }
  });
});
