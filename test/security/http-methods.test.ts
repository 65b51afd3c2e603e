import { createServer, request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { close, listen } from "../http/server-helpers.js";
import {
  headerIn,
  type RoutesServer,
  SECRET,
  serverBytesRead,
  slowClient,
  startRoutes,
} from "./http-attack-helpers.js";

// Attack: TRACE (which no web `Request` can carry) and other methods the routes do not serve. Before
// the fix TRACE made the Node adapter answer 500 and call `onError` (log noise, a cheap way to page
// an operator). Now every such request is a plain 405 with `Allow`, and nothing reaches `onError`.

const running: RoutesServer[] = [];

afterEach(async () => {
  for (const server of running.splice(0)) await close(server.server);
});

interface Answer {
  status: number;
  allow: string | undefined;
  connection: string | undefined;
  body: string;
}

function send(origin: string, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { method, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          allow: res.headers.allow,
          connection: res.headers.connection,
          body: text,
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const METHODS = [
  "TRACE",
  "PROPFIND",
  "DELETE",
  "PATCH",
  "OPTIONS",
  "SEARCH",
  "M-SEARCH",
  "LOCK",
  "MKCOL",
  "PURGE",
];
const ROUTES: Array<[path: string, allow: string]> = [
  ["/files/download/some.token", "GET, HEAD"],
  ["/files/upload/some.token", "POST, PUT"],
  ["/files/scopes/s1/files/a.txt", "POST, PUT"],
  ["/files/download/not%20a%20token", "GET, HEAD"],
];

describe("methods the routes do not serve", () => {
  it.each(METHODS)("%s on every route: 405 with Allow, nothing for onError", async (method) => {
    const server = await startRoutes({ authorize: () => true });
    running.push(server);
    for (const [path, allow] of ROUTES) {
      const answer = await send(server.origin, method, path);
      expect({ path, status: answer.status, allow: answer.allow }).toEqual({ path, status: 405, allow });
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "METHOD_NOT_ALLOWED" } });
    }
    expect(server.errors).toEqual([]);
  });

  it("a refused method with 3 GiB announced: 405, Connection: close, the body is not read", async () => {
    const server = await startRoutes();
    running.push(server);
    const head = `PATCH /files/upload/some.token HTTP/1.1\r\nHost: ${new URL(server.origin).host}\r\nContent-Length: ${3 * 1024 ** 3}\r\n\r\n`;
    const result = await slowClient(server.origin, head);
    expect(result.status).toBe(405);
    expect(headerIn(result.response, "connection")).toBe("close");
    expect(result.endedAfterMs as number).toBeLessThan(1000);
    expect(serverBytesRead(server.sockets)).toBeLessThan(8 * 1024 * 1024);
    expect(server.errors).toEqual([]);
  });

  it("TRACE outside the routes: 404 without next(), next() with it", async () => {
    const server = await startRoutes();
    running.push(server);
    expect((await send(server.origin, "TRACE", "/elsewhere")).status).toBe(404);
    expect(server.errors).toEqual([]);

    const store = memoryStore({ sweepInterval: 0 });
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1" });
    const files = toNodeHandler(createFileRoutes({ store, minter }));
    const seen: string[] = [];
    const http = createServer((req, res) =>
      files(req, res, () => {
        seen.push(`${req.method} ${req.url}`);
        res.writeHead(418);
        res.end();
      }),
    );
    const origin = await listen(http);
    try {
      expect((await send(origin, "TRACE", "/elsewhere")).status).toBe(418);
      expect((await send(origin, "TRACE", "/files/download/a.b")).status).toBe(405);
      expect(seen).toEqual(["TRACE /elsewhere"]);
    } finally {
      await close(http);
    }
  });

  it("TRACE to a handler not made by createFileRoutes: 501, not 500, and no onError", async () => {
    const errors: unknown[] = [];
    const handler = toNodeHandler(async () => new Response("ok"), { onError: (error) => errors.push(error) });
    const http = createServer((req, res) => handler(req, res));
    const origin = await listen(http);
    try {
      expect((await send(origin, "TRACE", "/")).status).toBe(501);
      expect((await send(origin, "GET", "/")).status).toBe(200);
      expect(errors).toEqual([]);
    } finally {
      await close(http);
    }
  });

  it("web-standard callers: an unknown method token is a 405 with Allow, not an error", async () => {
    const errors: unknown[] = [];
    const routes = createFileRoutes({
      store: memoryStore({ sweepInterval: 0 }),
      minter: new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1" }),
      onError: (error) => errors.push(error),
    });
    for (const method of ["FOO", "DELETE", "QUERY"]) {
      const response = (await routes(
        new Request("http://127.0.0.1/files/upload/a.b", { method }),
      )) as Response;
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST, PUT");
    }
    expect(errors).toEqual([]);
  });
});
