/**
 * A tus client that loses its connection at chosen offsets, for resume tests on any staging: one
 * upload of `size` bytes (a random block of an odd length, repeated, so no chunk boundary lines up
 * with it), cut at `cuts` offsets, resumed each time from the offset `HEAD` answers, like a tus client.
 */
import { createHash, randomBytes, randomInt } from "node:crypto";
import { request } from "node:http";
import { expect } from "vitest";

const TUS = { "tus-resumable": "1.0.0" };
const BLOCK = randomBytes(1024 * 1024 + 7);

/** Bytes `[start, end)` of the upload. */
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

/** The sha256 of the whole upload of `size` bytes. */
export function uploadSha256(size: number): string {
  const hash = createHash("sha256");
  for (let at = 0; at < size; at += 8 * 1024 * 1024)
    hash.update(slice(at, Math.min(size, at + 8 * 1024 * 1024)));
  return hash.digest("hex");
}

/**
 * One PATCH from `offset` to the end, its socket destroyed once `cutAt` bytes of the file went out
 * (no cut: sent whole). Resolves with the status, or 0 when cut.
 */
function patchUntil(url: string, size: number, offset: number, cutAt: number | undefined): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: "PATCH",
      headers: {
        ...TUS,
        "content-type": "application/offset+octet-stream",
        "upload-offset": String(offset),
        "content-length": String(size - offset),
      },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", () => resolve(0));
    let at = offset;
    const pump = () => {
      while (at < size) {
        if (cutAt !== undefined && at >= cutAt) {
          req.destroy();
          return;
        }
        const end = Math.min(size, at + 1024 * 1024, cutAt ?? size);
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

/**
 * Uploads `size` bytes to the tus upload at `urls[0]`, cut at `cutCount` random offsets and resumed
 * each time; the n-th attempt goes to `urls[n % urls.length]` (several replicas' URLs of one upload).
 * The offset `HEAD` answers must never pass the cut nor go back. Resolves with the resumes made.
 */
export async function uploadWithCuts(
  urls: readonly string[],
  size: number,
  cutCount: number,
): Promise<number> {
  const cuts = Array.from({ length: cutCount }, () => randomInt(1, size)).sort((a, b) => a - b);
  let offset = 0;
  let resumes = 0;
  let turn = 0;
  const next = () => urls[turn++ % urls.length] as string;
  for (const cut of cuts) {
    if (cut <= offset) continue;
    // The server records what it wrote once it sees the socket go; until then the upload is
    // locked (423) or its old offset answers 409: retried from HEAD's offset like a tus client.
    for (let attempt = 0; attempt < 1000; attempt++) {
      const url = next();
      const status = await patchUntil(url, size, offset, cut);
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
    const url = next();
    const status = await patchUntil(url, size, offset, undefined);
    if (status === 204) break;
    expect([409, 423]).toContain(status);
    offset = await offsetOf(url);
  }
  return resumes;
}
