/**
 * The offset after a cut (issue 41 item 3): a raw socket sends a `PATCH` with part of its body and is
 * destroyed; every byte the server read is staged and counted, except at most what the request
 * read the server had not handed on when the connection went (`IN_FLIGHT_BOUND`, see docs/limits.md). The next
 * `HEAD` answers at least the bytes sent minus that bound, and the upload resumed from there is
 * byte-exact.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { startTus, type TusHarness } from "./harness.js";
import { patchAndCut } from "./raw-socket.js";

/**
 * One socket read (Node's HTTP parser hands a body on in reads of at most 64 KiB): the most a cut may
 * lose of what reached the server (measured: 0 bytes over every cut here, see docs/limits.md).
 */
const IN_FLIGHT_BOUND = 64 * 1024;
const TUS = { "tus-resumable": "1.0.0" };

let harness: TusHarness;
afterEach(async () => {
  await harness.close();
});

/**
 * The offset the server settles on after a cut: `HEAD` until it reaches `atLeast` (5 s at most; a
 * `HEAD` may come before the server even took up the cut `PATCH`), each answer at most `cut`.
 */
async function settledOffset(url: string, atLeast: number, cut: number): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const head = await fetch(url, { method: "HEAD", headers: TUS });
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get("upload-offset"));
    expect(offset).toBeLessThanOrEqual(cut);
    if (offset >= atLeast || Date.now() > deadline) return offset;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("tus offset after a cut", () => {
  it("a socket destroyed at known offsets: HEAD is within one in-flight chunk of the bytes sent", async () => {
    harness = await startTus();
    const size = 12_000_000;
    const bytes = randomBytes(size);
    const endpoint = await harness.endpoint("scope-a", { maxBytes: size });
    const created = await fetch(endpoint, {
      method: "POST",
      headers: { ...TUS, "upload-length": String(size) },
    });
    const url = created.headers.get("location") as string;
    let offset = 0;
    for (const cut of [5_000_000, 5_000_001, 8_123_457, 11_999_999]) {
      await patchAndCut(url, offset, size - offset, bytes.subarray(offset, cut));
      const now = await settledOffset(url, cut - IN_FLIGHT_BOUND, cut);
      expect(now).toBeGreaterThanOrEqual(cut - IN_FLIGHT_BOUND);
      offset = now;
    }
    const last = await fetch(url, {
      method: "PATCH",
      headers: { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": String(offset) },
      body: bytes.subarray(offset),
    });
    expect(last.status).toBe(204);
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
  }, 60_000);
});
