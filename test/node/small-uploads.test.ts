import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { SMALL_BODY_BYTES } from "../../src/uploads/upload-staging.js";
import { close, filesUnder, listen } from "../http/server-helpers.js";
import { sha256 } from "../support/helpers.js";

// Small raw bodies (Content-Length up to SMALL_BODY_BYTES) are read whole and handed to the store as
// one buffer, and JSON answers go out through one `res.end`. Every guarantee of the streamed path holds,
// through the real Node adapter on 127.0.0.1, and the web path gives the same answers.

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

let dir: string;
let store: FileStore;
let state: StateStore;
let routes: FileRoutes;
let server: Server;
let origin: string;
let minter: SignedUrlMinter;
/** Resolves the next time the routes claim (`upload-claim:`) or release a ticket. */
let claimed: Promise<void>;
let released: Promise<void>;

function arm(): void {
  let onClaim: () => void = () => {};
  let onRelease: () => void = () => {};
  claimed = new Promise((resolve) => {
    onClaim = resolve;
  });
  released = new Promise((resolve) => {
    onRelease = resolve;
  });
  const inner = memoryState();
  state = {
    ...inner,
    get: (key) => inner.get(key),
    set: (key, value, options) => inner.set(key, value, options),
    async setIfAbsent(key, value, options) {
      const result = await inner.setIfAbsent(key, value, options);
      if (key.startsWith("upload-claim:")) onClaim();
      return result;
    },
    async delete(key) {
      const deleted = await inner.delete(key);
      if (key.startsWith("upload-claim:")) onRelease();
      return deleted;
    },
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-small-"));
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  arm();
  server = createServer();
  origin = await listen(server);
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  routes = createFileRoutes({ store, minter, state, maxBytes: 1024 * 1024 });
  const handler = toNodeHandler(routes);
  server.on("request", (req, res) => handler(req, res));
});

