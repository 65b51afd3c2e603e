/**
 * Uploads with no declared digest into R2 through our routes in workerd (issue 46): a raw body whose
 * `Content-Length` is known goes to R2 as one put of its declared length, read in large chunks and
 * hashed on the way, the record written once the put has ended. A body of unknown length keeps the
 * multipart path. Bodies shorter or longer than their `Content-Length` are sent from a raw socket on
 * 127.0.0.1, so the client is written from HTTP/1.1's framing and not from our server code.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleWorker, startWorker, workerRequests } from "./workerd.js";

const MiB = 1024 * 1024;
let mf: Miniflare;
let persist: string;
let origin: URL;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

const { send, json } = workerRequests(() => mf, "http://digest.test");

interface StoredObject {
  key: string;
  etag: string;
  sha256: string | null;
}

const objects = () => json<StoredObject[]>("/test/objects");
const files = (scope: string) =>
  json<{ files: { id: string; sha256: string }[] }>(`/test/files?scope=${scope}`);
const ticket = async (scope: string) =>
  (await json<{ upload_url: string }>(`/test/ticket?scope=${scope}`)).upload_url;

/** A multipart upload's etag is `<hex>-<parts>`; a single put's is the MD5 of its bytes. */
const isMultipart = (object: StoredObject) => /-\d+$/.test(object.etag);

/** A client sending `bytes` in pieces of `piece` bytes, `everyMs` apart (the first at once). */
function trickle(bytes: Uint8Array, piece: number, everyMs: number) {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === bytes.length) return controller.close();
      if (sent > 0) await new Promise((resolve) => setTimeout(resolve, everyMs));
      controller.enqueue(bytes.subarray(sent, sent + piece));
      sent += piece;
    },
  });
  return { body, sent: () => sent };
}

/** A raw PUT of a streamed body of `length` bytes, with the fixture's clock headers. */
function putStreamed(
  url: string,
  body: ReadableStream<Uint8Array>,
  length: number,
  headers: Record<string, string>,
) {
  return send(url, {
    method: "PUT",
    body,
    duplex: "half",
    headers: { "content-length": String(length), ...headers },
  } as RequestInit);
}

/** The error code of a JSON error answer. */
const errorCode = async (response: Response) =>
  ((await response.json()) as { error: { code: string } }).error.code;

/** After a refused upload (and time for any put still settling): no new object, no record. */
async function expectNothingStored(before: StoredObject[], scope: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(await objects()).toEqual(before);
  expect((await files(scope)).files).toEqual([]);
}

/**
 * One HTTP/1.1 request from a raw socket: the head, then `body` (which may be shorter or longer
 * than the `Content-Length` given), then the write side is closed when `end` is set. Answers the
 * status and JSON body of the response, or `null` when the server closed without one.
 */
