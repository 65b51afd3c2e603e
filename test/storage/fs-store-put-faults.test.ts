/**
 * fsStore's streamed put (`FileSink` doing the meter's checks, `streamPutToFile` owning the fd) on
 * every way a put can end: no bytes, a partial file, a record or an open fd is left behind, and the
 * error `code` is the right one.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fsStore } from "../../src/storage/fs-store.js";
import { codeOf, readAll } from "../../src/testing/index.js";
import { openFilesIn } from "../support/open-files.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-fs-put-faults-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

const KiB = 1024;
const scope = "faults";

/** Every file under the store's folder (records and data). */
async function files(): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

/** A source of `chunks` (each after a macrotask), failing with `error` after `failAfter` of them. */
function source(
  chunks: Uint8Array[],
  failAfter?: number,
  error: Error = new Error("the body broke"),
): Readable {
  let i = 0;
  return new Readable({
    read() {
      setImmediate(() => {
        if (failAfter !== undefined && i === failAfter) {
          this.destroy(error);
          return;
        }
        if (i === chunks.length) this.push(null);
        else this.push(chunks[i++]);
      });
    },
  });
}

const pieces = (count: number, size: number) => Array.from({ length: count }, () => randomBytes(size));

/** Waits until no fd of this process points into the store's folder (a write may end after the put). */
async function noOpenFds(): Promise<void> {
  for (let i = 0; i < 100 && openFilesIn(dir) > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(openFilesIn(dir)).toBe(0);
}

describe("fsStore streamed put: faults leave nothing", () => {
  it("a source that fails before its first chunk, mid-write or after 64 KiB leaves no file and no fd", async () => {
    const store = fsStore(dir);
    for (const failAfter of [0, 1, 3, 20]) {
      const code = await codeOf(store.put(source(pieces(40, 32 * KiB), failAfter), { scope, name: "a.bin" }));
      expect(code, `failAfter ${failAfter}`).toBeTypeOf("string");
      await noOpenFds();
      expect(await files(), `failAfter ${failAfter}`).toEqual([]);
    }
  });

  it("maxBytes: exactly at the cap stores every byte; one byte past is FILE_TOO_LARGE and leaves nothing", async () => {
    const store = fsStore(dir);
    const cap = 200 * KiB + 3;
    const exact = randomBytes(cap);
    const chunks = (bytes: Buffer) => [
      bytes.subarray(0, 70 * KiB),
      bytes.subarray(70 * KiB, 140 * KiB),
      bytes.subarray(140 * KiB),
    ];
    const stored = await store.put(source(chunks(exact)), { scope, name: "at.bin", maxBytes: cap });
    expect(stored.size).toBe(cap);
    expect(Buffer.compare(await readAll((await store.read(scope, stored.id)) as Readable), exact)).toBe(0);
    const before = await files();
    const over = randomBytes(cap + 1);
    expect(await codeOf(store.put(source(chunks(over)), { scope, name: "over.bin", maxBytes: cap }))).toBe(
      "FILE_TOO_LARGE",
    );
    await noOpenFds();
    expect((await files()).sort()).toEqual(before.sort());
  });

  it("the scope quota: exactly filling it stores, one byte past is QUOTA_EXCEEDED and leaves nothing", async () => {
    const store = fsStore(dir, { quota: { maxBytesPerScope: 300 * KiB } });
    const first = await store.put(source(pieces(3, 50 * KiB)), { scope, name: "first.bin" });
    expect(first.size).toBe(150 * KiB);
    const before = await files();
    expect(
      await codeOf(
        store.put(source([randomBytes(100 * KiB), randomBytes(50 * KiB + 1)]), { scope, name: "over.bin" }),
      ),
    ).toBe("QUOTA_EXCEEDED");
    await noOpenFds();
    expect((await files()).sort()).toEqual(before.sort());
    const fill = await store.put(source([randomBytes(100 * KiB), randomBytes(50 * KiB)]), {
      scope,
      name: "fill.bin",
    });
    expect(fill.size).toBe(150 * KiB);
  });

  it("an abort mid-write and an abort during the digest wait leave no file, no record and no fd", async () => {
    const store = fsStore(dir);
    const mid = new AbortController();
    let sent = 0;
    const body = new Readable({
      read() {
        setImmediate(() => {
          if (++sent === 4) mid.abort(new Error("gone"));
          this.push(sent > 40 ? null : randomBytes(64 * KiB));
        });
      },
    });
    expect(await codeOf(store.put(body, { scope, name: "mid.bin", signal: mid.signal }))).toBe("ABORTED");
    await noOpenFds();
    expect(await files()).toEqual([]);

    // The source ends; the abort comes while the put waits for the file's digest.
    const late = new AbortController();
    const ended = Readable.from(pieces(4, 256 * KiB));
    ended.once("end", () => late.abort(new Error("gone")));
    const outcome = await store.put(ended, { scope, name: "late.bin", signal: late.signal }).then(
      () => "stored",
      (error: { code?: string }) => error.code,
    );
    await noOpenFds();
    if (outcome === "stored") {
      // Stored before the abort could matter: then it is a whole file with its record.
      expect((await files()).length).toBe(2);
    } else {
      expect(outcome).toBe("ABORTED");
      expect(await files()).toEqual([]);
    }
  });

  it("a zero-byte stream, and a source of strings (INVALID_INPUT), leave no fd open", async () => {
    const store = fsStore(dir);
    const empty = await store.put(Readable.from([], { objectMode: false }), { scope, name: "empty.bin" });
    expect(empty.size).toBe(0);
    const strings = new Readable({ objectMode: true, read() {} });
    strings.push(randomBytes(100 * KiB));
    strings.push("text");
    strings.push(null);
    expect(await codeOf(store.put(strings, { scope, name: "s.bin" }))).toBe("INVALID_INPUT");
    await noOpenFds();
    expect((await files()).length).toBe(1); // the empty file's record
  });

  it("chunks larger than the file writer's 256 KiB ring, and of odd sizes, are stored byte for byte", async () => {
    const store = fsStore(dir);
    const bytes = randomBytes(3 * 1024 * KiB + 5);
    const cuts = [0, 1, 1024 * KiB + 1, 1024 * KiB + 2, 2 * 1024 * KiB + 3, bytes.length];
    const chunks = cuts.slice(1).map((end, i) => bytes.subarray(cuts[i], end));
    const file = await store.put(source(chunks), { scope, name: "big.bin", maxBytes: bytes.length });
    expect(file.size).toBe(bytes.length);
    expect(file.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(Buffer.compare(await readAll((await store.read(scope, file.id)) as Readable), bytes)).toBe(0);
    await noOpenFds();
  });

  it("concurrent puts with failures among them leave exactly the good files, each byte for byte", async () => {
    const store = fsStore(dir);
    const good = Array.from({ length: 6 }, () => randomBytes(300 * KiB + 11));
    const results = await Promise.allSettled([
      ...good.map((bytes, i) =>
        store.put(source([bytes.subarray(0, 100 * KiB), bytes.subarray(100 * KiB)]), {
          scope,
          name: `g${i}`,
        }),
      ),
      ...Array.from({ length: 6 }, (_, i) =>
        store.put(source(pieces(10, 64 * KiB), 2 + i), { scope, name: `b${i}` }),
      ),
      ...Array.from({ length: 3 }, (_, i) =>
        store.put(source(pieces(10, 64 * KiB)), { scope, name: `c${i}`, maxBytes: 200 * KiB }),
      ),
    ]);
    expect(results.slice(0, 6).every((r) => r.status === "fulfilled")).toBe(true);
    expect(results.slice(6).every((r) => r.status === "rejected")).toBe(true);
    for (const [i, r] of results.slice(0, 6).entries()) {
      const file = (r as PromiseFulfilledResult<{ id: string }>).value;
      expect(
        Buffer.compare(await readAll((await store.read(scope, file.id)) as Readable), good[i] as Buffer),
      ).toBe(0);
    }
    await noOpenFds();
    expect((await files()).length).toBe(12);
  });
});
