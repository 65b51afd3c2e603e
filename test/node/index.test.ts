import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Transform } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import { createFileRoutes, type DownloadEvent } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, PutOptions, PutSource, StagedFile } from "../../src/storage/types.js";
import { close, filesUnder, listen } from "../http/server-helpers.js";
import { sha256 } from "../support/helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

let dir: string;
let store: FileStore;
let server: Server;
let origin: string;
let minter: SignedUrlMinter;
let downloads: DownloadEvent[];
let responses: Array<Promise<Response | undefined>>;
let stageCalls: Array<() => void>;
/** When set, the next staged put tells the test once `at` body bytes went into the store. */
let bytesPassed: { at: number; notify: () => void } | undefined;
let onDownloadCalled: Promise<DownloadEvent>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-node-"));
  const inner = fsStore(join(dir, "store"), { sweepInterval: 0 });
  stageCalls = [];
  // Same store, but tells the test when a staged put starts (to abort mid-stream deterministically).
  store = {
    ...inner,
    driver: inner.driver,
    stage(source: PutSource, options: PutOptions): Promise<StagedFile> {
      const watch = bytesPassed;
      bytesPassed = undefined;
      let seen = 0;
      const counted =
        watch && source instanceof Readable
          ? source.pipe(
              new Transform({
                transform(chunk: Buffer, _encoding, callback) {
                  seen += chunk.length;
                  if (seen >= watch.at) watch.notify();
                  callback(null, chunk);
                },
              }),
            )
          : source;
      const staged = inner.stage(counted, options);
      for (const notify of stageCalls.splice(0)) notify();
      return staged;
    },
  };
  server = createServer();
  origin = await listen(server);
  const state = memoryState();
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  downloads = [];
  responses = [];
  let resolveDownload: (event: DownloadEvent) => void = () => {};
  onDownloadCalled = new Promise((resolve) => {
    resolveDownload = resolve;
  });
  const routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes: 1024 * 1024,
    onDownload: (event) => {
      downloads.push(event);
      resolveDownload(event);
    },
  });
  const handler = toNodeHandler((request) => {
    const response = routes(request);
    // Error bodies are small: keep a copy for the test to read (the adapter consumes the original).
    responses.push(response.then((r) => (r && r.status >= 400 ? r.clone() : r)));
    return response;
  });
  server.on("request", (req, res) => handler(req, res));
});

afterEach(async () => {
  await close(server);
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

/**
 * Streams `count` random chunks of `size` bytes (no declared length) to `url`; expects the 413
 * `FILE_TOO_LARGE` answer and nothing left in the store.
 */
async function expectStreamedOverCap(url: string, method: string, count: number, size: number) {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < count) controller.enqueue(randomBytes(size));
      else controller.close();
    },
  });
  const response = await fetch(url, { method, body, duplex: "half" } as RequestInit);
  expect(response.status).toBe(413);
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe("FILE_TOO_LARGE");
  expect(await filesUnder(join(dir, "store"))).toEqual([]);
}

