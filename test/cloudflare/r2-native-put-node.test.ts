/**
 * `r2Store` outside workerd (review of issue 46): there is no `FixedLengthStream` and R2's own
 * digest check is not what the put takes, so the bytes pass through JavaScript like any other
 * upload. A body with a declared sha-256 must then keep every clock of the routes (idle, rate), not
 * only the total one the native put is left with. Run in Node on a small in-memory bucket.
 */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { r2Store } from "../../src/cloudflare/index.js";
import { hashedPutFits, MAX_SINGLE_PUT } from "../../src/cloudflare/r2-hashed-put.js";
import { createFileRoutes, memoryState, SignedUrlMinter, UploadHandleResolver } from "../../src/index.js";
import { streamOfChunks } from "../../src/internal/web-chunks.js";
import { planPut } from "../../src/storage/kit/put-plan.js";
import { bucketValueBytes } from "./bucket-value.js";

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The few bucket calls a single-part put, its read-back and its removal make. */
function memoryBucket() {
  const objects = new Map<string, Uint8Array>();
  const bytesOf = bucketValueBytes;
  const bucket = {
    async head(key: string) {
      const bytes = objects.get(key);
      return bytes ? { key, size: bytes.byteLength, uploaded: new Date() } : null;
    },
    async get(key: string) {
      const bytes = objects.get(key);
      if (!bytes) return null;
      return {
        key,
        size: bytes.byteLength,
        uploaded: new Date(),
        body: new Blob([Buffer.from(bytes)]).stream(),
        text: async () => new TextDecoder().decode(bytes),
        arrayBuffer: async () => bytes.slice().buffer,
      };
    },
    async put(key: string, value: unknown) {
      if (value instanceof ReadableStream) throw new Error("this bucket takes bytes only");
      objects.set(key, bytesOf(value));
      return { key, size: objects.get(key)?.byteLength };
    },
    async delete(keys: string | string[]) {
      for (const key of Array.isArray(keys) ? keys : [keys]) objects.delete(key);
    },
    async list() {
      return { objects: [], truncated: false };
    },
    async createMultipartUpload() {
      throw new Error("not used by a single-part put");
    },
    resumeMultipartUpload() {
      throw new Error("not used by a single-part put");
    },
  };
  return { bucket, objects };
}

function setup(routeOptions: { idleTimeout?: number; uploadTimeout?: number } = {}) {
  const { bucket, objects } = memoryBucket();
  const store = r2Store({ bucket: bucket as never, keySecret: "k".repeat(32), partSize: 5 * MiB });
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://files.test", state });
  const routes = createFileRoutes({ store, minter, state, maxBytes: 8 * MiB, ...routeOptions });
  const uploads = new UploadHandleResolver({ store, minter, state, maxBytes: 8 * MiB, maxFiles: 1 });
  return { routes, uploads, objects };
}

interface Reply {
  error: { code: string };
  files: { size: number; sha256: string }[];
}

describe("r2Store outside workerd: a declared digest keeps the routes' clocks", () => {
  it("a stalled body with X-Content-SHA256 ends at the idle timeout, not the total one", async () => {
    const { routes, uploads, objects } = setup({ idleTimeout: 0.3, uploadTimeout: 8 });
    const bytes = randomBytes(MiB);
    const ticket = await uploads.createTicket("stalled");
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return new Promise<void>(() => {});
        sent = true;
        controller.enqueue(bytes.subarray(0, MiB / 2));
      },
    });
    const started = Date.now();
    const response = (await routes(
      new Request(ticket.upload_url, {
        method: "PUT",
        body,
        duplex: "half",
        headers: {
          "content-type": "application/octet-stream",
          "content-length": String(bytes.length),
          "x-content-sha256": sha256(bytes),
        },
      } as RequestInit),
    )) as Response;
    expect(response.status).toBe(408);
    const error = ((await response.json()) as { error: { code: string } }).error;
    expect(error.code).toBe("REQUEST_TIMEOUT");
    // The idle clock (0.3 s) ended it, long before the total one (8 s).
    expect(Date.now() - started).toBeLessThan(4000);
    expect(objects.size).toBe(0);
  }, 20_000);

  it("a declared digest is still checked on the bytes (right: stored; wrong: DIGEST_MISMATCH, nothing left)", async () => {
    const { routes, uploads, objects } = setup();
    const bytes = randomBytes(MiB + 7);
    const send = async (digest: string) => {
      const ticket = await uploads.createTicket("checked");
      const response = (await routes(
        new Request(ticket.upload_url, {
          method: "PUT",
          body: bytes,
          headers: { "content-type": "application/octet-stream", "x-content-sha256": digest },
        }),
      )) as Response;
      return { status: response.status, body: (await response.json()) as Reply };
    };
    const wrong = await send(sha256(randomBytes(4)));
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe("DIGEST_MISMATCH");
    expect(dataKeys(objects)).toEqual([]);
    const right = await send(sha256(bytes));
    expect(right.status).toBe(201);
    expect(right.body.files[0]).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
  }, 15_000);
});

