import { createHash, randomBytes } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { streamPut } from "../../../src/storage/kit/put-pipeline.js";
import { planPut } from "../../../src/storage/kit/put-plan.js";
import { Sha256Stream } from "../../../src/storage/kit/sha256-stream.js";
import { codeOf } from "../../../src/testing/support.js";

const MiB = 1024 * 1024;

function hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function hashInChunks(bytes: Uint8Array, chunk: number): Promise<string> {
  const hash = new Sha256Stream();
  for (let at = 0; at < bytes.byteLength; at += chunk) await hash.update(bytes.subarray(at, at + chunk));
  return hash.digest();
}

describe("Sha256Stream (sha256 off the main thread past one batch)", () => {
  it("gives the exact digest below, at and across batch boundaries, whatever the chunking", async () => {
    const bytes = randomBytes(6 * MiB + 12_345);
    for (const size of [0, 1, MiB - 1, MiB, MiB + 1, 2 * MiB, bytes.byteLength]) {
      const part = bytes.subarray(0, size);
      for (const chunk of [1000, 64 * 1024, 3 * MiB + 7]) {
        expect(await hashInChunks(part, chunk)).toBe(hex(part));
      }
    }
  });

  it("leaves the caller's chunks untouched (it copies, never transfers them)", async () => {
    const chunk = randomBytes(3 * MiB);
    const copy = Buffer.from(chunk);
    const hash = new Sha256Stream();
    await hash.update(chunk);
    expect(await hash.digest()).toBe(hex(copy));
    expect(chunk.byteLength).toBe(3 * MiB);
    expect(Buffer.compare(chunk, copy)).toBe(0);
  });

  it("many hashes at once each get their own digest", async () => {
    const bodies = Array.from({ length: 6 }, () => randomBytes(2 * MiB + 100));
    const digests = await Promise.all(bodies.map((body) => hashInChunks(body, 256 * 1024)));
    expect(digests).toEqual(bodies.map(hex));
  });

  it("a disposed hash frees its job; later hashes still work", async () => {
    const hash = new Sha256Stream();
    await hash.update(randomBytes(3 * MiB));
    hash.dispose();
    const body = randomBytes(2 * MiB);
    expect(await hashInChunks(body, MiB)).toBe(hex(body));
  });

  it("a multi-MiB put keeps its digest exact: the right sha256 passes, a wrong one is DIGEST_MISMATCH", async () => {
    const body = randomBytes(5 * MiB + 3);
    const sink = () =>
      new Writable({
        write(_chunk, _encoding, callback) {
          callback();
        },
      });
    const chunks = () => Readable.from([body.subarray(0, 100), body.subarray(100)]);
    const good = planPut({ scope: "s", name: "a.bin", expectedSha256: hex(body) }, Date.now());
    const measure = await streamPut(chunks(), good, sink());
    expect(measure).toMatchObject({ size: body.byteLength, sha256: hex(body) });
    const bad = planPut({ scope: "s", name: "a.bin", expectedSha256: "0".repeat(64) }, Date.now());
    expect(await codeOf(streamPut(chunks(), bad, sink()))).toBe("DIGEST_MISMATCH");
  });
});