async function rawRequest(
  url: string,
  contentLength: number,
  body: Uint8Array,
  options: { end?: boolean; before?: (status: number) => void } = {},
): Promise<{ status: number; body: Record<string, unknown> } | null> {
  const target = new URL(url);
  const socket = connect({ host: "127.0.0.1", port: Number(origin.port) });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const received: Buffer[] = [];
  // Done when the server closes, or once a response with a Content-Length has come whole.
  const closed = new Promise<void>((resolve) => {
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk);
      const text = Buffer.concat(received).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
      if (end >= 0 && length && text.length - end - 4 >= Number(length[1])) resolve();
    });
    socket.on("close", () => resolve());
    socket.on("error", () => resolve());
  });
  socket.write(
    `PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
      `Content-Type: application/octet-stream\r\nContent-Length: ${contentLength}\r\nConnection: close\r\n\r\n`,
  );
  socket.write(body);
  if (options.end) socket.end();
  const timer = setTimeout(() => socket.destroy(), 20_000);
  await closed;
  clearTimeout(timer);
  socket.destroy();
  const text = Buffer.concat(received).toString("latin1");
  const head = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n/.exec(text);
  if (!head) return null;
  let payload = text.slice(head[0].length);
  if (/transfer-encoding:\s*chunked/i.test(head[2] as string)) {
    let decoded = "";
    for (let at = 0; ; ) {
      const eol = payload.indexOf("\r\n", at);
      const size = Number.parseInt(payload.slice(at, eol), 16);
      if (!(size > 0)) break;
      decoded += payload.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
    payload = decoded;
  }
  return { status: Number(head[1]), body: payload ? (JSON.parse(payload) as Record<string, unknown>) : {} };
}

beforeAll(async () => {
  persist = await mkdtemp(join(tmpdir(), "r2-undeclared-"));
  mf = await startWorker(await bundleWorker(join(import.meta.dirname, "fixtures/tus-worker.ts")), {
    persist,
  });
  origin = await mf.ready;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await rm(persist, { recursive: true, force: true });
});

describe("no declared digest into R2 (workerd)", () => {
  it("a body of known length goes to R2 as one put of its exact bytes, its sha-256 recorded", async () => {
    const scope = "one-put";
    // More than one 5 MiB part of the Worker's store: the multipart path would make two parts.
    const bytes = randomBytes(5 * MiB + 512 * 1024 + 7);
    const before = (await objects()).map((o) => o.key);
    const response = await send(await ticket(scope), {
      method: "PUT",
      body: bytes as unknown as BodyInit,
      headers: { "content-type": "application/octet-stream", "content-length": String(bytes.length) },
    });
    expect(response.status).toBe(201);
    const file = ((await response.json()) as { files: { id: string; sha256: string; size: number }[] })
      .files[0];
    expect(file).toMatchObject({ sha256: sha256(bytes), size: bytes.length });
    const added = (await objects()).filter((o) => !before.includes(o.key));
    expect(added).toHaveLength(1);
    expect(isMultipart(added[0] as StoredObject)).toBe(false);
    // The single put's etag is the MD5 R2 took of the bytes it stored.
    expect((added[0] as StoredObject).etag).toBe(createHash("md5").update(bytes).digest("hex"));
    expect((await files(scope)).files.map((f) => f.sha256)).toEqual([sha256(bytes)]);
    const read = await send(`http://digest.test/test/read?scope=${scope}&id=${file?.id}`);
    expect(sha256(new Uint8Array(await read.arrayBuffer()))).toBe(sha256(bytes));
  }, 60_000);

  it("stores the exact bytes at the read size's edges: 1 byte, 1 MiB, 1 MiB + 1, 2 MiB, 3 MiB - 1 (buffers reused)", async () => {
    // Reads are 1 MiB into two buffers in turn: from the third read on, a read fills the buffer of a
    // chunk R2 has taken. Every byte R2 stored (its MD5 etag) and every byte read back must be the
    // body's, whatever the last read's length.
    const scope = "edges";
    for (const size of [1, MiB, MiB + 1, 2 * MiB, 3 * MiB - 1]) {
      const bytes = randomBytes(size);
      const before = (await objects()).map((o) => o.key);
      const response = await send(await ticket(scope), {
        method: "PUT",
        body: bytes as unknown as BodyInit,
        headers: { "content-type": "application/octet-stream", "content-length": String(size) },
      });
      expect(response.status, `${size} bytes`).toBe(201);
      const file = ((await response.json()) as { files: { id: string; sha256: string; size: number }[] })
        .files[0];
      expect(file, `${size} bytes`).toMatchObject({ sha256: sha256(bytes), size });
      const added = (await objects()).filter((o) => !before.includes(o.key));
      expect(added, `${size} bytes`).toHaveLength(1);
      expect((added[0] as StoredObject).etag, `${size} bytes`).toBe(
        createHash("md5").update(bytes).digest("hex"),
      );
      const read = await send(`http://digest.test/test/read?scope=${scope}&id=${file?.id}`);
      expect(sha256(new Uint8Array(await read.arrayBuffer())), `${size} bytes`).toBe(sha256(bytes));
    }
  }, 120_000);

  it("a body of unknown length (chunked) keeps the multipart path and records the right sha-256", async () => {
    const scope = "unsized";
    const bytes = randomBytes(5 * MiB + 300 * 1024 + 3);
    const before = (await objects()).map((o) => o.key);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === bytes.length) return controller.close();
        const chunk = bytes.subarray(sent, sent + 256 * 1024);
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await send(await ticket(scope), {
      method: "PUT",
      body,
      duplex: "half",
      headers: { "content-type": "application/octet-stream", "x-test-unsized": "1" },
    } as RequestInit);
    expect(response.status).toBe(201);
    const added = (await objects()).filter((o) => !before.includes(o.key));
    expect(added).toHaveLength(1);
    expect(isMultipart(added[0] as StoredObject)).toBe(true);
    expect((await files(scope)).files.map((f) => f.sha256)).toEqual([sha256(bytes)]);
  }, 60_000);

  it("a body shorter than its Content-Length stores nothing and records nothing", async () => {
    const scope = "short";
    const bytes = randomBytes(2 * MiB);
    const before = await objects();
    const reply = await rawRequest(await ticket(scope), bytes.length + 4096, bytes, { end: true });
    // The client half-closed before its declared length: the metered path's answer (400 ABORTED).
    expect(reply?.status).toBe(400);
    expect(reply?.body.error).toMatchObject({ code: "ABORTED" });
    await expectNothingStored(before, scope);
  }, 60_000);

  it("a body longer than its Content-Length stores exactly the declared bytes (HTTP frames the body)", async () => {
    const scope = "long";
    const bytes = randomBytes(2 * MiB + 5);
    const declared = 2 * MiB;
    const reply = await rawRequest(await ticket(scope), declared, bytes);
    expect(reply?.status).toBe(201);
    const stored = (await files(scope)).files;
    expect(stored.map((f) => f.sha256)).toEqual([sha256(bytes.subarray(0, declared))]);
  }, 60_000);

  it("a body that stalls halfway ends at the idle timeout (408), long before the total one, and leaves no object", async () => {
    const scope = "stalled";
    const bytes = randomBytes(2 * MiB);
    const url = await ticket(scope);
    const before = await objects();
    let sent = false;
    // Half the body, then nothing: the client neither finishes nor goes away.
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent) return new Promise<void>(() => {});
        sent = true;
        controller.enqueue(bytes.subarray(0, MiB));
      },
    });
    const started = Date.now();
    const response = await send(url, {
      method: "PUT",
      body,
      duplex: "half",
      headers: {
        "content-length": String(bytes.length),
        "x-test-idle-timeout": "1000",
        "x-test-upload-timeout": "30000",
      },
    } as RequestInit);
    expect(response.status).toBe(408);
    expect(await errorCode(response)).toBe("REQUEST_TIMEOUT");
    expect(Date.now() - started).toBeLessThan(15_000);
    await expectNothingStored(before, scope);
  }, 60_000);

  it("a slow but steady body is not taken for idle: the clock sees bytes before a whole 1 MiB read", async () => {
    const scope = "steady";
    const bytes = randomBytes(512 * 1024);
    const url = await ticket(scope);
    // 32 KiB every 300 ms: about 5 s in all, against an idle timeout of 1 s.
    const { body } = trickle(bytes, 32 * 1024, 300);
    const response = await putStreamed(url, body, bytes.length, { "x-test-idle-timeout": "1000" });
    expect(response.status).toBe(201);
    expect((await files(scope)).files.map((f) => f.sha256)).toEqual([sha256(bytes)]);
  }, 60_000);

  it("a client within the minimum rate whose bytes come more often than the idle timeout is not taken for idle", async () => {
    const scope = "trickle";
    const bytes = randomBytes(64 * 1024);
    const url = await ticket(scope);
    // 4 KiB every 300 ms (about 13 KiB/s, over the 1 KiB/s minimum) against an idle timeout of 1 s:
    // a byte comes well within every second, but 16 KiB take 1.2 s.
    const { body } = trickle(bytes, 4 * 1024, 300);
    const response = await putStreamed(url, body, bytes.length, { "x-test-idle-timeout": "1000" });
    expect(response.status).toBe(201);
    expect((await files(scope)).files.map((f) => f.sha256)).toEqual([sha256(bytes)]);
  }, 60_000);

  it("a body slower than the minimum rate ends with 408 TRANSFER_TOO_SLOW, though each large read ends within a window", async () => {
    const scope = "too-slow";
    const bytes = randomBytes(320 * 1024);
    const url = await ticket(scope);
    const before = await objects();
    // 16 KiB every 400 ms (40 KiB/s) against a minimum of 100 KiB/s over 1 s windows: about 8 s
    // to send it all, and every 1 s window brings too few bytes.
    const { body, sent } = trickle(bytes, 16 * 1024, 400);
    const response = await putStreamed(url, body, bytes.length, {
      "x-test-idle-timeout": "5000",
      "x-test-min-rate": String(100 * 1024),
      "x-test-rate-window": "1000",
    });
    expect(response.status).toBe(408);
    expect(await errorCode(response)).toBe("TRANSFER_TOO_SLOW");
    expect(sent()).toBeLessThan(bytes.length);
    await expectNothingStored(before, scope);
  }, 60_000);

  it("a client that goes midway (the socket destroyed, no half-close) leaves no object and no record", async () => {
    const scope = "gone";
    const bytes = randomBytes(2 * MiB);
    const url = new URL(await ticket(scope));
    const before = await objects();
    const socket = connect({ host: "127.0.0.1", port: Number(origin.port) });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.on("error", () => {});
    socket.write(
      `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n` +
        `Content-Type: application/octet-stream\r\nContent-Length: ${bytes.length * 2}\r\n\r\n`,
    );
    await new Promise<void>((resolve) => socket.write(bytes, () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await objects()).toEqual(before);
    expect((await files(scope)).files).toEqual([]);
  }, 60_000);

  it("a steady body still going at the total upload timeout gets 408 and leaves no object", async () => {
    const scope = "total";
    const bytes = randomBytes(2 * MiB);
    const url = await ticket(scope);
    const before = await objects();
    // 64 KiB every 100 ms: never idle, fast enough, but about 3 s in all against a 1 s total.
    const { body } = trickle(bytes, 64 * 1024, 100);
    const response = await putStreamed(url, body, bytes.length, { "x-test-upload-timeout": "1000" });
    expect(response.status).toBe(408);
    expect(await errorCode(response)).toBe("REQUEST_TIMEOUT");
    await expectNothingStored(before, scope);
  }, 60_000);

  it("a single-use ticket sent twice at once stores one file: the other upload's object is removed", async () => {
    const scope = "twice";
    const url = await ticket(scope);
    const before = (await objects()).map((o) => o.key);
    const one = randomBytes(MiB + 3);
    const two = randomBytes(MiB + 3);
    const put = (bytes: Uint8Array) =>
      send(url, {
        method: "PUT",
        body: bytes as unknown as BodyInit,
        headers: { "content-type": "application/octet-stream", "content-length": String(bytes.length) },
      });
    const replies = await Promise.all([put(one), put(two)]);
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses[0]).toBe(201);
    expect(statuses[1]).toBeGreaterThanOrEqual(400);
    const stored = (await files(scope)).files.map((f) => f.sha256);
    expect(stored).toHaveLength(1);
    expect([sha256(one), sha256(two)]).toContain(stored[0]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await objects()).filter((o) => !before.includes(o.key))).toHaveLength(1);
  }, 60_000);

  it("store.put of a web stream with a declared size and no digest: a byte more or less is DIGEST_MISMATCH and stores nothing", async () => {
    const scope = "stream-size";
    const n = 3 * MiB + 17;
    const bytes = Uint8Array.from({ length: n }, (_, i) => i % 251);
    const before = await objects();
    const putStream = (total: number, size: number) =>
      json<{ code?: string; file?: { sha256: string; size: number } }>(
        `/test/put-stream?scope=${scope}&bytes=${total}&size=${size}`,
      );
    expect(await putStream(n - 1, n)).toEqual({ code: "DIGEST_MISMATCH" });
    expect(await putStream(n + 1, n)).toEqual({ code: "DIGEST_MISMATCH" });
    expect(await objects()).toEqual(before);
    expect((await putStream(n, n)).file).toMatchObject({ sha256: sha256(bytes), size: n });
  }, 60_000);

  it("a Content-Length over the ticket's maxBytes is refused (413) before the body is sent", async () => {
    const scope = "capped";
    const { upload_url } = await json<{ upload_url: string }>(
      `/test/capped-ticket?scope=${scope}&maxBytes=${MiB}`,
    );
    const before = await objects();
    // Only the head: the answer comes without a byte of the body having been sent.
    const reply = await rawRequest(upload_url, MiB + 1, new Uint8Array(0));
    expect(reply?.status).toBe(413);
    expect(reply?.body.error).toMatchObject({ code: "FILE_TOO_LARGE" });
    expect(await objects()).toEqual(before);
    expect((await files(scope)).files).toEqual([]);
  }, 60_000);
});
