import { readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FsSmallWrites,
  OFFLOADED_WRITES,
  SLOW_WRITE_MS,
  SLOW_WRITES,
  STALLED_WRITE_MS,
} from "../../src/storage/fs-small-writes.js";
import { fsStore } from "../../src/storage/fs-store.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-small-writes-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A clock that advances `step()` ms on every reading. */
function steppingClock(step: () => number): () => number {
  let at = 0;
  return () => {
    at += step();
    return at;
  };
}

const byte = new Uint8Array([1]);

describe("FsSmallWrites", () => {
  it("writes new files exclusively with the given mode, and renames", async () => {
    const writes = new FsSmallWrites();
    const path = join(dir, "a.json");
    await writes.write(path, new TextEncoder().encode("{}"), 0o600);
    expect(await readFile(path, "utf8")).toBe("{}");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await expect(writes.write(path, new Uint8Array(1), 0o600)).rejects.toMatchObject({ code: "EEXIST" });
    expect(await readFile(path, "utf8")).toBe("{}");
    await writes.rename(path, join(dir, "b.json"));
    expect(await readdir(dir)).toEqual(["b.json"]);
    await expect(writes.write(join(dir, "missing", "c"), byte, 0o600)).rejects.toMatchObject({
      code: "ENOENT",
    });
    expect(writes.offloaded).toBe(0);
  });

  it(`sends creates to the thread pool after ${SLOW_WRITES} slow ones in a row, then times the disk again`, async () => {
    let step = SLOW_WRITE_MS * 2;
    const writes = new FsSmallWrites(
      true,
      steppingClock(() => step),
    );
    for (let i = 1; i < SLOW_WRITES; i++) {
      await writes.write(join(dir, `slow${i}`), byte, 0o600);
      expect(writes.offloaded).toBe(0);
    }
    // A fast create in between starts the count again (a slow one alone may have been preempted).
    step = 0;
    await writes.write(join(dir, "between"), byte, 0o600);
    step = SLOW_WRITE_MS * 2;
    for (let i = 1; i < SLOW_WRITES; i++) await writes.write(join(dir, `again${i}`), byte, 0o600);
    expect(writes.offloaded).toBe(0);
    await writes.write(join(dir, "last"), byte, 0o600);
    expect(writes.offloaded).toBe(OFFLOADED_WRITES);
    step = 0;
    // Offloaded creates do the same work and count down; renames follow them, uncounted.
    await writes.write(join(dir, "next"), new Uint8Array([2]), 0o600);
    await writes.rename(join(dir, "next"), join(dir, "moved"));
    await expect(writes.write(join(dir, "moved"), byte, 0o600)).rejects.toMatchObject({ code: "EEXIST" });
    expect(writes.offloaded).toBe(OFFLOADED_WRITES - 2);
    expect([...(await readFile(join(dir, "moved")))]).toEqual([2]);
    for (let i = 2; i < OFFLOADED_WRITES; i++) await writes.write(join(dir, `f${i}`), byte, 0o600);
    expect(writes.offloaded).toBe(0);
    // Fast again: the next create is synchronous and timed, and stays so.
    await writes.write(join(dir, "fast"), byte, 0o600);
    expect(writes.offloaded).toBe(0);
  });

  it("is not fooled by cheap renames between slow creates (a record of a larger file: write, write, rename)", async () => {
    // Creates take 0.3 ms (ext4 scanning recently deleted inodes); renames stay cheap, and are not timed.
    const writes = new FsSmallWrites(
      true,
      steppingClock(() => SLOW_WRITE_MS * 1.2),
    );
    for (let i = 0; i < SLOW_WRITES; i++) {
      await writes.write(join(dir, `data${i}`), byte, 0o600);
      await writes.write(join(dir, `meta${i}.tmp`), byte, 0o600);
      await writes.rename(join(dir, `meta${i}.tmp`), join(dir, `meta${i}`));
      if (writes.offloaded > 0) break;
    }
    expect(writes.offloaded).toBeGreaterThan(0);
  });

  it("offloads after one stalled create, and counts a failed create's time", async () => {
    const writes = new FsSmallWrites(
      true,
      steppingClock(() => STALLED_WRITE_MS * 2),
    );
    await writeFile(join(dir, "taken"), "x");
    await expect(writes.write(join(dir, "taken"), byte, 0o600)).rejects.toMatchObject({ code: "EEXIST" });
    expect(writes.offloaded).toBe(OFFLOADED_WRITES);
  });

  it("writes on the calling thread while the disk is fast: the bytes are there when write() returns", async () => {
    const writes = new FsSmallWrites(true, () => 0);
    const path = join(dir, "now");
    const pending = writes.write(path, new Uint8Array([9]), 0o600);
    // No await in between: only a write made on this thread can be complete here.
    expect([...readFileSync(path)]).toEqual([9]);
    await pending;
  });

  it("never writes on the calling thread when told not to (fsStore smallWrites: thread-pool)", async () => {
    const writes = new FsSmallWrites(false, () => 0);
    const path = join(dir, "later");
    const pending = writes.write(path, new Uint8Array([9]), 0o600);
    // The thread pool may have created the file by now, but its write waits for this thread.
    let seen: number[] = [];
    try {
      seen = [...readFileSync(path)];
    } catch (error) {
      expect(error).toMatchObject({ code: "ENOENT" });
    }
    expect(seen).toEqual([]);
    await pending;
    expect([...readFileSync(path)]).toEqual([9]);
    expect(writes.offloaded).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("fsStore smallWrites", () => {
  it('stores small files on the thread pool with "thread-pool", and refuses other values', async () => {
    const store = fsStore(dir, { smallWrites: "thread-pool", sweepInterval: 0 });
    const file = await store.put(new TextEncoder().encode("small"), { scope: "s", name: "a.txt" });
    expect(file.size).toBe(5);
    const path = await store.localPath("s", file.id);
    expect(await readFile(path as string, "utf8")).toBe("small");
    for (const bad of ["sync", true, null]) {
      expect(() => fsStore(dir, { smallWrites: bad as never })).toThrow(
        expect.objectContaining({ code: "INVALID_OPTION", message: expect.stringContaining("smallWrites") }),
      );
    }
  });
});
