import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fsStore } from "../../src/storage/fs-store.js";
import { close } from "../http/server-helpers.js";
import { errorCodeIn, type RoutesServer, slowClient, startRoutes } from "./http-attack-helpers.js";

// Issue 21, item 8: a client dribbling 64 bytes every 2 s is never idle for `idleTimeout`, so before
// `minUploadRate` it held an upload, a staging file and its descriptors until `uploadTimeout` (15 min).

let running: RoutesServer | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (running) await close(running.server);
  running = undefined;
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  dir = undefined;
});

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

async function openFds(): Promise<number> {
  return (await readdir("/proc/self/fd")).length;
}

async function ticketPath(server: RoutesServer): Promise<string> {
  const { url } = await server.minter.mint({ scope: "s1", fileId: "t1", action: "upload", singleUse: true });
  const parsed = new URL(url);
  return `${parsed.pathname}?filename=slow.bin`;
}

function head(origin: string, path: string, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: ${new URL(origin).host}\r\nContent-Length: ${length}\r\n\r\n`;
}

describe.skipIf(process.platform !== "linux")("minimum upload rate (real socket, real filesystem)", () => {
  it("64 bytes every 2 s is cut off with 408 TRANSFER_TOO_SLOW; staging file and fds are freed; the ticket still works", async () => {
    dir = await mkdtemp(join(tmpdir(), "mfb-min-rate-"));
    // The idle clock (30 s) never fires for this client: only the rate can end it.
    running = await startRoutes({
      store: fsStore(dir),
      idleTimeout: "30s",
      minUploadRate: { bytesPerSecond: 1024, window: "3s" },
    });
    const path = await ticketPath(running);
    const fdsBefore = await openFds();
    const result = await slowClient(running.origin, head(running.origin, path, 1024 * 1024), {
      chunk: Buffer.alloc(64, 0x61),
      everyMs: 2000,
      maxMs: 10_000,
    });
    expect(result.response).toContain("TRANSFER_TOO_SLOW");
    expect(result.status).toBe(408);
    expect(errorCodeIn(result.response)).toBe("TRANSFER_TOO_SLOW");
    expect(result.response).toContain("less than 1024 bytes per second");
    // Cut at the end of the first window, long before the idle timeout or the 10 s the client would go on.
    expect(result.closedAfterMs as number).toBeGreaterThanOrEqual(2500);
    expect(result.closedAfterMs as number).toBeLessThan(8000);
    expect(result.sent).toBeLessThanOrEqual(64 * 3);
    // Nothing stored, no staging file left, the descriptors are back.
    expect((await running.store.list("s1")).files).toEqual([]);
    expect(await filesUnder(dir)).toEqual([]);
    expect(await openFds()).toBeLessThanOrEqual(fdsBefore);
    // The single-use ticket was not used up by the cut-off attempt.
    const retry = await fetch(`${running.origin}${path}`, { method: "POST", body: "now in one go" });
    expect(retry.status).toBe(201);
    expect((await running.store.list("s1")).files.map((file) => file.name)).toEqual(["slow.bin"]);
  });

  it("an upload faster than the minimum rate is stored whole", async () => {
    dir = await mkdtemp(join(tmpdir(), "mfb-min-rate-"));
    running = await startRoutes({
      store: fsStore(dir),
      minUploadRate: { bytesPerSecond: 1024, window: "300ms" },
    });
    const path = await ticketPath(running);
    const content = randomBytes(48 * 1024);
    // 4 KiB every 100 ms = 40 KiB/s, for about 1.2 s: four windows, each well above 1 KiB/s.
    const result = await slowClient(running.origin, head(running.origin, path, content.length), {
      chunk: content.subarray(0, 4096),
      everyMs: 100,
      stopAfter: content.length - 1,
      maxMs: 2500,
    });
    expect(result.sent).toBe(content.length);
    expect(result.status).toBe(201);
    const [file] = (await running.store.list("s1")).files;
    expect(file?.size).toBe(content.length);
  });

  it("refuses a bad minUploadRate, and false turns it off", async () => {
    await expect(startRoutes({ minUploadRate: { bytesPerSecond: 0 } })).rejects.toMatchObject({
      code: "INVALID_OPTION",
    });
    running = await startRoutes({ minUploadRate: false, idleTimeout: "5s" });
    const path = await ticketPath(running);
    const result = await slowClient(running.origin, head(running.origin, path, 3), {
      chunk: "x",
      everyMs: 400,
      maxMs: 3000,
    });
    expect(result.status).toBe(201);
  });
});
