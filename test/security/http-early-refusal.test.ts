import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { close } from "../http/server-helpers.js";
import {
  errorCodeIn,
  headerIn,
  type RoutesServer,
  serverBytesRead,
  slowClient,
  startRoutes,
} from "./http-attack-helpers.js";

// Attack: announce a body of 3 GiB, get refused at once (401, 404, 413), and keep feeding the body.
// Before the fix the Node adapter read (and threw away) the whole announced body to keep the
// connection alive: gigabytes per attacker. Now the refusal carries `Connection: close` and the server
// ends the socket: it reads only what was already in flight.

const GiB3 = 3 * 1024 * 1024 * 1024;
const MiB = 1024 * 1024;

let running: RoutesServer | undefined;

afterEach(async () => {
  if (running) await close(running.server);
  running = undefined;
});

function head(path: string, origin: string, headers: Record<string, string | number>): string {
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${new URL(origin).host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** A 64 KiB chunk framed for `Transfer-Encoding: chunked`. */
const CHUNKED = Buffer.concat([
  Buffer.from(`${(64 * 1024).toString(16)}\r\n`),
  Buffer.alloc(64 * 1024, 0x62),
  Buffer.from("\r\n"),
]);

describe("an early refusal stops reading the request body", () => {
  it("401: a bad token with 3 GiB announced is answered and the socket ended", async () => {
    running = await startRoutes({ maxBytes: MiB });
    const result = await slowClient(
      running.origin,
      head("/files/upload/not-a-real-token", running.origin, { "Content-Length": GiB3 }),
    );
    expect(result.status).toBe(401);
    expect(errorCodeIn(result.response)).toBe("INVALID_TOKEN");
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs).not.toBeNull();
    expect(result.endedAfterMs as number).toBeLessThan(1000);
    expect(result.closedAfterMs as number).toBeLessThan(2500);
    expect(serverBytesRead(running.sockets)).toBeLessThan(8 * MiB);
  });

  it("413: a declared length over the cap is refused before the body and the socket ended", async () => {
    running = await startRoutes({ maxBytes: MiB });
    const { url } = await running.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const result = await slowClient(
      running.origin,
      head(`${new URL(url).pathname}?filename=big.bin`, running.origin, { "Content-Length": GiB3 }),
    );
    expect(result.status).toBe(413);
    expect(errorCodeIn(result.response)).toBe("FILE_TOO_LARGE");
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs as number).toBeLessThan(1000);
    expect(result.closedAfterMs as number).toBeLessThan(2500);
    expect(serverBytesRead(running.sockets)).toBeLessThan(8 * MiB);
    expect((await running.store.list("s1")).files).toEqual([]);
  });

  it("413: a chunked body that goes over the cap mid-stream ends the socket", async () => {
    running = await startRoutes({ maxBytes: MiB });
    const { url } = await running.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const result = await slowClient(
      running.origin,
      head(`${new URL(url).pathname}?filename=big.bin`, running.origin, {
        "Transfer-Encoding": "chunked",
      }),
      { chunk: CHUNKED },
    );
    expect(result.status).toBe(413);
    expect(errorCodeIn(result.response)).toBe("FILE_TOO_LARGE");
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs as number).toBeLessThan(1000);
    expect(result.closedAfterMs as number).toBeLessThan(2500);
    expect(serverBytesRead(running.sockets)).toBeLessThan(MiB + 8 * MiB);
    expect((await running.store.list("s1")).files).toEqual([]);
  });

  it("413 in a multipart form: the socket is ended too", async () => {
    running = await startRoutes({ maxBytes: MiB });
    const { url } = await running.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const boundary = "----attack";
    const partHead =
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
      "Content-Type: application/octet-stream\r\n\r\n";
    const result = await slowClient(
      running.origin,
      head(new URL(url).pathname, running.origin, {
        "Content-Type": `multipart/form-data; boundary=${boundary}`,
        "Content-Length": GiB3,
      }) + partHead,
    );
    expect(result.status).toBe(413);
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs as number).toBeLessThan(1000);
    expect(result.closedAfterMs as number).toBeLessThan(2500);
    expect(serverBytesRead(running.sockets)).toBeLessThan(MiB + 8 * MiB);
  });

  it("404 outside the routes with a body announced: answered and the socket ended", async () => {
    running = await startRoutes();
    const result = await slowClient(
      running.origin,
      head("/elsewhere", running.origin, { "Content-Length": GiB3 }),
    );
    expect(result.status).toBe(404);
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs as number).toBeLessThan(1000);
    expect(result.closedAfterMs as number).toBeLessThan(2500);
    expect(serverBytesRead(running.sockets)).toBeLessThan(8 * MiB);
  });

  it("a refusal over fetch still reaches the client, and the next request works", async () => {
    running = await startRoutes({ maxBytes: MiB });
    const { url } = await running.minter.mint({
      scope: "s1",
      fileId: "t1",
      action: "upload",
      singleUse: true,
    });
    const refused = await fetch(`${url}?filename=big.bin`, {
      method: "PUT",
      body: Buffer.alloc(4 * MiB, 1),
    });
    expect(refused.status).toBe(413);
    expect(refused.headers.get("connection")).toBe("close");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("FILE_TOO_LARGE");
    const { url: next } = await running.minter.mint({ scope: "s1", fileId: "t2", action: "upload" });
    const ok = await fetch(`${next}?filename=small.bin`, { method: "PUT", body: "small" });
    expect(ok.status).toBe(201);
  });
});

describe("a handler's Connection: close is honoured", () => {
  it("sends Connection: close and ends the socket", async () => {
    running = await startRoutes(
      {},
      { handler: () => async () => new Response("bye", { headers: { connection: "close" } }) },
    );
    const { origin } = running;
    const outcome = await new Promise<{ connection: string | undefined; closed: boolean }>(
      (resolve, reject) => {
        const req = httpRequest(`${origin}/anything`, {
          agent: false,
          headers: { connection: "keep-alive" },
        });
        req.on("error", reject);
        req.on("response", (res) => {
          res.resume();
          res.on("end", () => {
            const socket = req.socket as NonNullable<typeof req.socket>;
            if (socket.destroyed) resolve({ connection: res.headers.connection, closed: true });
            else socket.once("close", () => resolve({ connection: res.headers.connection, closed: true }));
          });
        });
        req.end();
      },
    );
    expect(outcome).toEqual({ connection: "close", closed: true });
  });

  it("keeps a fully read request's connection alive when nobody asked to close", async () => {
    running = await startRoutes(
      {},
      { handler: () => async (request) => new Response(`got ${await request.text()}`) },
    );
    const response = await fetch(`${running.origin}/x`, { method: "POST", body: "tiny" });
    expect(response.headers.get("connection")).toBe("keep-alive");
    expect(await response.text()).toBe("got tiny");
  });
});