afterEach(async () => {
  await close(server);
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function ticket(claims: Record<string, number> = {}): Promise<string> {
  const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload", singleUse: true, claims });
  return url;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const PINNED = ["content-type", "cache-control", "x-content-type-options"];

async function answerOf(response: Response): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const name of PINNED) headers[name] = response.headers.get(name) ?? "";
  return { status: response.status, headers, body: (await response.json()) as Record<string, unknown> };
}

/** The same upload over real HTTP (Node adapter) and straight into the web handler. */
async function both(url: string, body: Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) {
  const init = { method: "PUT", headers: { "content-length": String(body.length), ...headers }, body };
  const node = await answerOf(await fetch(url, init));
  const web = await answerOf((await routes(new Request(url, init))) as Response);
  return { node, web };
}

async function storedNames(): Promise<string[]> {
  return (await store.list("s1")).files.map((file) => file.name);
}

/** Files under the store folder that are not a committed file or its record (temp, part). */
async function strayFiles(): Promise<string[]> {
  return (await filesUnder(join(dir, "store"))).filter((path) => /\.(tmp|part)$/.test(path));
}

describe("small uploads through the Node adapter", () => {
  it("stores the exact bytes and sha256, and answers as the web path does", async () => {
    const bytes = randomBytes(4096);
    const nodeReply = await fetch(`${await ticket()}?filename=a.bin`, {
      method: "PUT",
      headers: { "content-length": "4096", "x-content-sha256": sha256(bytes) },
      body: bytes,
    });
    expect(nodeReply.status).toBe(201);
    const node = await answerOf(nodeReply);
    const web = await answerOf(
      (await routes(
        new Request(`${await ticket()}?filename=a.bin`, {
          method: "PUT",
          headers: { "content-length": "4096", "x-content-sha256": sha256(bytes) },
          body: bytes,
        }),
      )) as Response,
    );
    expect(node.headers).toEqual(web.headers);
    expect(node.headers["content-type"]).toBe("application/json; charset=utf-8");
    const shape = (answer: Answer) =>
      (answer.body.files as Array<Record<string, unknown>>).map(({ name, size, sha256, mimeType }) => ({
        name,
        size,
        sha256,
        mimeType,
      }));
    expect(shape(node)).toEqual([
      { name: "a.bin", size: 4096, sha256: sha256(bytes), mimeType: expect.any(String) },
    ]);
    expect(shape(web)).toEqual(shape(node));
    for (const entry of [
      ...(node.body.files as Array<{ id: string }>),
      ...(web.body.files as Array<{ id: string }>),
    ]) {
      const read = await store.read("s1", entry.id);
      const chunks: Buffer[] = [];
      for await (const chunk of read ?? []) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    }
    expect(await strayFiles()).toEqual([]);
  });

  it("sends whole answers with Content-Length, not chunked: an upload, a refusal, and a web-path text answer", async () => {
    /** One request over a raw node:http client: the status, the raw headers and the body's bytes. */
    const exchange = (url: string, method: string, body?: Buffer) =>
      new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: number }>(
        (resolve, reject) => {
          const req = httpRequest(
            url,
            { method, headers: { "content-length": body?.length ?? 0 } },
            (res) => {
              let bytes = 0;
              res.on("data", (chunk: Buffer) => {
                bytes += chunk.length;
              });
              res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
            },
          );
          req.on("error", reject);
          req.end(body);
        },
      );
    const bytes = randomBytes(1000);
    const url = `${await ticket()}?filename=a.bin`;
    const stored = await exchange(url, "PUT", bytes);
    const reused = await exchange(url, "PUT", bytes);
    // Not an upload PUT: answered on the web path, a text answer too.
    const missing = await exchange(`${origin}/files/download/not-a-token`, "GET");
    expect([stored.status, reused.status, missing.status]).toEqual([201, 410, 401]);
    for (const answer of [stored, reused, missing]) {
      expect(answer.headers["transfer-encoding"]).toBeUndefined();
      expect(Number(answer.headers["content-length"])).toBe(answer.bytes);
      expect(answer.bytes).toBeGreaterThan(0);
    }
  });

  it("refuses a reused ticket, a wrong digest and an over-size body with the same answers on both paths", async () => {
    const bytes = randomBytes(2048);
    const used = await ticket();
    expect((await fetch(`${used}?filename=a.bin`, { method: "PUT", body: bytes })).status).toBe(201);
    const reuse = await both(`${used}?filename=b.bin`, bytes);
    expect(reuse.node).toEqual(reuse.web);
    expect(reuse.node.status).toBe(410);
    expect((reuse.node.body.error as { code: string }).code).toBe("TOKEN_ALREADY_USED");

    const digest = await both(`${await ticket()}?filename=c.bin`, bytes, {
      "x-content-sha256": "0".repeat(64),
    });
    expect(digest.node).toEqual(digest.web);
    expect((digest.node.body.error as { code: string }).code).toBe("DIGEST_MISMATCH");

    const small = await ticket({ max_bytes: 1024 });
    const tooLarge = await both(`${small}?filename=d.bin`, bytes);
    expect(tooLarge.node).toEqual(tooLarge.web);
    expect(tooLarge.node.status).toBe(413);
    expect((tooLarge.node.body.error as { code: string }).code).toBe("FILE_TOO_LARGE");
    // Refused uploads left the ticket usable, and stored nothing.
    expect(
      (await fetch(`${small}?filename=e.bin`, { method: "PUT", body: bytes.subarray(0, 1024) })).status,
    ).toBe(201);
    expect((await storedNames()).sort()).toEqual(["a.bin", "e.bin"]);
    expect(await strayFiles()).toEqual([]);
  });

  it("a body cut mid-way stores nothing, leaves no temp file, and the ticket works again", async () => {
    const url = await ticket();
    const size = SMALL_BODY_BYTES / 2;
    const req = httpRequest(`${url}?filename=cut.bin`, {
      method: "PUT",
      headers: { "content-length": size },
    });
    req.on("error", () => {});
    req.write(randomBytes(size / 2));
    // The ticket is claimed just before the body is read: cut the connection while it is being read.
    await claimed;
    req.destroy();
    await released;
    expect(await storedNames()).toEqual([]);
    expect(await filesUnder(join(dir, "store"))).toEqual([]);
    arm();
    const bytes = randomBytes(size);
    const retry = await fetch(`${url}?filename=ok.bin`, { method: "PUT", body: bytes });
    expect(retry.status).toBe(201);
    expect(((await retry.json()) as { files: Array<{ sha256: string }> }).files[0]?.sha256).toBe(
      sha256(bytes),
    );
    expect(await storedNames()).toEqual(["ok.bin"]);
  });

  it("a body above the small size streams as before (chunked or large), with the same checks", async () => {
    const bytes = randomBytes(SMALL_BODY_BYTES + 1);
    const reply = await fetch(`${await ticket()}?filename=big.bin&sha256=${sha256(bytes)}`, {
      method: "PUT",
      body: bytes,
    });
    expect(reply.status).toBe(201);
    const chunked = await fetch(`${await ticket({ max_bytes: 1024 })}?filename=over.bin`, {
      method: "PUT",
      body: new Blob([randomBytes(4096)]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await storedNames()).toEqual(["big.bin"]);
    expect(await readdir(join(dir, "store"))).toHaveLength(1);
    expect(await strayFiles()).toEqual([]);
  });
});

/** Every header of an answer but those the HTTP server adds itself. */
async function fullAnswer(response: Response): Promise<{ status: number; headers: object; text: string }> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    if (!["date", "connection", "keep-alive", "content-length", "transfer-encoding"].includes(key)) {
      headers[key] = value;
    }
  });
  return { status: response.status, headers, text: await response.text() };
}