/**
 * workerd's `FixedLengthStream`, as far as the native put relies on it: fails on a byte more or
 * less, and a write ends once its bytes are copied out to the reader (workerd copies them into the
 * reader's buffer before it ends the write; a write here waits for the reader to pull).
 */
class FixedLengthStreamLike {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
  constructor(length: number) {
    let seen = 0;
    const through = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > length) throw new TypeError("FixedLengthStream: too many bytes");
        controller.enqueue(chunk.slice());
      },
      flush() {
        if (seen !== length) throw new TypeError("FixedLengthStream: too few bytes");
      },
    });
    this.readable = through.readable;
    this.writable = through.writable;
  }
}

/** Runs `body` with workerd's `FixedLengthStream` stood in for, and takes it away after. */
async function withFixedLengthStream(body: () => unknown): Promise<void> {
  const global = globalThis as { FixedLengthStream?: unknown };
  global.FixedLengthStream = FixedLengthStreamLike;
  try {
    await body();
  } finally {
    delete global.FixedLengthStream;
  }
}

/** `bytes` as a web stream of `piece`-byte chunks, all there at once. */
function chunked(bytes: Uint8Array, piece: number): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += piece) controller.enqueue(bytes.subarray(at, at + piece));
      controller.close();
    },
  });
}

/** How a put ends: `"stored"`, its error's `code`, or `"still waiting"` after 3 s (a hang). */
function outcomeWithin(put: Promise<unknown>): Promise<unknown> {
  return Promise.race([
    put.then(
      () => "stored",
      (error: { code?: string }) => error.code,
    ),
    new Promise((resolve) => setTimeout(() => resolve("still waiting"), 3000)),
  ]);
}

/** The keys of data objects (`/d/`) in a bucket stand-in's objects. */
const dataKeys = (objects: Map<string, unknown>) => [...objects.keys()].filter((key) => key.includes("/d/"));

