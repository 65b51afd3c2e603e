import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { watchedDownload } from "../../src/http/timeouts.js";

// A download's source behind the watchdog: exact bytes in pieces of at most 64 KiB, each handed on
// only when the consumer asks; the source destroyed with the download; its failures passed on.

const SLICE = 64 * 1024;

/** Every piece as handed on (`data` events: one per push, as a socket pipe sees them). */
function drain(stream: Readable): Promise<Buffer[]> {
  const pieces: Buffer[] = [];
  stream.on("data", (piece: Buffer) => pieces.push(piece));
  return new Promise((resolve, reject) => {
    stream.once("end", () => resolve(pieces));
    stream.once("error", reject);
  });
}

describe("watchedDownload", () => {
  it("hands on every byte, in order, in pieces of at most 64 KiB (large and small source chunks)", async () => {
    const chunks = [
      randomBytes(1024 * 1024 + 5),
      randomBytes(10),
      randomBytes(SLICE),
      randomBytes(SLICE + 1),
    ];
    const watched = watchedDownload(Readable.from(chunks, { objectMode: false }), 60_000, 60_000);
    const pieces = await drain(watched);
    expect(Buffer.concat(pieces).equals(Buffer.concat(chunks))).toBe(true);
    expect(Math.max(...pieces.map((piece) => piece.length))).toBe(SLICE);
    expect(pieces.length).toBe(17 + 1 + 1 + 2);
  });

  it("an empty source ends the download at once", async () => {
    const watched = watchedDownload(Readable.from([], { objectMode: false }), 60_000, 60_000);
    expect(await drain(watched)).toEqual([]);
  });

  it("a consumer that stops reading is cut off after idleTimeout, and the source is destroyed", async () => {
    const source = new PassThrough();
    source.end(randomBytes(4 * 1024 * 1024));
    const watched = watchedDownload(source, 150, 60_000);
    watched.read(0); // the consumer asks once, then never again
    const [error] = (await once(watched, "error")) as [{ code?: string; data?: { kind?: string } }];
    expect(error.code).toBe("REQUEST_TIMEOUT");
    expect(error.data?.kind).toBe("idle");
    expect(source.destroyed).toBe(true);
  });

  it("a slow consumer that keeps taking pieces of one large chunk is not cut off", async () => {
    const bytes = randomBytes(16 * SLICE);
    const watched = watchedDownload(Readable.from([bytes], { objectMode: false }), 200, 60_000);
    const pieces: Buffer[] = [];
    for await (const piece of watched) {
      pieces.push(piece as Buffer);
      await new Promise((resolve) => setTimeout(resolve, 40)); // 16 × 40 ms: longer than idle in all
    }
    expect(Buffer.concat(pieces).equals(bytes)).toBe(true);
  });

  it("destroying the download destroys the source", async () => {
    const source = new PassThrough();
    source.write(randomBytes(SLICE));
    const watched = watchedDownload(source, 60_000, 60_000);
    watched.destroy();
    await once(watched, "close");
    expect(source.destroyed).toBe(true);
  });

  it("a source error reaches the consumer", async () => {
    const source = new PassThrough();
    const watched = watchedDownload(source, 60_000, 60_000);
    const failed = drain(watched);
    source.write(randomBytes(100));
    source.destroy(Object.assign(new Error("disk gone"), { code: "EIO" }));
    await expect(failed).rejects.toMatchObject({ code: "EIO" });
  });

  it("a source that closes before its end fails the download (premature close)", async () => {
    const source = new Readable({ read() {} });
    const watched = watchedDownload(source, 60_000, 60_000);
    const failed = drain(watched);
    source.push(randomBytes(100));
    setTimeout(() => source.destroy(), 10);
    await expect(failed).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
  });

  it("both timeouts off: the source itself is the download", () => {
    const source = new PassThrough();
    expect(watchedDownload(source, 0, 0)).toBe(source);
  });
});