describe("toNodeHandler", () => {
  it("refuses a handler that is not a function", () => {
    expect(() => toNodeHandler("nope" as never)).toThrowError(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });

  it("downloads through the fast path and fires onDownload after the response finished", async () => {
    const content = randomBytes(3 * 1024 * 1024 + 17);
    const file = await store.put(content, { scope: "s1", name: "big.bin" });
    const { url } = await minter.downloadUrl(file);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe(String(content.length));
    const body = Buffer.from(await response.arrayBuffer());
    expect(sha256(body)).toBe(sha256(content));
    const event = await onDownloadCalled;
    expect(event.bytes).toBe(content.length);
    expect(downloads).toHaveLength(1);
  });

  it("serves ranges and HEAD over a real socket", async () => {
    const content = randomBytes(1000);
    const file = await store.put(content, { scope: "s1", name: "r.bin" });
    const { url } = await minter.downloadUrl(file);
    const partial = await fetch(url, { headers: { range: "bytes=-10" } });
    expect(partial.status).toBe(206);
    expect(Buffer.from(await partial.arrayBuffer()).equals(content.subarray(990))).toBe(true);
    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("1000");
  });

  it("does not fire onDownload when the client goes away mid-download", async () => {
    const content = randomBytes(8 * 1024 * 1024);
    const file = await store.put(content, { scope: "s1", name: "big.bin" });
    const { url } = await minter.downloadUrl(file);
    const closed = new Promise<void>((resolve) => {
      server.once("request", (_req, res) => res.once("close", () => resolve()));
    });
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(url, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", () => {});
      req.once("error", reject);
      req.end();
    });
    await closed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(downloads).toEqual([]);
  });

  it("answers 404 for requests that are not file routes when there is no next()", async () => {
    const response = await fetch(`${origin}/elsewhere`);
    expect(response.status).toBe(404);
  });

  it("keeps nothing when the client aborts a multipart upload mid-stream", async () => {
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload" });
    const staged = new Promise<void>((resolve) => stageCalls.push(resolve));
    const boundary = "----mfb-boundary";
    const req = httpRequest(url, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
    });
    req.on("error", () => {});
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.bin"\r\n` +
        "Content-Type: application/octet-stream\r\n\r\n",
    );
    req.write(randomBytes(256 * 1024));
    await staged;
    req.write(randomBytes(64 * 1024));
    req.destroy();
    const response = (await responses[0]) as Response;
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ABORTED");
    expect((await store.list("s1")).files).toEqual([]);
    expect(await filesUnder(join(dir, "store"))).toEqual([]);
  });

  it("keeps nothing when the client aborts a raw upload mid-stream", async () => {
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload" });
    const staged = new Promise<void>((resolve) => stageCalls.push(resolve));
    const req = httpRequest(`${url}?filename=raw.bin`, { method: "PUT" });
    req.on("error", () => {});
    req.write(randomBytes(128 * 1024));
    await staged;
    req.write(randomBytes(128 * 1024));
    req.destroy();
    const response = (await responses[0]) as Response;
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ABORTED");
    expect(await filesUnder(join(dir, "store"))).toEqual([]);
  });

  it("sends the 413 to a client whose streamed body goes over the cap", async () => {
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload" });
    await expectStreamedOverCap(`${url}?filename=big.bin`, "POST", 40, 64 * 1024);
  });

  it("sends the 413 for a declared Content-Length over the cap without reading the body", async () => {
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload" });
    const response = await fetch(`${url}?filename=big.bin`, {
      method: "PUT",
      body: randomBytes(3 * 1024 * 1024),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("FILE_TOO_LARGE");
    // The connection stays usable for the next request.
    const { url: next } = await minter.mint({ scope: "s1", fileId: "t2", action: "upload" });
    const ok = await fetch(`${next}?filename=small.bin`, { method: "PUT", body: "small" });
    expect(ok.status).toBe(201);
    expect((await store.list("s1")).files.map((f) => f.name)).toEqual(["small.bin"]);
  });

  it("stores a multi-MiB raw upload with its exact sha256 (hashed from the file by the worker)", async () => {
    const MiB = 1024 * 1024;
    const body = randomBytes(5 * MiB + 123);
    const claims = { max_bytes: 8 * MiB };
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload", claims });
    const stream = () =>
      Readable.from(
        Array.from({ length: 21 }, (_, i) => body.subarray(i * 256 * 1024, (i + 1) * 256 * 1024)),
      );
    const response = await fetch(`${url}?filename=big.bin`, {
      method: "PUT",
      body: Readable.toWeb(stream()) as ReadableStream,
      headers: { "x-content-sha256": sha256(body) },
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(201);
    const reply = (await response.json()) as { files: Array<{ id: string; size: number; sha256: string }> };
    expect(reply.files[0]).toMatchObject({ size: body.byteLength, sha256: sha256(body) });
    const back: Buffer[] = [];
    for await (const chunk of (await store.read("s1", reply.files[0]?.id as string)) ?? []) back.push(chunk);
    expect(Buffer.concat(back).equals(body)).toBe(true);
    // A declared sha256 that does not match is refused, and nothing of it is left.
    const { url: next } = await minter.mint({ scope: "s1", fileId: "t2", action: "upload", claims });
    const wrong = await fetch(`${next}?filename=wrong.bin`, {
      method: "PUT",
      body: Readable.toWeb(stream()) as ReadableStream,
      headers: { "x-content-sha256": "0".repeat(64) },
      duplex: "half",
    } as RequestInit);
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("DIGEST_MISMATCH");
    expect((await store.list("s1")).files.map((f) => f.name)).toEqual(["big.bin"]);
    expect(await filesUnder(join(dir, "store"))).toHaveLength(2); // big.bin's bytes and record
  });

  it("keeps nothing when the client cuts a multi-MiB raw upload after the worker took over", async () => {
    const MiB = 1024 * 1024;
    const claims = { max_bytes: 16 * MiB };
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload", claims });
    const staged = new Promise<void>((resolve) => stageCalls.push(resolve));
    const req = httpRequest(`${url}?filename=cut.bin`, {
      method: "PUT",
      headers: { "content-length": String(8 * MiB) },
    });
    req.on("error", () => {});
    req.write(randomBytes(MiB));
    await staged;
    for (let i = 0; i < 3; i++)
      await new Promise<void>((resolve) => req.write(randomBytes(MiB), () => resolve()));
    req.destroy();
    const response = (await responses[0]) as Response;
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ABORTED");
    expect((await store.list("s1")).files).toEqual([]);
    expect(await filesUnder(join(dir, "store"))).toEqual([]);
  });

  it("sends the 413 with FILE_TOO_LARGE when a multi-MiB body without a length passes the cap", async () => {
    const MiB = 1024 * 1024;
    const claims = { max_bytes: 3 * MiB };
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload", claims });
    await expectStreamedOverCap(`${url}?filename=big.bin`, "PUT", 64, 128 * 1024);
  });

  it("uploads several files with fetch + FormData", async () => {
    const a = randomBytes(200_000);
    const b = randomBytes(10);
    const form = new FormData();
    form.append("file", new Blob([a]), "a.bin");
    form.append("file", new Blob([b]), "b.bin");
    const { url } = await minter.mint({ scope: "s1", fileId: "t1", action: "upload" });
    const response = await fetch(url, { method: "POST", body: form });
    expect(response.status).toBe(201);
    const reply = (await response.json()) as { files: Array<{ sha256: string }> };
    expect(reply.files.map((f) => f.sha256)).toEqual([sha256(a), sha256(b)]);
  });
});
