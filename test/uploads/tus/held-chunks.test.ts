/**
 * How many of a tus body's socket chunks the `PATCH` path keeps alive at once (issue 43, Session 20
 * in docs/performance.md). V8 promotes an `ArrayBuffer` still referenced when a scavenge runs, and a
 * promoted one is freed only by a full collection; every body chunk held across a scavenge moves a
 * server closer to back-to-back full GCs. The raw pipe holds the chunk being written and the one or
 * two the socket delivered after the pipe paused the body; the tus path from the request to the
 * staging file holds those and the staging sink's 1 MiB `writev` batch, no more (before Session 20
 * a metering `Transform` with 1 MiB on each side sat in front of the sink as well).
 *
 * Measured without timing, as `test/uploads/held-chunks.test.ts` does: the staging file's writes are
 * made slow (each waits 2 ms, so every stage upstream fills up), and at each write a full
 * collection runs and the body chunks the server's request handed out that are still alive are
 * counted (`WeakRef`s on what `IncomingMessage` pushes; `gc` from `--expose-gc` set at run time).
 */
import { createHash } from "node:crypto";
import type * as FsPromises from "node:fs/promises";
import { request as httpRequest, IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";

/** Called at each write to a tus staging file, before the write runs. */
let onStagingWrite: () => void = () => {};
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const slow =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      onStagingWrite();
      return new Promise<R>((resolve, reject) => setTimeout(() => write(...args).then(resolve, reject), 2));
    };
  const open = async (...args: Parameters<typeof actual.open>) => {
    const handle = await actual.open(...args);
    if (!String(args[0]).includes("/staging/")) return handle;
    return new Proxy(handle, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        const bound = value.bind(target);
        return key === "write" || key === "writev" ? slow(bound) : bound;
      },
    });
  };
  return { ...actual, open, default: { ...actual, open } };
});

const { startTus } = await import("./harness.js");
type Harness = Awaited<ReturnType<typeof startTus>>;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const KiB = 1024;
const CHUNK = 64 * KiB;
const CHUNKS = 96;
const SIZE = CHUNK * CHUNKS;
let harness: Harness | undefined;
const push = IncomingMessage.prototype.push;

afterEach(async () => {
  IncomingMessage.prototype.push = push;
  onStagingWrite = () => {};
  await harness?.close();
  harness = undefined;
});

/** Sends `SIZE` bytes in 64 KiB pieces as one `PATCH` at offset 0; resolves with the status. */
function patch(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "PATCH",
        headers: {
          "tus-resumable": "1.0.0",
          "upload-offset": "0",
          "content-type": "application/offset+octet-stream",
          "content-length": String(body.length),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    Readable.from(
      (function* () {
        for (let at = 0; at < body.length; at += CHUNK) yield body.subarray(at, at + CHUNK);
      })(),
    ).pipe(req);
  });
}

describe("chunks a tus PATCH keeps alive", () => {
  it("the fs staging path holds no more than its sink's 1 MiB batch and the raw pipe's chunks while a write runs", async () => {
    harness = await startTus();
    const endpoint = await harness.endpoint("scope-a", { maxBytes: SIZE });
    const created = await fetch(endpoint, {
      method: "POST",
      headers: { "tus-resumable": "1.0.0", "upload-length": String(SIZE) },
    });
    const url = created.headers.get("location") as string;
    const body = Buffer.alloc(SIZE);
    for (let i = 0; i < CHUNKS; i++) body.fill(i % 251, i * CHUNK, (i + 1) * CHUNK);

    // Every body piece the server's requests push (the client's answers are a few bytes).
    const refs: WeakRef<Buffer>[] = [];
    IncomingMessage.prototype.push = function (
      this: IncomingMessage,
      chunk: unknown,
      encoding?: BufferEncoding,
    ) {
      if (Buffer.isBuffer(chunk) && chunk.length >= 1024) refs.push(new WeakRef(chunk));
      return push.call(this, chunk, encoding);
    };
    let writes = 0;
    let most = 0;
    onStagingWrite = () => {
      // A few writes once the path is running (a full collection each).
      writes++;
      if (writes < 8 || writes > 40) return;
      gc();
      most = Math.max(most, refs.filter((ref) => ref.deref() !== undefined).length);
    };

    expect(await patch(url, body)).toBe(204);
    IncomingMessage.prototype.push = push;
    expect(writes).toBeGreaterThan(8);
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.size).toBe(SIZE);
    expect(harness.stored[0]?.sha256).toBe(createHash("sha256").update(body).digest("hex"));
    // The staging's sink gathers up to 1 MiB (16 chunks) into each `writev`: fewer, smaller writes
    // cost more CPU than they save (docs/performance.md, Session 20). Past it, no more than the raw
    // pipe: the chunk the request delivered after the path paused it and what the socket's read
    // had parsed already. 17 here; before Session 20, 47 (the metering `Transform`'s 1 MiB on top).
    expect(most).toBeLessThanOrEqual(16 + 3);
  }, 30_000);
});
