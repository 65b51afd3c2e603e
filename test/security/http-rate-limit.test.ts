import { afterEach, describe, expect, it } from "vitest";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import { createFileRoutes, type UploadRateLimitInfo } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore, PutOptions, PutSource, StagedFile } from "../../src/storage/types.js";
import { close } from "../http/server-helpers.js";
import {
  errorCodeIn,
  headerIn,
  type RoutesServer,
  SECRET,
  serverBytesRead,
  slowClient,
  startRoutes,
} from "./http-attack-helpers.js";

// Attack: a client with a valid upload ticket (or a trusted direct-upload caller) sends upload after
// upload. The `rateLimit` hook sees each one, with its verified scope, before any body byte is read;
// `false` answers 429 RATE_LIMITED and the connection is closed without reading the body.

const running: RoutesServer[] = [];

afterEach(async () => {
  for (const server of running.splice(0)) await close(server.server);
});

function countingStore(): { store: FileStore; stages: () => number } {
  const inner = memoryStore({ sweepInterval: 0 });
  let count = 0;
  const store: FileStore = {
    ...inner,
    driver: inner.driver,
    stage(source: PutSource, options: PutOptions): Promise<StagedFile> {
      count++;
      return inner.stage(source, options);
    },
  };
  return { store, stages: () => count };
}

/** At most `limit` uploads per scope. */
function perScope(limit: number, seen: UploadRateLimitInfo[]) {
  const counts = new Map<string, number>();
  return async (info: UploadRateLimitInfo) => {
    seen.push(info);
    const count = (counts.get(info.scope) ?? 0) + 1;
    counts.set(info.scope, count);
    return count <= limit;
  };
}

async function code(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

describe("rateLimit hook for uploads", () => {
  it("refuses the upload over the limit with 429 before staging; other scopes are not affected", async () => {
    const { store, stages } = countingStore();
    const seen: UploadRateLimitInfo[] = [];
    const server = await startRoutes({ store, rateLimit: perScope(2, seen) });
    running.push(server);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { url } = await server.minter.mint({
        scope: "s1",
        fileId: `t${i}`,
        action: "upload",
        singleUse: true,
      });
      const response = await fetch(`${url}?filename=f${i}.txt`, { method: "POST", body: `body ${i}` });
      statuses.push(response.status);
      if (response.status === 429) expect(await code(response)).toBe("RATE_LIMITED");
    }
    expect(statuses).toEqual([201, 201, 429]);
    expect(stages()).toBe(2);
    expect(seen.map(({ action, route, scope, ticketId }) => ({ action, route, scope, ticketId }))).toEqual([
      { action: "upload", route: "ticket", scope: "s1", ticketId: "t0" },
      { action: "upload", route: "ticket", scope: "s1", ticketId: "t1" },
      { action: "upload", route: "ticket", scope: "s1", ticketId: "t2" },
    ]);
    expect(seen[0]?.request).toBeInstanceOf(Request);
    const { url } = await server.minter.mint({
      scope: "s2",
      fileId: "u1",
      action: "upload",
      singleUse: true,
    });
    expect((await fetch(url, { method: "POST", body: "other scope" })).status).toBe(201);
  });

  it("a refused upload announcing 3 GiB: 429, Connection: close, the body is not read, the ticket stays usable", async () => {
    let allow = false;
    const server = await startRoutes({ rateLimit: () => allow });
    running.push(server);
    const { url } = await server.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const path = `${new URL(url).pathname}?filename=big.bin`;
    const head = `POST ${path} HTTP/1.1\r\nHost: ${new URL(server.origin).host}\r\nContent-Length: ${3 * 1024 ** 3}\r\n\r\n`;
    const result = await slowClient(server.origin, head);
    expect(result.status).toBe(429);
    expect(errorCodeIn(result.response)).toBe("RATE_LIMITED");
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs as number).toBeLessThan(1000);
    expect(serverBytesRead(server.sockets)).toBeLessThan(8 * 1024 * 1024);
    allow = true;
    expect((await fetch(url.concat("?filename=later.txt"), { method: "POST", body: "later" })).status).toBe(
      201,
    );
  });

  it("is not asked for a request whose token does not verify (no spending another scope's budget)", async () => {
    const seen: UploadRateLimitInfo[] = [];
    const server = await startRoutes({ rateLimit: perScope(1, seen) });
    running.push(server);
    const response = await fetch(`${server.origin}/files/upload/forged.token`, { method: "POST", body: "x" });
    expect(response.status).toBe(401);
    expect(seen).toEqual([]);
  });

  it("covers the direct route, after authorize", async () => {
    const seen: UploadRateLimitInfo[] = [];
    const server = await startRoutes({
      authorize: (request) => request.headers.get("x-key") === "k",
      rateLimit: perScope(1, seen),
    });
    running.push(server);
    const url = `${server.origin}/files/scopes/chat-1/files/a.txt`;
    expect((await fetch(url, { method: "PUT", body: "no key" })).status).toBe(403);
    expect(seen).toEqual([]);
    expect((await fetch(url, { method: "PUT", headers: { "x-key": "k" }, body: "one" })).status).toBe(201);
    const second = await fetch(url, { method: "PUT", headers: { "x-key": "k" }, body: "two" });
    expect(second.status).toBe(429);
    expect(seen.map(({ route, scope, ticketId }) => ({ route, scope, ticketId }))).toEqual([
      { route: "direct", scope: "chat-1", ticketId: undefined },
      { route: "direct", scope: "chat-1", ticketId: undefined },
    ]);
  });

  it("a FileBridgeError thrown by the hook answers with its status; any other error is a 500 for onError", async () => {
    let mode: "forbid" | "crash" = "forbid";
    const server = await startRoutes({
      rateLimit: () => {
        if (mode === "forbid") throw new FileBridgeError("FORBIDDEN", "blocked client");
        throw new Error("limiter down");
      },
    });
    running.push(server);
    const { url } = await server.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const forbidden = await fetch(url, { method: "POST", body: "x" });
    expect(forbidden.status).toBe(403);
    expect(server.errors).toEqual([]);
    mode = "crash";
    const crashed = await fetch(url, { method: "POST", body: "x" });
    expect(crashed.status).toBe(500);
    expect(server.errors).toHaveLength(1);
  });

  it("must be a function", () => {
    const store = memoryStore({ sweepInterval: 0 });
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1" });
    expect(() => createFileRoutes({ store, minter, rateLimit: 5 as never })).toThrowError(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "rateLimit" } }),
    );
  });
});