/** Routes with `options` on a server of their own; the same upload PUT over HTTP and to the web handler. */
async function withRoutes(options: Partial<Parameters<typeof createFileRoutes>[0]>) {
  const own = createFileRoutes({ store, minter, state, maxBytes: 1024 * 1024, ...options });
  const ownServer = createServer();
  const handler = toNodeHandler(own);
  ownServer.on("request", (req, res) => handler(req, res));
  const ownOrigin = await listen(ownServer);
  const put = async (path: string, headers: Record<string, string>, body: Uint8Array<ArrayBuffer>) => {
    const init = { method: "PUT", headers: { "content-length": String(body.length), ...headers }, body };
    const node = await fullAnswer(await fetch(`${ownOrigin}${path}`, init));
    const web = await fullAnswer((await own(new Request(`${ownOrigin}${path}`, init))) as Response);
    return { node, web };
  };
  return { put, origin: ownOrigin, close: () => close(ownServer) };
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

describe("the Node adapter's native upload PUT answers as the web path does", () => {
  it("CORS: an allowed origin's headers, a refused origin's 403, a function policy seeing the Request", async () => {
    const seen: string[] = [];
    const allowed = await withRoutes({ allowedOrigins: ["https://app.example"] });
    const listed = await allowed.put(
      pathOf(`${await ticket()}?filename=a.bin`),
      { origin: "https://app.example" },
      randomBytes(100),
    );
    // Two tickets: each path uses its own; the file ids differ, so compare all but the body.
    expect(listed.node.status).toBe(201);
    expect(listed.node.headers).toEqual(listed.web.headers);
    expect(listed.node.headers).toMatchObject({
      "access-control-allow-origin": "https://app.example",
      vary: "Origin",
    });
    const refused = await allowed.put(
      pathOf(await ticket()),
      { origin: "https://evil.example" },
      randomBytes(10),
    );
    expect(refused.node).toEqual(refused.web);
    expect(refused.node.status).toBe(403);
    await allowed.close();

    const fn = await withRoutes({
      allowedOrigins: (origin, request) => {
        seen.push(
          `${request instanceof Request} ${request.method} ${request.headers.get("x-app")} ${new URL(request.url).pathname.split("/")[2]}`,
        );
        return origin === "https://fn.example";
      },
    });
    const byFunction = await fn.put(
      pathOf(await ticket()),
      { origin: "https://fn.example", "x-app": "a1" },
      randomBytes(10),
    );
    expect(byFunction.node.status).toBe(201);
    expect(byFunction.node.headers).toEqual(byFunction.web.headers);
    const anyOrigin = await withRoutes({ allowedOrigins: "*" });
    const star = await anyOrigin.put(
      pathOf(await ticket()),
      { origin: "https://x.example" },
      randomBytes(10),
    );
    expect(star.node.headers).toEqual(star.web.headers);
    expect(star.node.headers).toMatchObject({ "access-control-allow-origin": "*" });
    expect(seen).toEqual(["true PUT a1 upload", "true PUT a1 upload"]);
    await fn.close();
    await anyOrigin.close();
  });

  it("rateLimit: the same 429, and info.request is the request with its headers on both paths", async () => {
    const infos: string[] = [];
    const limited = await withRoutes({
      rateLimit: (info) => {
        infos.push(
          `${info.route} ${info.scope} ${info.request instanceof Request} ${info.request.headers.get("x-forwarded-for")}`,
        );
        return false;
      },
    });
    const url = await ticket();
    const answer = await limited.put(
      pathOf(url),
      { "x-forwarded-for": "10.0.0.1", "X-Forwarded-For": "10.0.0.2" },
      randomBytes(10),
    );
    expect(answer.node).toEqual(answer.web);
    expect(answer.node.status).toBe(429);
    expect(JSON.parse(answer.node.text).error.code).toBe("RATE_LIMITED");
    expect(infos).toEqual(["ticket s1 true 10.0.0.1, 10.0.0.2", "ticket s1 true 10.0.0.1, 10.0.0.2"]);
    expect(await storedNames()).toEqual([]);
    // The refusal read no byte and left the ticket usable.
    expect((await fetch(url, { method: "PUT", body: randomBytes(10) })).status).toBe(201);
    await limited.close();
  });

  it("authorize: a refused direct upload and a bad token answer the same", async () => {
    const direct = await withRoutes({ authorize: (request) => request.headers.get("x-key") === "k" });
    const refused = await direct.put("/files/scopes/s1/files/a.bin", { "x-key": "no" }, randomBytes(10));
    expect(refused.node).toEqual(refused.web);
    expect(refused.node.status).toBe(403);
    const badToken = await direct.put("/files/upload/not*a*token", {}, randomBytes(10));
    expect(badToken.node).toEqual(badToken.web);
    expect(JSON.parse(badToken.node.text).error.code).toBe("INVALID_TOKEN");
    const forged = await direct.put("/files/upload/abc.def.ghi", {}, randomBytes(10));
    expect(forged.node).toEqual(forged.web);
    expect(forged.node.status).toBe(401);
    await direct.close();
  });

  it("a ticket that times out stalls is answered 408 REQUEST_TIMEOUT with Connection: close (no body byte)", async () => {
    const slow = await withRoutes({ idleTimeout: "100ms" });
    const url = await ticket();
    const node = await new Promise<{ status: number; code: string; connection: string | undefined }>(
      (resolve, reject) => {
        const req = httpRequest(
          `${slow.origin}${pathOf(url)}`,
          { method: "PUT", headers: { "content-length": 100 } },
          (res) => {
            let text = "";
            res.on("data", (chunk) => {
              text += chunk;
            });
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                code: JSON.parse(text).error.code,
                connection: res.headers.connection,
              }),
            );
          },
        );
        req.on("error", reject);
        req.flushHeaders();
      },
    );
    expect(node).toEqual({ status: 408, code: "REQUEST_TIMEOUT", connection: "close" });
    await slow.close();
  });
});
