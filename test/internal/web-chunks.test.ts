/**
 * `largeChunks` (issue 46, Session 19): a BYOB read fills a buffer handed back with `release` instead
 * of a fresh one, and a stream made by `streamOfChunks` is read through its own reads (so a store
 * reading the routes' watched body can hand its chunks back). workerd's BYOB reader has
 * `readAtLeast`, Node's has not: a byte stream standing in for workerd's is made here, its reads
 * transferring the buffer they fill as workerd's do.
 */
import { describe, expect, it } from "vitest";
import { type ChunkReads, largeChunks, streamOfChunks } from "../../src/internal/web-chunks.js";

/** A byte stream of `total` bytes whose BYOB reader has `readAtLeast`; records each buffer a read was given. */
function workerdLikeBody(total: number, piece: number) {
  const given: ArrayBuffer[] = [];
  const givenBytes: number[] = [];
  let sent = 0;
  const reader = {
    async readAtLeast(_min: number, view: Uint8Array) {
      given.push(view.buffer as ArrayBuffer);
      givenBytes.push(view.byteLength);
      if (view.byteLength === 0) throw new TypeError("a zero-length view");
      const { byteOffset, byteLength } = view;
      // As workerd: the buffer is transferred, the chunk is a view of the moved buffer.
      const moved = structuredClone(view.buffer, { transfer: [view.buffer as ArrayBuffer] });
      const n = Math.min(piece, byteLength, total - sent);
      new Uint8Array(moved, byteOffset, n).fill(sent % 251);
      sent += n;
      return { done: n === 0, value: new Uint8Array(moved, byteOffset, n) };
    },
    releaseLock() {},
    cancel: async () => {},
  };
  const body = {
    getReader: (options?: { mode?: string }) => {
      if (options?.mode !== "byob") throw new TypeError("byob only here");
      return reader;
    },
  } as unknown as ReadableStream<Uint8Array>;
  return { body, given, givenBytes };
}

describe("largeChunks", () => {
  it("a BYOB read fills a released chunk's buffer again; without a release every read has a fresh one", async () => {
    const size = 64 * 1024;
    const { body, given, givenBytes } = workerdLikeBody(10 * size, size);
    const chunks = largeChunks(body, size, 1);
    const first = (await chunks.read()) as Uint8Array;
    const second = (await chunks.read()) as Uint8Array;
    expect(first.byteLength).toBe(size);
    expect(given).toHaveLength(2);
    expect(given[1]).not.toBe(first.buffer);
    chunks.release(first);
    // Twice the same chunk: its buffer is read into once, not by two reads.
    chunks.release(first);
    const third = (await chunks.read()) as Uint8Array;
    expect(given[2]).toBe(first.buffer);
    expect(third.byteLength).toBe(size);
    const fourth = (await chunks.read()) as Uint8Array;
    expect(given[3]).not.toBe(first.buffer);
    expect(fourth.byteLength).toBe(size);
    // A chunk that does not start a buffer of `size` bytes is not taken.
    chunks.release(second.subarray(1));
    chunks.release(new Uint8Array(size));
    await chunks.read();
    expect([first.buffer, second.buffer, third.buffer, fourth.buffer]).not.toContain(given[4]);
    // Every read was given a whole buffer of `size` bytes.
    expect(givenBytes).toEqual(new Array(5).fill(size));
  });

  it("a released chunk that no read gave is left alone: never read into (which would detach it)", async () => {
    const size = 64 * 1024;
    const { body, given } = workerdLikeBody(10 * size, size);
    const chunks = largeChunks(body, size, 1);
    const first = (await chunks.read()) as Uint8Array;
    // The caller's own bytes, of exactly the reads' size: not a chunk these reads gave.
    const foreign = new Uint8Array(size).fill(7);
    chunks.release(foreign);
    await chunks.read();
    expect(given[1] === foreign.buffer).toBe(false);
    expect(foreign.byteLength).toBe(size); // not transferred away
    expect(foreign.every((byte) => byte === 7)).toBe(true);
    // A chunk of these reads, released after it was read into again (its buffer moved on), is ignored.
    chunks.release(first);
    const third = (await chunks.read()) as Uint8Array;
    expect(given[2] === first.buffer).toBe(true);
    chunks.release(first); // stale: `first`'s buffer was transferred to `third`
    chunks.release(third);
    await chunks.read();
    expect(given[3] === third.buffer).toBe(true);
  });

  it("release is a no-op for a stream read in its own chunks (they are not our buffers)", async () => {
    const own = [new Uint8Array(16).fill(1), new Uint8Array(16).fill(2)];
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of own) controller.enqueue(chunk);
        controller.close();
      },
    });
    const chunks = largeChunks(source, 16);
    const first = (await chunks.read()) as Uint8Array;
    chunks.release(first);
    expect(first).toBe(own[0]);
    expect(await chunks.read()).toBe(own[1]);
    expect(await chunks.read()).toBeUndefined();
    expect([...first]).toEqual(new Array(16).fill(1));
  });

  it("a stream of chunks is read through its own reads: locked, chunks as they are, releases passed on", async () => {
    const released: Uint8Array[] = [];
    const parts = [new Uint8Array([1, 2]), new Uint8Array([3])];
    const reads: ChunkReads = {
      read: async () => parts.shift(),
      release: (chunk) => released.push(chunk),
      cancel: async () => {},
    };
    const stream = streamOfChunks(reads);
    const chunks = largeChunks(stream, 1024);
    expect(stream.locked).toBe(true);
    // A second reader is refused, as with any locked stream.
    expect(() => largeChunks(stream, 1024)).toThrow(TypeError);
    const first = (await chunks.read()) as Uint8Array;
    expect([...first]).toEqual([1, 2]);
    chunks.release(first);
    expect(released).toEqual([first]);
    expect([...((await chunks.read()) as Uint8Array)]).toEqual([3]);
    expect(await chunks.read()).toBeUndefined();
  });

  it("a stream of chunks read as a plain stream gives the same chunks, and its cancel reaches the reads", async () => {
    let cancelled: unknown;
    const parts = [new Uint8Array([7]), new Uint8Array([8, 9])];
    const stream = streamOfChunks({
      read: async () => parts.shift(),
      release: () => {},
      cancel: async (reason) => {
        cancelled = reason;
      },
    });
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    expect([...bytes]).toEqual([7, 8, 9]);
    const other = streamOfChunks({
      read: async () => new Uint8Array(1),
      release: () => {},
      cancel: async (r) => {
        cancelled = r;
      },
    });
    await other.cancel("gone");
    expect(cancelled).toBe("gone");
  });
});
