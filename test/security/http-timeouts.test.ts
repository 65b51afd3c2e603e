import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { close } from "../http/server-helpers.js";
import { codeOf } from "../support/helpers.js";
import {
  errorCodeIn,
  headerIn,
  type RoutesServer,
  SECRET,
  slowClient,
  startRoutes,
} from "./http-attack-helpers.js";

// Attacks: hold a connection open with an upload that sends nothing (or one byte now and then), or
// with a download the client never reads. Each ends after the configured idle or total timeout.

const MiB = 1024 * 1024;

let running: RoutesServer | undefined;

afterEach(async () => {
  if (running) await close(running.server);
  running = undefined;
});

function uploadHead(origin: string, path: string, headers: Record<string, string | number>): string {
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${new URL(origin).host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

async function ticketPath(server: RoutesServer, fileId = "t1"): Promise<string> {
  const { url } = await server.minter.mint({ scope: "s1", fileId, action: "upload", singleUse: true });
  const parsed = new URL(url);
  return `${parsed.pathname}?filename=slow.bin`;
}

describe("upload timeouts", () => {
  it("an upload that stalls is answered 408 REQUEST_TIMEOUT after idleTimeout, and the ticket still works", async () => {
    running = await startRoutes({ idleTimeout: "200ms" });
    const path = await ticketPath(running);
    const started = Date.now();
    // 1 KiB, then nothing, while announcing 1 MiB.
    const result = await slowClient(
      running.origin,
      uploadHead(running.origin, path, { "Content-Length": MiB }),
      {
        chunk: Buffer.alloc(1024, 1),
        stopAfter: 1024,
        maxMs: 3000,
      },
    );
    expect(result.status).toBe(408);
    expect(errorCodeIn(result.response)).toBe("REQUEST_TIMEOUT");
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs as number).toBeGreaterThanOrEqual(150);
    expect(result.endedAfterMs as number).toBeLessThan(1500);
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await running.store.list("s1")).files).toEqual([]);
    // A timed-out upload does not use the single-use ticket up.
    const retry = await fetch(`${running.origin}${path}`, { method: "POST", body: "now in one go" });
    expect(retry.status).toBe(201);
    expect((await running.store.list("s1")).files.map((file) => file.name)).toEqual(["slow.bin"]);
  });

  it("a trickle (one byte every 20 ms, never idle) is cut at uploadTimeout", async () => {
    // The idle clock (2 s) cannot be what ends it before 1.8 s: only the total (300 ms) can.
    running = await startRoutes({ idleTimeout: "2s", uploadTimeout: "300ms" });
    const path = await ticketPath(running);
    const result = await slowClient(
      running.origin,
      uploadHead(running.origin, path, { "Content-Length": MiB }),
      {
        chunk: Buffer.from("x"),
        everyMs: 20,
        maxMs: 3000,
      },
    );
    expect(result.status).toBe(408);
    expect(errorCodeIn(result.response)).toBe("REQUEST_TIMEOUT");
    expect(result.endedAfterMs as number).toBeGreaterThanOrEqual(250);
    expect(result.endedAfterMs as number).toBeLessThan(1800);
    expect(result.sent).toBeLessThan(200);
    expect((await running.store.list("s1")).files).toEqual([]);
  });

  it("a multipart upload that never reaches a file part times out too", async () => {
    running = await startRoutes({ idleTimeout: "200ms" });
    const { url } = await running.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const boundary = "----stall";
    const result = await slowClient(
      running.origin,
      uploadHead(running.origin, new URL(url).pathname, {
        "Content-Type": `multipart/form-data; boundary=${boundary}`,
        "Content-Length": MiB,
      }) + `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello`,
      { stopAfter: 0, maxMs: 3000 },
    );
    expect(result.status).toBe(408);
    expect(errorCodeIn(result.response)).toBe("REQUEST_TIMEOUT");
    expect(result.endedAfterMs as number).toBeLessThan(1500);
  });

  it("a steady upload slower than nothing-for-idleTimeout but quick overall succeeds", async () => {
    running = await startRoutes({ idleTimeout: "1s" });
    const path = await ticketPath(running);
    const content = randomBytes(64 * 1024);
    const result = await slowClient(
      running.origin,
      uploadHead(running.origin, path, { "Content-Length": content.length }),
      { chunk: content.subarray(0, 8 * 1024), everyMs: 50, stopAfter: content.length - 1, maxMs: 1500 },
    );
    expect(result.status).toBe(201);
    expect((await running.store.list("s1")).files).toHaveLength(1);
  });
});

