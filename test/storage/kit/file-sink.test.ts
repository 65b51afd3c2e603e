import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

/** Every buffer list the sink handed to `fs.writev`, in order. */
const writes: Buffer[][] = [];
/** How long each `writev` waits before it reads its buffers (0: at once). */
let writeDelayMs = 0;
// A slow disk: the bytes are read from the buffers only when the write really runs.
vi.mock("node:fs", async (importOriginal) =>
  (await import("./slow-writev.js")).slowWritev(await importOriginal(), (buffers) => {
    writes.push([...(buffers as Buffer[])]);
    return writeDelayMs;
  }),
);

const { FileSink } = await import("../../../src/storage/kit/file-sink.js");
const { SLOT_BYTES, RING_SLOTS } = await import("../../../src/storage/kit/write-ring.js");

const KiB = 1024;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-file-sink-"));
  writes.length = 0;
  writeDelayMs = 0;
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** `bytes` cut into fresh buffers of `size` (each its own ArrayBuffer, as socket reads are). */
function socketLike(bytes: Uint8Array, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.byteLength; at += size) out.push(Buffer.from(bytes.subarray(at, at + size)));
  return out;
}

describe("FileSink", () => {
  // Session 17 (docs/performance.md): a sink that kept its caller's chunks until their `writev` was
  // done had some alive at every scavenge; V8 promoted them, and the dead promoted buffers (2–5 MiB
  // per 64 MiB) pushed the process into back-to-back full GCs. The sink copies into reused slots.
  it("writes from its own reused slots: no caller chunk reaches writev, and the slots are few", async () => {
    const bytes = randomBytes(8 * 1024 * KiB);
    const chunks = socketLike(bytes, 64 * KiB);
    const path = join(dir, "f");
    const seen: number[] = [];
    await pipeline(Readable.from(chunks), new FileSink(fs.openSync(path, "wx"), (n) => seen.push(n)));

    expect(Buffer.compare(await readFile(path), bytes)).toBe(0);
    const callers = new Set<ArrayBufferLike>(chunks.map((chunk) => chunk.buffer));
    const used = new Set<ArrayBufferLike>();
    for (const list of writes) for (const buffer of list) used.add(buffer.buffer);
    expect([...used].filter((buffer) => callers.has(buffer))).toEqual([]);
    expect(used.size).toBeLessThanOrEqual(RING_SLOTS);
    for (const buffer of used) expect(buffer.byteLength).toBe(SLOT_BYTES);
    // The written count only grows, and ends at the whole file.
    expect(seen.at(-1)).toBe(bytes.byteLength);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it("releases each chunk once copied: a caller may reuse its buffer after the write callback", async () => {
    const path = join(dir, "g");
    const sink = new FileSink(fs.openSync(path, "wx"), () => {});
    const expected: Buffer[] = [];
    const reused = Buffer.alloc(100 * KiB);
    for (let i = 0; i < 40; i++) {
      reused.fill(i);
      expected.push(Buffer.from(reused));
      // Wait for this chunk's callback, then overwrite the same buffer with the next chunk's bytes.
      await new Promise<void>((resolve, reject) =>
        sink.write(reused, (error) => (error ? reject(error) : resolve())),
      );
    }
    await new Promise<void>((resolve, reject) =>
      sink.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    expect(Buffer.compare(await readFile(path), Buffer.concat(expected))).toBe(0);
  });

  it("fails the put when a write fails (an fd not open for writing)", async () => {
    const path = join(dir, "h");
    fs.writeFileSync(path, "");
    const sink = new FileSink(fs.openSync(path, "r"), () => {});
    const error = await pipeline(Readable.from(socketLike(randomBytes(512 * KiB), 64 * KiB)), sink).catch(
      (caught: unknown) => caught,
    );
    expect((error as NodeJS.ErrnoException).code).toBe("EBADF");
    expect(sink.destroyed).toBe(true);
  });

  it("writes nothing and closes for an empty source", async () => {
    const path = join(dir, "e");
    await pipeline(Readable.from([]), new FileSink(fs.openSync(path, "wx"), () => {}));
    expect((await readFile(path)).byteLength).toBe(0);
    expect(writes).toEqual([]);
  });

  it("keeps bytes exact and in order across odd chunk sizes (0, 1, a slot, 1 MiB + 1)", async () => {
    const sizes = [0, 1, SLOT_BYTES, 0, 3, 1024 * KiB + 1, SLOT_BYTES - 1, 1, SLOT_BYTES + 1, 0, 7];
    const chunks = sizes.map((size) => randomBytes(size));
    const path = join(dir, "odd");
    const seen: number[] = [];
    await pipeline(Readable.from(chunks), new FileSink(fs.openSync(path, "wx"), (n) => seen.push(n)));
    const expected = Buffer.concat(chunks);
    expect(Buffer.compare(await readFile(path), expected)).toBe(0);
    expect(seen.at(-1)).toBe(expected.byteLength);
  });

  it("a sink destroyed while its write runs gives no slot away before that write is done", async () => {
    writeDelayMs = 30;
    const pathA = join(dir, "a");
    const pathB = join(dir, "b");
    const first = randomBytes(4 * SLOT_BYTES);
    const sinkA = new FileSink(fs.openSync(pathA, "wx"), () => {});
    // A's first write takes its filled slots and waits on the slow disk.
    for (const chunk of socketLike(first, SLOT_BYTES)) sinkA.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
    const closed = new Promise((resolve) => sinkA.once("close", resolve));
    sinkA.destroy();
    // Another put at once: if A's slots went back to the pool, B fills them before A's write reads them.
    const bytesB = randomBytes(2 * 1024 * KiB);
    await pipeline(
      Readable.from(socketLike(bytesB, 16 * KiB)),
      new FileSink(fs.openSync(pathB, "wx"), () => {}),
    );
    await closed;
    expect(Buffer.compare(await readFile(pathB), bytesB)).toBe(0);
    // What A's write in flight held reached A's file as A's own bytes (a destroyed sink writes no more).
    const heldA = await readFile(pathA);
    expect(heldA.byteLength).toBeGreaterThan(0);
    expect(Buffer.compare(heldA, first.subarray(0, heldA.byteLength))).toBe(0);
  });

  it("a failed write keeps no slot in use by another put: a concurrent put stays exact", async () => {
    const bad = join(dir, "bad");
    fs.writeFileSync(bad, "");
    const good = join(dir, "good");
    const bytes = randomBytes(3 * 1024 * KiB + 5);
    const [failed] = await Promise.all([
      pipeline(
        Readable.from(socketLike(randomBytes(1024 * KiB), 48 * KiB)),
        new FileSink(fs.openSync(bad, "r"), () => {}),
      ).catch((caught: unknown) => caught),
      pipeline(Readable.from(socketLike(bytes, 40 * KiB)), new FileSink(fs.openSync(good, "wx"), () => {})),
    ]);
    expect((failed as NodeJS.ErrnoException).code).toBe("EBADF");
    expect(Buffer.compare(await readFile(good), bytes)).toBe(0);
  });
});
