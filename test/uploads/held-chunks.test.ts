/**
 * How many of a big upload's body chunks the write path keeps alive at once (issue 43, Session 19 in
 * docs/performance.md). V8 promotes an `ArrayBuffer` still referenced when a scavenge runs, and a
 * promoted one is freed only by a full collection; every body chunk held across a scavenge moves a
 * server closer to back-to-back full GCs. The raw pipe (`pipeline(req, createWriteStream(path))`)
 * holds one chunk (the one being written) and the one the socket delivered next; the path from a
 * request body to fsStore must hold no more. Before Session 19 a `PassThrough` (the socket's guard)
 * and the put's meter sat between the body and the file's writer, each holding chunks of its own.
 *
 * Measured without timing: the disk is made slow (each `writev` waits 2 ms, so every stage upstream
 * fills up), and at each `writev` a full collection runs and the chunks the body handed out that
 * are still alive are counted (`WeakRef`s; `gc` from `--expose-gc` set at run time).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

/** Called at each `writev` of the sink, before the write runs. */
let onWritev: () => void = () => {};
vi.mock("node:fs", async (importOriginal) =>
  (await import("../storage/kit/slow-writev.js")).slowWritev(await importOriginal(), () => {
    onWritev();
    return 2;
  }),
);

const { fsStore } = await import("../../src/storage/fs-store.js");
const { stageRaw } = await import("../../src/uploads/upload-staging.js");

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const KiB = 1024;
const CHUNK = 64 * KiB;
const CHUNKS = 96;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-held-chunks-"));
});

afterEach(async () => {
  onWritev = () => {};
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/**
 * A request-like body of {@link CHUNKS} fresh 64 KiB buffers (each its own `ArrayBuffer`, as socket
 * reads are), produced on demand, and the most of them alive at any `writev` of the sink.
 */
function trackedBody(): { body: Readable; expected: Buffer; mostAlive: () => number } {
  const refs: WeakRef<Buffer>[] = [];
  const expected = Buffer.alloc(CHUNK * CHUNKS);
  let next = 0;
  let most = 0;
  const body = new Readable({
    read() {
      if (next === CHUNKS) {
        this.push(null);
        return;
      }
      const chunk = Buffer.alloc(CHUNK, next % 251);
      chunk.copy(expected, next * CHUNK);
      refs.push(new WeakRef(chunk));
      next++;
      this.push(chunk);
    },
  });
  let writes = 0;
  onWritev = () => {
    // A few writes once the path is running (a full collection each: tens of milliseconds here).
    writes++;
    if (writes < 4 || writes > 16) return;
    gc();
    const alive = refs.filter((ref) => ref.deref() !== undefined).length;
    most = Math.max(most, alive);
  };
  return { body, expected, mostAlive: () => most };
}

describe("chunks a big upload's write path keeps alive", () => {
  it("fsStore.put holds at most two of its source's chunks while a write runs", async () => {
    const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
    const { body, expected, mostAlive } = trackedBody();
    const file = await store.put(body, { scope: "s", name: "big.bin" });
    expect(file.size).toBe(CHUNK * CHUNKS);
    expect((await readFile((await store.localPath("s", file.id)) as string)).equals(expected)).toBe(true);
    // One chunk waiting for a slot of the write ring, one in the source's own buffer.
    expect(mostAlive()).toBeLessThanOrEqual(2);
  });

  it("a raw upload body staged on fsStore holds at most three chunks while a write runs", async () => {
    const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
    const { body, expected, mostAlive } = trackedBody();
    const controller = new AbortController();
    const request = {
      url: new URL("http://127.0.0.1/files/upload/t"),
      header: (name: string) => (name === "content-type" ? "application/octet-stream" : null),
    } as unknown as Parameters<typeof stageRaw>[1];
    const part = await stageRaw(
      { store },
      request,
      body,
      { scope: "s", maxBytes: 1024 * 1024 * 1024, maxFiles: 1, ttlMs: 60_000, kind: "upload" },
      controller,
      "big.bin",
    );
    const file = await part.staged.commit();
    expect(file.size).toBe(CHUNK * CHUNKS);
    expect((await readFile((await store.localPath("s", file.id)) as string)).equals(expected)).toBe(true);
    // As above, plus the one chunk the body delivered after the path asked it to pause.
    expect(mostAlive()).toBeLessThanOrEqual(3);
  });
});
