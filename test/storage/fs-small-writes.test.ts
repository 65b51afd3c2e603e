import { readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  OFFLOADED_WRITES,
  SLOW_WRITE_MS,
  SLOW_WRITES,
  SmallWrites,
  STALLED_WRITE_MS,
} from "../../src/storage/fs-small-writes.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-small-writes-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A clock that advances `step` ms on every reading. */
function steppingClock(step: () => number): () => number {
  let at = 0;
  return () => {
    at += step();
    return at;
  };
}

describe("SmallWrites", () => {
  it("writes new files exclusively with the given mode, and renames", async () => {
    const writes = new SmallWrites();
    const path = join(dir, "a.json");
    await writes.write(path, new TextEncoder().encode("{}"), 0o600);
    expect(await readFile(path, "utf8")).toBe("{}");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await expect(writes.write(path, new Uint8Array(1), 0o600)).rejects.toMatchObject({ code: "EEXIST" });
    expect(await readFile(path, "utf8")).toBe("{}");
    await writes.rename(path, join(dir, "b.json"));
    expect(await readdir(dir)).toEqual(["b.json"]);
    await expect(writes.write(join(dir, "missing", "c"), new Uint8Array(1), 0o600)).rejects.toMatchObject({
      code: "ENOENT",
    });
    expect(writes.offloaded).toBe(0);
  });

  it(`sends the next writes to the thread pool after ${SLOW_WRITES} slow ones in a row, then times the disk again`, async () => {
    let step = SLOW_WRITE_MS * 2;
    const writes = new SmallWrites(steppingClock(() => step));
    const byte = new Uint8Array([1]);
    for (let i = 1; i < SLOW_WRITES; i++) {
      await writes.write(join(dir, `slow${i}`), byte, 0o600);
      expect(writes.offloaded).toBe(0);
    }
    // A fast one in between starts the count again (a slow one alone may have been preempted).
    step = 0;
    await writes.write(join(dir, "between"), byte, 0o600);
    step = SLOW_WRITE_MS * 2;
    for (let i = 1; i < SLOW_WRITES; i++) await writes.rename(join(dir, `slow${i}`), join(dir, `s${i}`));
    expect(writes.offloaded).toBe(0);
    await writes.write(join(dir, "last"), byte, 0o600);
    expect(writes.offloaded).toBe(OFFLOADED_WRITES);
    step = 0;
    // Offloaded writes and renames do the same work and count down.
    await writes.write(join(dir, "next"), new Uint8Array([2]), 0o600);
    await writes.rename(join(dir, "next"), join(dir, "moved"));
    await expect(writes.write(join(dir, "moved"), new Uint8Array(1), 0o600)).rejects.toMatchObject({
      code: "EEXIST",
    });
    expect(writes.offloaded).toBe(OFFLOADED_WRITES - 3);
    expect([...(await readFile(join(dir, "moved")))]).toEqual([2]);
    for (let i = 3; i < OFFLOADED_WRITES; i++) await writes.write(join(dir, `f${i}`), byte, 0o600);
    expect(writes.offloaded).toBe(0);
    // Fast again: the next write is synchronous and timed, and stays so.
    await writes.write(join(dir, "fast"), byte, 0o600);
    expect(writes.offloaded).toBe(0);
  });

  it("offloads after one stalled write, and counts a failed write's time", async () => {
    const writes = new SmallWrites(steppingClock(() => STALLED_WRITE_MS * 2));
    await writeFile(join(dir, "taken"), "x");
    await expect(writes.write(join(dir, "taken"), new Uint8Array(1), 0o600)).rejects.toMatchObject({
      code: "EEXIST",
    });
    expect(writes.offloaded).toBe(OFFLOADED_WRITES);
  });

  it("writes on the calling thread while the disk is fast: the bytes are there when write() returns", async () => {
    const writes = new SmallWrites(() => 0);
    const path = join(dir, "now");
    const pending = writes.write(path, new Uint8Array([9]), 0o600);
    // No await in between: only a write made on this thread can be complete here.
    expect([...readFileSync(path)]).toEqual([9]);
    await pending;
  });
});
