import { randomBytes } from "node:crypto";
import { truncate } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { openFilesIn } from "../support/open-files.js";
import { useDownloadServer } from "./download-server.js";

// fsStore downloads through the Node adapter are read from the open file into reused buffers
// (src/node/send-file-range.ts): every byte of whole files and ranges, onDownload once, the file
// closed afterwards, and a file shorter than its record cuts the response instead of hanging.

const MiB = 1024 * 1024;

const live = useDownloadServer("mfb-send-range-");

function get(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: Buffer; complete: boolean }>((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete: res.complete }),
      );
      res.on("error", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete: false }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** Open files in the test's folder: the download's own. */
const openFds = () => openFilesIn(live.dir);
/**
 * The open file count once it is back to `before`, or after 2 s: a file is closed on the thread
 * pool after the response ends, which under load can take longer than a fixed short wait.
 */
async function openFdsSettled(before: number): Promise<number> {
  for (let i = 0; i < 100 && openFds() !== before; i++) await new Promise((r) => setTimeout(r, 20));
  return openFds();
}

describe.runIf(process.platform === "linux")("fsStore downloads through the Node adapter", () => {
  it("sends whole files and ranges byte for byte, across read-buffer boundaries", async () => {
    const content = randomBytes(3 * MiB + 12_345);
    const file = await live.store.put(content, { scope: "s1", name: "big.bin" });
    const before = openFds();
    for (let i = 0; i < 3; i++) {
      const whole = await get((await live.minter.downloadUrl(file)).url);
      expect(whole.status).toBe(200);
      expect(whole.body.equals(content)).toBe(true);
    }
    const ranges: Array<[number, number]> = [
      [0, 0],
      [262_143, 262_144],
      [100_000, 2_900_000],
      [content.length - 5, content.length - 1],
    ];
    for (const [start, end] of ranges) {
      const part = await get((await live.minter.downloadUrl(file)).url, { range: `bytes=${start}-${end}` });
      expect(part.status).toBe(206);
      expect(part.body.equals(content.subarray(start, end + 1))).toBe(true);
    }
    expect(await openFdsSettled(before)).toBe(before); // every download closed its file
    expect(live.downloads.map((event) => event.bytes)).toEqual([
      content.length,
      content.length,
      content.length,
      ...ranges.map(([start, end]) => end - start + 1),
    ]);
  });

  it("a data file shorter than its record cuts the response (no hang, no onDownload), and closes the file", async () => {
    const content = randomBytes(2 * MiB);
    const file = await live.store.put(content, { scope: "s1", name: "cut.bin" });
    const path = await live.store.localPath?.("s1", file.id);
    await truncate(path as string, MiB);
    const before = openFds();
    const reply = await get((await live.minter.downloadUrl(file)).url);
    expect(reply.complete).toBe(false);
    expect(reply.body.length).toBeLessThan(content.length);
    expect(reply.body.equals(content.subarray(0, reply.body.length))).toBe(true);
    expect(await openFdsSettled(before)).toBe(before);
    expect(live.downloads).toEqual([]);
  });

  it("a client that goes away mid-download leaves no file open", async () => {
    const file = await live.store.put(randomBytes(16 * MiB), { scope: "s1", name: "gone.bin" });
    const before = openFds();
    const { url } = await live.minter.downloadUrl(file);
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(url, { agent: false }, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", () => resolve());
      req.on("close", () => resolve());
      req.end();
      setTimeout(() => reject(new Error("no bytes came")), 10_000).unref();
    });
    expect(await openFdsSettled(before)).toBe(before);
    expect(live.downloads).toEqual([]);
  });
});