describe("r2Store's native put (workerd's FixedLengthStream stood in for)", () => {
  it("a put that R2 fails without reading the fixed-length stream ends (STORAGE_ERROR), it does not hang", async () => {
    await withFixedLengthStream(async () => {
      const { bucket, objects } = memoryBucket();
      let streamPuts = 0;
      const failing = {
        ...bucket,
        async put(key: string, value: unknown) {
          if (!(value instanceof ReadableStream)) return bucket.put(key, value);
          // As R2: a stream of unknown length is refused before it is read; then the fixed-length
          // one fails on R2's side before R2 read any of it.
          if (++streamPuts === 1) throw new TypeError("Provided readable stream must have a known length");
          throw new Error("We encountered an internal error. Please try again. (10001)");
        },
      };
      const store = r2Store({ bucket: failing as never, keySecret: "k".repeat(32), partSize: 5 * MiB });
      expect(store.nativeDigest).toBe(true);
      const bytes = randomBytes(2 * MiB);
      const source = chunked(bytes, 64 * 1024);
      const outcome = await outcomeWithin(
        store.put(source, {
          scope: "s",
          name: "f.bin",
          expectedSize: bytes.length,
          expectedSha256: sha256(bytes),
        }),
      );
      expect(outcome).toBe("STORAGE_ERROR");
      expect(dataKeys(objects)).toEqual([]);
    });
  }, 15_000);

  it("a hashed single put is taken only for a sized web stream with no digest, within R2's single-put limit", async () => {
    await withFixedLengthStream(() => {
      const stream = () => new ReadableStream<Uint8Array>();
      const plan = (options: { expectedSize?: number; expectedSha256?: string }) =>
        planPut({ scope: "s", name: "f.bin", ...options }, Date.now());
      expect(hashedPutFits(stream(), plan({ expectedSize: MAX_SINGLE_PUT }))).toBe(true);
      expect(hashedPutFits(stream(), plan({ expectedSize: MAX_SINGLE_PUT + 1 }))).toBe(false);
      expect(hashedPutFits(stream(), plan({}))).toBe(false);
      expect(hashedPutFits(stream(), plan({ expectedSize: 10, expectedSha256: "0".repeat(64) }))).toBe(false);
      expect(hashedPutFits(new Uint8Array(10), plan({ expectedSize: 10 }))).toBe(false);
    });
    // Off workerd (no FixedLengthStream) never.
    expect(
      hashedPutFits(
        new ReadableStream<Uint8Array>(),
        planPut({ scope: "s", name: "f", expectedSize: 10 }, 0),
      ),
    ).toBe(false);
  });

  it("a hashed put (size, no digest) that R2 fails without reading its stream ends (STORAGE_ERROR), it does not hang", async () => {
    await withFixedLengthStream(async () => {
      const { bucket, objects } = memoryBucket();
      const failing = {
        ...bucket,
        async put(key: string, value: unknown) {
          if (!(value instanceof ReadableStream)) return bucket.put(key, value);
          // R2 failing on its side before it read any of the stream.
          throw new Error("We encountered an internal error. Please try again. (10001)");
        },
      };
      const store = r2Store({ bucket: failing as never, keySecret: "k".repeat(32), partSize: 5 * MiB });
      const bytes = randomBytes(3 * MiB);
      const source = chunked(bytes, 64 * 1024);
      const outcome = await outcomeWithin(
        store.put(source, { scope: "s", name: "f.bin", expectedSize: bytes.length }),
      );
      expect(outcome).toBe("STORAGE_ERROR");
      expect(dataKeys(objects)).toEqual([]);
    });
  }, 15_000);

  it("an abort while R2 is slow to take the stream ends a hashed put at once (ABORTED); what R2 stores later goes", async () => {
    await withFixedLengthStream(async () => {
      const { bucket, objects } = memoryBucket();
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const stalling = {
        ...bucket,
        async put(key: string, value: unknown) {
          if (!(value instanceof ReadableStream)) return bucket.put(key, value);
          // R2 takes the first chunk, then its upstream stalls until `release`; then it takes the
          // rest and stores what it got (a put cannot be cancelled).
          const reader = (value as ReadableStream<Uint8Array>).getReader();
          const chunks: Uint8Array[] = [];
          const first = await reader.read();
          if (first.value) chunks.push(first.value);
          await released;
          try {
            for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
          } catch {
            // The stream was aborted: R2 stores what it had (the worst case for a leftover).
          }
          return bucket.put(key, Buffer.concat(chunks));
        },
      };
      const store = r2Store({ bucket: stalling as never, keySecret: "k".repeat(32), partSize: 5 * MiB });
      const bytes = randomBytes(4 * MiB);
      const source = chunked(bytes, 256 * 1024);
      const abort = new AbortController();
      setTimeout(() => abort.abort(new Error("the route's timeout")), 200);
      const outcome = await outcomeWithin(
        store.put(source, { scope: "s", name: "f.bin", expectedSize: bytes.length, signal: abort.signal }),
      );
      release();
      expect(outcome).toBe("ABORTED");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(dataKeys(objects)).toEqual([]);
    });
  }, 15_000);

  it("a hashed put of a stream already locked fails as the other stores do (STORAGE_ERROR) and leaves no put waiting", async () => {
    await withFixedLengthStream(async () => {
      const { bucket, objects } = memoryBucket();
      let waiting = 0;
      const reading = {
        ...bucket,
        async put(key: string, value: unknown) {
          if (!(value instanceof ReadableStream)) return bucket.put(key, value);
          waiting++;
          try {
            const bytes = new Uint8Array(await new Response(value as ReadableStream).arrayBuffer());
            return await bucket.put(key, bytes);
          } finally {
            waiting--;
          }
        },
      };
      const store = r2Store({ bucket: reading as never, keySecret: "k".repeat(32), partSize: 5 * MiB });
      const source = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(64 * 1024));
          controller.close();
        },
      });
      source.getReader();
      const code = await store.put(source, { scope: "s", name: "f.bin", expectedSize: 64 * 1024 }).then(
        () => "stored",
        (error: { code?: string }) => error.code,
      );
      expect(code).toBe("STORAGE_ERROR");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(waiting).toBe(0);
      expect(dataKeys(objects)).toEqual([]);
    });
  }, 15_000);
  it("a hashed put hands each chunk back only once R2 has taken it, never the one in flight: the bytes stored are exact", async () => {
    await withFixedLengthStream(async () => {
      const { bucket, objects } = memoryBucket();
      const copying = {
        ...bucket,
        async put(key: string, value: unknown) {
          if (!(value instanceof ReadableStream)) return bucket.put(key, value);
          // As R2: each chunk is copied out when it is read (the stand-in FixedLengthStream copies
          // a write when the reader pulls it), by a reader slower than the writer, so writes wait.
          const copies: Uint8Array[] = [];
          const reader = (value as ReadableStream<Uint8Array>).getReader();
          for (let r = await reader.read(); !r.done; r = await reader.read()) {
            copies.push(r.value);
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
          return bucket.put(key, Buffer.concat(copies));
        },
      };
      const store = r2Store({ bucket: copying as never, keySecret: "k".repeat(32), partSize: 5 * MiB });
      const bytes = randomBytes(8 * 64 * 1024 + 5);
      // Copies: the reads own their chunks' buffers.
      const pieces: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; at += 64 * 1024)
        pieces.push(new Uint8Array(bytes.subarray(at, at + 64 * 1024)));
      const released: Uint8Array[] = [];
      // Reads whose released chunks are overwritten at once, as a read into their buffer would.
      const source = streamOfChunks({
        read: async () => pieces.shift(),
        release(chunk) {
          released.push(chunk);
          chunk.fill(0xee);
        },
        cancel: async () => {},
      });
      const file = await store.put(source, { scope: "s", name: "f.bin", expectedSize: bytes.length });
      expect(file.sha256).toBe(sha256(bytes));
      const stored = [...objects.entries()].filter(([key]) => key.includes("/d/"));
      expect(stored).toHaveLength(1);
      expect(sha256(stored[0]?.[1] as Uint8Array)).toBe(sha256(bytes));
      // Every chunk but the last went back to the reads, each once.
      expect(released).toHaveLength(8);
      expect(new Set(released).size).toBe(8);
    });
  }, 15_000);
});
