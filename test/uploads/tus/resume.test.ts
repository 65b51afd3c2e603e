/**
 * Resume after dropped connections: a 256 MiB upload whose connection is cut at 10 random offsets,
 * resumed each time from the offset HEAD answers; the stored sha256 is exact and no staging is left.
 */
import { createHash, randomBytes, randomInt } from "node:crypto";
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startTus, type TusHarness } from "./harness.js";

const SIZE = 256 * 1024 * 1024;
const TUS = { "tus-resumable": "1.0.0" };
/** The bytes: a random block of an odd length, repeated, so no chunk boundary lines up with it. */
const BLOCK = randomBytes(1024 * 1024 + 7);

function slice(start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(end - start);
  for (let at = start; at < end; ) {
    const from = at % BLOCK.length;
    const take = Math.min(BLOCK.length - from, end - at);
    BLOCK.copy(out, at - start, from, from + take);
    at += take;
  }
  return out;
}

function expectedSha256(): string {
  const hash = createHash("sha256");
  for (let at = 0; at < SIZE; at += 8 * 1024 * 1024)
    hash.update(slice(at, Math.min(SIZE, at + 8 * 1024 * 1024)));
  return hash.digest("hex");
}

/**
 * One PATCH from `offset` to the end, its socket destroyed once `cutAt` bytes of the file went out
 * (no cut: sent whole). Resolves with the status, or 0 when cut.
 */
function patchUntil(url: string, offset: number, cutAt: number | undefined): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: "PATCH",
      headers: {
        ...TUS,
        "content-type": "application/offset+octet-stream",
        "upload-offset": String(offset),
        "content-length": String(SIZE - offset),
      },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    let at = offset;
    const pump = () => {
      while (at < SIZE) {
        if (cutAt !== undefined && at >= cutAt) {
          req.destroy();
          return;
        }
        const end = Math.min(SIZE, at + 1024 * 1024, cutAt ?? SIZE);
        const more = req.write(slice(at, end));
        at = end;
        if (!more) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

async function offsetOf(url: string): Promise<number> {
  const head = await fetch(url, { method: "HEAD", headers: TUS });
  expect(head.status).toBe(200);
  return Number(head.headers.get("upload-offset"));
}

let harness: TusHarness;
afterEach(async () => {
  await harness.close();
});

describe("tus resume after dropped connections", () => {
  it("cut at 10 random offsets of 256 MiB, resumed each time: exact sha256, no staging left", async () => {
    harness = await startTus();
    const endpoint = await harness.endpoint("scope-a", { maxBytes: SIZE });
    const created = await fetch(endpoint, {
      method: "POST",
      headers: { ...TUS, "upload-length": String(SIZE) },
    });
    const url = created.headers.get("location") as string;
    const cuts = Array.from({ length: 10 }, () => randomInt(1, SIZE)).sort((a, b) => a - b);
    let offset = 0;
    let resumes = 0;
    for (const cut of cuts) {
      if (cut <= offset) continue;
      // The server records what it wrote once it sees the socket go; until then the upload is
      // locked (423) or its old offset answers 409: retried from HEAD's offset like a tus client.
      for (let attempt = 0; attempt < 1000; attempt++) {
        const status = await patchUntil(url, offset, cut);
        const now = await offsetOf(url);
        expect(now).toBeLessThanOrEqual(cut);
        expect(now).toBeGreaterThanOrEqual(offset);
        offset = now;
        if (status === 0) break;
        expect([409, 423]).toContain(status);
      }
      resumes++;
    }
    for (;;) {
      const status = await patchUntil(url, offset, undefined);
      if (status === 204) break;
      expect([409, 423]).toContain(status);
      offset = await offsetOf(url);
    }
    expect(resumes).toBeGreaterThanOrEqual(8);
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.size).toBe(SIZE);
    expect(harness.stored[0]?.sha256).toBe(expectedSha256());
    expect(await harness.stagingFiles()).toEqual([]);
  }, 240_000);
});