describe("download timeouts", () => {
  /** Resolves when the server closes its side of the (first) connection, with the time it took. */
  function serverClosed(server: RoutesServer, started: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const watch = () => {
        const socket = server.sockets[0];
        if (!socket) return void setTimeout(watch, 5);
        if (socket.destroyed) return resolve(Date.now() - started);
        socket.once("close", () => resolve(Date.now() - started));
      };
      watch();
      setTimeout(() => reject(new Error("the server kept the connection open")), 5000).unref();
    });
  }

  function serverBytesWritten(server: RoutesServer): number {
    return server.sockets.reduce((total, socket) => total + socket.bytesWritten, 0);
  }

  function timeoutCodes(server: RoutesServer): string[] {
    return server.errors.map((error) => (error as { code?: string }).code ?? "NO_CODE");
  }

  it("a download the client does not read is ended after idleTimeout", async () => {
    running = await startRoutes({ idleTimeout: "200ms" });
    const file = await running.store.put(randomBytes(32 * MiB), { scope: "s1", name: "big.bin" });
    const { url } = await running.minter.downloadUrl(file);
    const started = Date.now();
    let received = 0;
    const req = httpRequest(url, (res) => {
      res.once("data", (chunk: Buffer) => {
        received += chunk.length;
        res.pause(); // and never read again
      });
      res.on("error", () => {});
    });
    req.on("error", () => {});
    req.end();
    // The kernel buffers take a few MiB, then the transfer stalls; 200 ms later the server gives up.
    expect(await serverClosed(running, started)).toBeLessThan(3000);
    expect(serverBytesWritten(running)).toBeLessThan(32 * MiB);
    expect(received).toBeLessThan(32 * MiB);
    expect(timeoutCodes(running)).toContain("REQUEST_TIMEOUT");
    req.destroy();
  });

  it("a download that takes longer than downloadTimeout is ended (no onDownload)", async () => {
    const downloads: unknown[] = [];
    running = await startRoutes({
      downloadTimeout: "400ms",
      onDownload: (event) => void downloads.push(event),
    });
    const file = await running.store.put(randomBytes(16 * MiB), { scope: "s1", name: "big.bin" });
    const { url } = await running.minter.downloadUrl(file);
    const started = Date.now();
    const req = httpRequest(url, (res) => {
      // Reads a little, often: never idle, but far too slow for 16 MiB in 400 ms.
      res.on("data", () => {
        res.pause();
        setTimeout(() => res.resume(), 20);
      });
      res.on("error", () => {});
    });
    req.on("error", () => {});
    req.end();
    const closedAfter = await serverClosed(running, started);
    expect(closedAfter).toBeGreaterThanOrEqual(350);
    expect(closedAfter).toBeLessThan(2000);
    expect(serverBytesWritten(running)).toBeLessThan(16 * MiB);
    expect(timeoutCodes(running)).toContain("REQUEST_TIMEOUT");
    req.destroy();
    expect(downloads).toEqual([]);
  });

  it("web-standard callers: an unread download body errors with REQUEST_TIMEOUT", async () => {
    const store = memoryStore({ sweepInterval: 0 });
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1", state: memoryState() });
    const routes = createFileRoutes({ store, minter, idleTimeout: "100ms" });
    const file = await store.put(randomBytes(4 * MiB), { scope: "s1", name: "big.bin" });
    const { url } = await minter.downloadUrl(file);
    const response = (await routes(new Request(url))) as Response;
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // one chunk, then the caller stalls
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      await codeOf(async () => {
        for (;;) if ((await reader.read()).done) return;
      }),
    ).toBe("REQUEST_TIMEOUT");
  });
});

describe("timeout options", () => {
  it("refuses bad values with INVALID_OPTION naming the option", () => {
    const store = memoryStore({ sweepInterval: 0 });
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1" });
    for (const option of ["idleTimeout", "uploadTimeout", "downloadTimeout"]) {
      for (const value of [-1, "soon", "30y", 60 * 60 * 24 * 30]) {
        let caught: unknown;
        try {
          createFileRoutes({ store, minter, [option]: value });
        } catch (error) {
          caught = error;
        }
        expect(caught).toMatchObject({ code: "INVALID_OPTION", data: { option } });
      }
    }
    expect(() => createFileRoutes({ store, minter, idleTimeout: 0, uploadTimeout: "0s" })).not.toThrow();
  });
});
