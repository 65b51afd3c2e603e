import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HashWorker } from "../../../src/storage/kit/sha256-stream.js";
import { fsTusStaging, type TusStaging } from "../../../src/uploads/tus/fs-staging.js";
import { RunningHashes, type RunningSha256 } from "../../../src/uploads/tus/running-hash.js";

const MiB = 1024 * 1024;
let dir: string;
let staging: TusStaging;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-running-hash-"));
  staging = fsTusStaging(dir);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

function hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** One tus body: written at `offset` through the staging, the hash seeing each stored chunk. */
async function body(id: string, offset: number, bytes: Buffer, hash: RunningSha256): Promise<void> {
  const source = Readable.from(
    Array.from({ length: Math.ceil(bytes.length / (256 * 1024)) }, (_, i) =>
      bytes.subarray(i * 256 * 1024, (i + 1) * 256 * 1024),
    ),
  );
  const { written, error } = await staging.write(id, offset, source, (chunk) => hash.update(chunk));
  expect(error).toBeUndefined();
  expect(written).toBe(bytes.length);
}

describe("RunningHashes on a staging with a local file", () => {
  it("hashes body after body by reading the staged file in the worker: no byte is posted to it", async () => {
    const post = vi.spyOn(HashWorker.prototype, "post");
    const bytes = randomBytes(9 * MiB + 123);
    const cuts = [0, 3 * MiB + 1, 3 * MiB + 1, 8 * MiB, bytes.length];
    const hashes = new RunningHashes();
    await staging.create("u1", Date.now() + 60_000);
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [start, end] = [cuts[i] as number, cuts[i + 1] as number];
      const hash = await hashes.take(staging, "u1", start);
      await body("u1", start, bytes.subarray(start, end), hash);
      hashes.keep("u1", end, hash);
    }
    expect(await hashes.digest(staging, "u1", bytes.length)).toBe(hex(bytes));
    expect(post.mock.calls.length).toBeGreaterThan(0);
    for (const [, message] of post.mock.calls) expect(message.data).toBeUndefined();
  });

  it("a body arriving where no hash is kept (another replica, a restart) hashes the staged prefix first", async () => {
    const bytes = randomBytes(6 * MiB + 7);
    await staging.create("u2", Date.now() + 60_000);
    const first = new RunningHashes();
    const one = await first.take(staging, "u2", 0);
    await body("u2", 0, bytes.subarray(0, 4 * MiB + 3), one);
    one.dispose(); // this process goes away
    const prefix = 4 * MiB + 3;
    const other = new RunningHashes();
    const hash = await other.take(staging, "u2", prefix);
    await body("u2", prefix, bytes.subarray(prefix), hash);
    other.keep("u2", bytes.length, hash);
    expect(await other.digest(staging, "u2", bytes.length)).toBe(hex(bytes));
    // A kept hash that covers another offset is not used: the prefix is hashed again.
    const hashes = new RunningHashes();
    const short = await hashes.take(staging, "u2", MiB);
    hashes.keep("u2", MiB, short);
    expect(await hashes.digest(staging, "u2", bytes.length)).toBe(hex(bytes));
    const head = await hashes.take(staging, "u2", 2 * MiB);
    expect(await head.digest()).toBe(hex(bytes.subarray(0, 2 * MiB)));
  });
});
