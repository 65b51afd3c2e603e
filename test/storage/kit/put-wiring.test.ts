/**
 * What a streamed fsStore put hangs on its source and its file's writer for the whole upload (issue
 * 43, Session 20 in docs/performance.md). Every listener, closure and record the wiring makes at the
 * start of a put lives until the put ends, so across a big upload's scavenges V8 promotes all of
 * them: request-lifetime objects are most of what a server promotes per upload beyond the raw pipe.
 * `stream.pipeline` wires two streams with an `AbortController`, an end-of-stream watcher per stream
 * (each with its own listeners and callbacks), `pipe`'s listeners and a promise around it all; the
 * put needs a `data` / `end` / `error` / `close` listener on the source and an `error` / `finish` /
 * `close` / `drain` listener on the writer.
 *
 * Counted without timing: the listeners on the source and on the writer while the bytes flow.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fsStore } from "../../../src/storage/fs-store.js";
import { sha256 } from "../../support/helpers.js";

const CHUNK = 64 * 1024;
const CHUNKS = 24;

/** Every listener `emitter` holds, over all its events. */
function listeners(emitter: Readable | Writable): number {
  return emitter.eventNames().reduce((sum, name) => sum + emitter.listenerCount(name), 0);
}

/** A source of `CHUNKS` chunks that records its own listener count when chunk `at` is read. */
function countingSource(at: number): { source: Readable; seen: number[]; body: Buffer } {
  const body = Buffer.alloc(CHUNK * CHUNKS);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31 + (i >> 16)) & 0xff;
  const seen: number[] = [];
  let i = 0;
  const source = new Readable({
    read() {
      if (i === at) seen.push(listeners(this));
      if (i === CHUNKS) this.push(null);
      else this.push(body.subarray(i * CHUNK, ++i * CHUNK));
    },
  });
  return { source, seen, body };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "put-wiring-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("streamed fsStore put: what the wiring holds for the whole upload", () => {
  it("holds at most four listeners on the source while the bytes flow", async () => {
    const store = fsStore(dir, { sweepInterval: 0 });
    const { source, seen, body } = countingSource(12);
    const file = await store.put(source, { scope: "s", name: "big.bin" });
    expect(file.size).toBe(body.length);
    expect(file.sha256).toBe(sha256(body));
    expect(seen).toHaveLength(1);
    // data, end, error, close (stream.pipeline: 11 on this source).
    expect(seen[0]).toBeLessThanOrEqual(4);
  });

  it("holds at most four listeners on the source with an abort signal given too", async () => {
    const store = fsStore(dir, { sweepInterval: 0 });
    const { source, seen, body } = countingSource(12);
    const controller = new AbortController();
    const file = await store.put(source, { scope: "s", name: "big.bin", signal: controller.signal });
    expect(file.sha256).toBe(sha256(body));
    // data, end, error, close: the signal is watched beside the streams, not through them.
    expect(seen[0]).toBeLessThanOrEqual(4);
  });

  // Chunks 0 and 1 fall in `readSmall`'s read-ahead; chunk 8 is midway through the streamed write.
  it.each([0, 1, 8])(
    "fails with ABORTED, the source destroyed and nothing listed, when the signal fires at chunk %i",
    async (at) => {
      const { body } = countingSource(-1);
      const controller = new AbortController();
      let n = 0;
      const source = new Readable({
        read() {
          if (n === at) controller.abort(new Error("stop"));
          if (n === CHUNKS) this.push(null);
          else this.push(body.subarray(n * CHUNK, ++n * CHUNK));
        },
      });
      const store = fsStore(dir, { sweepInterval: 0 });
      await expect(
        store.put(source, { scope: "s", name: "big.bin", signal: controller.signal }),
      ).rejects.toMatchObject({ code: "ABORTED" });
      expect(source.destroyed).toBe(true);
      expect((await store.list("s", {})).files).toHaveLength(0);
    },
  );

  it("holds at most four listeners on the file's writer while the bytes flow", async () => {
    const store = fsStore(dir, { sweepInterval: 0 });
    const { body } = countingSource(-1);
    let writer: Writable | undefined;
    let seen = -1;
    let n = 0;
    // The writer is what the source is piped into: the source sees it through `write` calls.
    const source = new Readable({
      read() {
        if (n === CHUNKS) {
          this.push(null);
          return;
        }
        this.push(body.subarray(n * CHUNK, ++n * CHUNK));
      },
    });
    const write = Writable.prototype.write;
    Writable.prototype.write = function (this: Writable, ...args: unknown[]) {
      if (n === 12 && writer === undefined) {
        writer = this;
        seen = listeners(this);
      }
      return (write as (...rest: unknown[]) => boolean).apply(this, args);
    } as Writable["write"];
    try {
      const file = await store.put(source, { scope: "s", name: "big.bin" });
      expect(file.sha256).toBe(sha256(body));
    } finally {
      Writable.prototype.write = write;
    }
    // The file's writer (the digest is taken from the file as it fills, so it is of the stored bytes).
    expect(writer?.constructor.name).toBe("FileSink");
    // error, finish, close, drain (stream.pipeline: 9 on this writer).
    expect(seen).toBeLessThanOrEqual(4);
  });

  it("a source error fails the put with the source's FileBridgeError code intact", async () => {
    const { FileBridgeError } = await import("../../../src/errors/file-bridge-error.js");
    let n = 0;
    const source = new Readable({
      read() {
        if (n === 6) {
          this.destroy(new FileBridgeError("FILE_TOO_LARGE", "too big"));
          return;
        }
        this.push(Buffer.alloc(CHUNK, n++));
      },
    });
    const store = fsStore(dir, { sweepInterval: 0 });
    await expect(store.put(source, { scope: "s", name: "big.bin" })).rejects.toMatchObject({
      code: "FILE_TOO_LARGE",
    });
    expect((await store.list("s", {})).files).toHaveLength(0);
  });

  it("a source that closes before its end fails the put with STORAGE_ERROR", async () => {
    let n = 0;
    const source = new Readable({
      read() {
        if (n === 6) {
          this.destroy();
          return;
        }
        this.push(Buffer.alloc(CHUNK, n++));
      },
    });
    const store = fsStore(dir, { sweepInterval: 0 });
    await expect(store.put(source, { scope: "s", name: "big.bin" })).rejects.toMatchObject({
      code: "STORAGE_ERROR",
    });
  });
});
