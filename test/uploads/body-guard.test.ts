import { PassThrough, Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { BodyGuard } from "../../src/uploads/body-guard.js";

/** A body that hands out `count` chunks of `size` bytes (byte value = chunk index) on demand. */
function bodyOf(count: number, size: number): Readable {
  let next = 0;
  return new Readable({
    read() {
      if (next === count) this.push(null);
      else this.push(Buffer.alloc(size, next++));
    },
  });
}

describe("BodyGuard", () => {
  it("passes every byte of the body on, in order, and ends with it", async () => {
    const body = bodyOf(40, 1000);
    const got: Buffer[] = [];
    await pipeline(
      new BodyGuard(body),
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          got.push(chunk);
          setImmediate(callback); // a slow reader: the body has to wait
        },
      }),
    );
    const all = Buffer.concat(got);
    expect(all.byteLength).toBe(40_000);
    for (let i = 0; i < 40; i++) expect(all[i * 1000]).toBe(i);
  });

  it("holds at most one chunk while nobody reads it, and pauses the body", async () => {
    const body = new PassThrough();
    const guard = new BodyGuard(body);
    for (let i = 0; i < 8; i++) body.write(Buffer.alloc(64 * 1024, i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(guard.readableLength).toBeLessThanOrEqual(64 * 1024);
    expect(body.isPaused()).toBe(true);
    // The rest waits in the body; reading the guard takes it all, in order.
    body.end();
    const all = Buffer.concat(await guard.toArray());
    expect(all.byteLength).toBe(8 * 64 * 1024);
    for (let i = 0; i < 8; i++) expect(all[i * 64 * 1024]).toBe(i);
  });

  it("when destroyed (a failed put) lets go of the body without destroying it", async () => {
    const body = bodyOf(100, 1000);
    const guard = new BodyGuard(body);
    const failed = pipeline(
      guard,
      new Writable({
        write(_chunk, _encoding, callback) {
          callback(Object.assign(new Error("too large"), { code: "FILE_TOO_LARGE" }));
        },
      }),
    );
    await expect(failed).rejects.toMatchObject({ code: "FILE_TOO_LARGE" });
    expect(guard.destroyed).toBe(true);
    expect(body.destroyed).toBe(false);
    expect(body.isPaused()).toBe(true);
    expect(body.listenerCount("data")).toBe(0);
    // The body is still readable to its end by whoever owns it (the server, for the next request).
    let rest = 0;
    for await (const chunk of body) rest += (chunk as Buffer).byteLength;
    expect(rest).toBeGreaterThan(0);
  });

  it("a chunk its measure refuses fails the reader with that error and is not passed on", async () => {
    const body = bodyOf(10, 1000);
    let seen = 0;
    const guard = new BodyGuard(body, (chunk) => {
      seen += chunk.byteLength;
      return seen > 5000 ? Object.assign(new Error("past the length"), { code: "FILE_TOO_LARGE" }) : null;
    });
    const got: Buffer[] = [];
    const failed = pipeline(
      guard,
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          got.push(chunk);
          callback();
        },
      }),
    );
    await expect(failed).rejects.toMatchObject({ code: "FILE_TOO_LARGE" });
    expect(Buffer.concat(got).byteLength).toBe(5000);
    expect(body.destroyed).toBe(false);
    expect(body.listenerCount("data")).toBe(0);
  });

  it("finish() ends it with what the body still buffered (a client gone mid-body)", async () => {
    const body = new PassThrough();
    const guard = new BodyGuard(body);
    for (let i = 0; i < 4; i++) body.write(Buffer.alloc(64 * 1024, i));
    await new Promise((resolve) => setImmediate(resolve));
    expect(guard.finish()).toBe(true);
    expect(guard.finish()).toBe(false);
    // Every byte the body held reaches the reader, in order, and the stream ends without its `end`.
    const all = Buffer.concat(await guard.toArray());
    expect(all.byteLength).toBe(4 * 64 * 1024);
    for (let i = 0; i < 4; i++) expect(all[i * 64 * 1024]).toBe(i);
    expect(body.listenerCount("data")).toBe(0);
  });
});
