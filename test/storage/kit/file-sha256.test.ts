import { createHash, randomBytes } from "node:crypto";
import { openSync, readdirSync, readFileSync } from "node:fs";
import { appendFile, mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileSha256 } from "../../../src/storage/kit/file-sha256.js";
import { FileSink } from "../../../src/storage/kit/file-sink.js";
import { streamPutToFile } from "../../../src/storage/kit/put-pipeline.js";
import { planPut } from "../../../src/storage/kit/put-plan.js";
import { readSmall } from "../../../src/storage/kit/put-source.js";
import { codeOf } from "../../../src/testing/support.js";

const MiB = 1024 * 1024;
let dir: string;
let n = 0;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-file-sha256-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

function hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.byteLength; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

/** Writes `chunks` through a FileSink into a fresh file, feeding a FileSha256 like fsStore does. */
async function writeHashed(chunks: Uint8Array[]): Promise<{ path: string; hash: FileSha256; size: number }> {
  const path = join(dir, `f${n++}`);
  const hash = new FileSha256(path);
  const sink = new FileSink(openSync(path, "wx"), (bytes) => hash.written(bytes));
  let size = 0;
  async function* fed(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) {
      hash.update(chunk);
      size += chunk.byteLength;
      yield chunk;
    }
  }
  await pipeline(Readable.from(fed()), sink);
  expect(sink.written).toBe(size);
  return { path, hash, size };
}

describe("FileSha256 + FileSink (sha256 read back from the file by the worker)", () => {
  it("gives the exact digest of what the file holds, in place and in the worker, however chunked", async () => {
    const bytes = randomBytes(9 * MiB + 4321);
    for (const size of [0, 1, MiB, MiB + 1, 5 * MiB - 3, bytes.byteLength]) {
      const part = bytes.subarray(0, size);
      for (const chunk of [64 * 1024, 3 * MiB + 7]) {
        const { path, hash } = await writeHashed(chunked(part, chunk));
        expect(await hash.digest(size)).toBe(hex(part));
        expect(hex(await readFile(path))).toBe(hex(part));
      }
    }
  });

  // Linux's nice value is per thread: the worker lowers only its own, so a waking socket or file
  // thread of the upload is not kept waiting behind the hashing (docs/performance.md, Session 18).
  it.skipIf(process.platform !== "linux")(
    "the hashing worker runs below the process's priority; no other thread's priority changes",
    async () => {
      const nice = (tid: string) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
      };
      const base = getPriority();
      const bytes = randomBytes(3 * MiB);
      const { hash } = await writeHashed(chunked(bytes, 64 * 1024));
      expect(await hash.digest(bytes.byteLength)).toBe(hex(bytes));
      const lowered = readdirSync("/proc/self/task")
        .map(nice)
        .filter((value) => value !== base);
      // The worker (one per module instance: more than one when test files share a process).
      expect(lowered.length).toBeGreaterThan(0);
      expect(new Set(lowered)).toEqual(new Set([Math.min(19, base + 10)]));
      expect(nice(String(process.pid))).toBe(base);
      expect(getPriority()).toBe(base);
    },
  );

  it("many files at once each get their own digest", async () => {
    const bodies = Array.from({ length: 5 }, () => randomBytes(3 * MiB + 17));
    const written = await Promise.all(bodies.map((body) => writeHashed(chunked(body, 256 * 1024))));
    expect(await Promise.all(written.map(({ hash, size }) => hash.digest(size)))).toEqual(bodies.map(hex));
  });

  it("rejects, never a wrong digest, when the file holds fewer bytes than reported", async () => {
    const body = randomBytes(6 * MiB);
    const { path, hash, size } = await writeHashed(chunked(body, MiB));
    await truncate(path, 2 * MiB);
    await expect(hash.digest(size)).rejects.toThrow(/shorter/);
  });

  it("startAt(): a file whose first bytes were staged before is read from the start by the worker", async () => {
    const body = randomBytes(7 * MiB + 11);
    for (const prefix of [0, 1, MiB - 1, 3 * MiB + 5]) {
      const path = join(dir, `f${n++}`);
      await writeFile(path, body.subarray(0, prefix));
      const hash = new FileSha256(path);
      expect(hash.startAt(prefix)).toBe(true);
      let size = prefix;
      for (const chunk of chunked(body.subarray(prefix), 512 * 1024)) {
        await appendFile(path, chunk); // stored, then seen: as the tus staging's observer does
        hash.update(chunk);
        size += chunk.byteLength;
        hash.written(size);
      }
      expect(await hash.digest(size)).toBe(hex(body));
    }
    const late = new FileSha256(join(dir, "late"));
    late.update(new Uint8Array(1));
    expect(() => late.startAt(5)).toThrow(/before any other call/);
  });

  it("a disposed hash frees its job; later hashes still work", async () => {
    const first = await writeHashed(chunked(randomBytes(4 * MiB), MiB));
    first.hash.dispose();
    const body = randomBytes(3 * MiB);
    const { hash } = await writeHashed(chunked(body, MiB));
    expect(await hash.digest(body.byteLength)).toBe(hex(body));
  });

  it("streamPutToFile checks the file's digest: the right sha256 passes, a wrong one is DIGEST_MISMATCH", async () => {
    const body = randomBytes(4 * MiB + 5);
    const put = (expectedSha256: string) => {
      const path = join(dir, `p${n++}`);
      const hash = new FileSha256(path);
      const plan = planPut({ scope: "s", name: "a.bin", expectedSha256 }, Date.now());
      return streamPutToFile(
        Readable.from(chunked(body, 100_000)),
        plan,
        openSync(path, "wx"),
        undefined,
        hash,
      );
    };
    expect(await put(hex(body))).toMatchObject({ size: body.byteLength, sha256: hex(body) });
    expect(await codeOf(put("0".repeat(64)))).toBe("DIGEST_MISMATCH");
  });
});

describe("readSmall", () => {
  it("returns a small source whole, and a larger one as the same stream with every byte in order", async () => {
    const small = randomBytes(1000);
    const whole = await readSmall(Readable.from(chunked(small, 300)), 4096);
    expect("bytes" in whole && Buffer.from(whole.bytes).equals(small)).toBe(true);
    const big = randomBytes(50_000);
    const source = Readable.from(chunked(big, 3000));
    const read = await readSmall(source, 4096);
    if (!("stream" in read)) throw new Error("expected a stream");
    expect(read.stream).toBe(source);
    const back: Buffer[] = [];
    for await (const chunk of read.stream) back.push(chunk as Buffer);
    expect(Buffer.concat(back).equals(big)).toBe(true);
  });

  it("refuses chunks that are not bytes with INVALID_INPUT and a cut source with an error", async () => {
    expect(await codeOf(readSmall(Readable.from(["text"]), 4096))).toBe("INVALID_INPUT");
    const cut = new Readable({ read() {} });
    cut.push(randomBytes(100));
    const reading = readSmall(cut, 4096);
    cut.destroy();
    expect(await codeOf(reading)).toBe("STORAGE_ERROR");
    const controller = new AbortController();
    const aborted = readSmall(new Readable({ read() {} }), 4096, controller.signal);
    controller.abort();
    expect(await codeOf(aborted)).toBe("ABORTED");
  });
});
