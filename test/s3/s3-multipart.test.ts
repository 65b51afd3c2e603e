import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { GetObjectCommand, GetObjectTaggingCommand, type S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithServices, requireServices } from "../../scripts/services/test-env.js";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import { S3Multipart } from "../../src/s3/s3-multipart.js";
import { s3Store } from "../../src/s3/s3-store.js";
import { codeOf, readAll } from "../../src/testing/index.js";
import { connection, objectKeys, pendingUploads, testClient } from "./s3-helpers.js";

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const prefix = (label: string) => `${label}-${randomBytes(6).toString("hex")}/`;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A test client that records the name of every command it sends. */
function recordingClient(): { client: S3Client; commands: string[] } {
  const client = testClient();
  const commands: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      commands.push(context.commandName as string);
      return next(args);
    },
    { step: "initialize", name: "recordCommands" },
  );
  return { client, commands };
}

/** `bytes` in chunks of varying sizes (a few KiB to a few MiB), as a network source produces them. */
async function* unevenChunks(bytes: Buffer): AsyncGenerator<Buffer> {
  const sizes = [7 * 1024, 300 * 1024, 2 * MiB + 3, 64 * 1024, 3 * MiB - 1];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length] as number;
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

/** An s3Store on the test bucket that sends through `client`, in parts of {@link PART}. */
function storeThrough(client: S3Client, prefix: string, options: { queueSize?: number } = {}) {
  return s3Store({
    bucket: requireServices().s3.bucket,
    client,
    prefix,
    partSize: PART,
    sweepInterval: 0,
    ...options,
  });
}

function storageError(action: string, cause: unknown): FileBridgeError {
  return new FileBridgeError("STORAGE_ERROR", `s3: could not ${action}`, { cause });
}

describeWithServices("s3Store puts through its own multipart uploader (bounded part buffers)", () => {
  let client: S3Client;
  beforeAll(() => {
    client = testClient();
  });
  afterAll(() => client.destroy());

  it("round-trips sizes around the part boundary: one PutObject up to partSize, multipart past it", async () => {
    const p = prefix("sizes");
    const recorded = recordingClient();
    const store = storeThrough(recorded.client, p);
    const cases: Array<{ size: number; parts: number }> = [
      { size: 0, parts: 0 },
      { size: 1, parts: 0 },
      { size: MiB + 1, parts: 0 },
      { size: PART - 1, parts: 0 },
      { size: PART, parts: 0 },
      { size: PART + 1, parts: 2 },
      { size: 3 * PART, parts: 3 },
      { size: 3 * PART + 12_345, parts: 4 },
    ];
    await store.list("s"); // the store's first call loads its scope-folder secret, once
    for (const { size, parts } of cases) {
      const bytes = randomBytes(size);
      recorded.commands.length = 0;
      const file = await store.put(unevenChunks(bytes), { scope: "s", name: `${size}.bin` });
      const sent = [...recorded.commands];
      expect(file.size).toBe(size);
      expect(file.sha256).toBe(sha256(bytes));
      const back = await readAll(await store.read("s", file.id));
      expect(back.length).toBe(size);
      expect(back.equals(bytes)).toBe(true);
      const count = (command: string) => sent.filter((name) => name === command).length;
      if (parts === 0) {
        // The bytes, then the metadata: two PutObjects, no multipart upload.
        expect(sent).toEqual(["PutObjectCommand", "PutObjectCommand"]);
      } else {
        expect(count("CreateMultipartUploadCommand")).toBe(1);
        expect(count("UploadPartCommand")).toBe(parts);
        expect(count("CompleteMultipartUploadCommand")).toBe(1);
        expect(count("PutObjectCommand")).toBe(1); // the metadata
      }
    }
    // A body in memory (one chunk) of several parts, and one within the first part.
    for (const size of [2 * PART + 5, 3 * MiB]) {
      const bytes = randomBytes(size);
      const file = await store.put(bytes, { scope: "s", name: "memory.bin" });
      expect(file.sha256).toBe(sha256(bytes));
      expect((await readAll(await store.read("s", file.id))).equals(bytes)).toBe(true);
    }
    expect(await pendingUploads(client, p)).toEqual([]);
    await store.close?.();
    recorded.client.destroy();
  });

  it("a multipart put of a file with a TTL is tagged for the lifecycle rules", async () => {
    const p = prefix("mp-tag");
    const store = s3Store({ ...connection(), prefix: p, partSize: PART, lifecycle: true, sweepInterval: 0 });
    const file = await store.put(unevenChunks(randomBytes(PART + 10)), { scope: "s", name: "t", ttl: "36h" });
    const key = (await objectKeys(client, p)).find((k) => k.endsWith(file.id)) as string;
    const tags = await client.send(
      new GetObjectTaggingCommand({ Bucket: requireServices().s3.bucket, Key: key }),
    );
    expect(tags.TagSet).toEqual([{ Key: "mfb-expire-days", Value: "2" }]);
    await store.close?.();
  });

  it("a source that fails mid-part leaves no object, no metadata and no multipart upload", async () => {
    const p = prefix("source-error");
    const store = s3Store({ ...connection(), prefix: p, partSize: PART, sweepInterval: 0 });
    for (const failAfter of [100 * 1024, PART + 2 * MiB, 3 * PART + MiB]) {
      let sawPending = failAfter < PART;
      const source = (async function* () {
        for (let sent = 0; sent < failAfter; sent += 512 * 1024) yield randomBytes(512 * 1024);
        // Past the first part the multipart upload exists: wait until S3 lists it, then fail.
        for (let i = 0; i < 50 && !sawPending; i++) {
          sawPending = (await pendingUploads(client, p)).length > 0;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new FileBridgeError("INVALID_INPUT", "the client went away");
      })();
      expect(await codeOf(store.put(source, { scope: "s", name: "broken.bin" }))).toBe("INVALID_INPUT");
      expect(sawPending).toBe(true);
      expect(await objectKeys(client, p)).toEqual([]);
      expect(await pendingUploads(client, p)).toEqual([]);
      expect((await store.list("s")).files).toEqual([]);
    }
    await store.close?.();
  });

  it("over maxBytes, a declared size or sha256 that does not match: the error code, and nothing left", async () => {
    const p = prefix("refused");
    const store = s3Store({ ...connection(), prefix: p, partSize: PART, sweepInterval: 0 });
    const bytes = randomBytes(2 * PART + 3);
    const bad = "0".repeat(64);
    // One after another: each put is started only when the one before has failed.
    const attempts: Array<[() => Promise<unknown>, string]> = [
      [() => store.put(unevenChunks(bytes), { scope: "s", name: "a", maxBytes: 2 * MiB }), "FILE_TOO_LARGE"],
      [() => store.put(unevenChunks(bytes), { scope: "s", name: "b", maxBytes: 2 * PART }), "FILE_TOO_LARGE"],
      [
        () => store.put(unevenChunks(bytes), { scope: "s", name: "c", expectedSha256: bad }),
        "DIGEST_MISMATCH",
      ],
      [
        () => store.put(unevenChunks(bytes), { scope: "s", name: "d", expectedSize: bytes.length + 1 }),
        "DIGEST_MISMATCH",
      ],
      [
        () => store.stage(unevenChunks(bytes), { scope: "s", name: "e", expectedSha256: bad }),
        "DIGEST_MISMATCH",
      ],
      [
        () => store.put(unevenChunks(bytes.subarray(0, 100)), { scope: "s", name: "f", expectedSha256: bad }),
        "DIGEST_MISMATCH",
      ],
    ];
    for (const [attempt, code] of attempts) expect(await codeOf(attempt())).toBe(code);
    expect(await objectKeys(client, p)).toEqual([]);
    expect(await pendingUploads(client, p)).toEqual([]);
    await store.close?.();
  });

  it("an S3 error on a part (radosgw refuses its Content-MD5) is STORAGE_ERROR and leaves nothing", async () => {
    const p = prefix("part-error");
    const broken = testClient();
    broken.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { PartNumber?: number };
        const request = args.request as { headers?: Record<string, string> };
        // A digest the part does not have: the server answers BadDigest.
        if (input.PartNumber === 2 && request.headers)
          request.headers["content-md5"] = "AAAAAAAAAAAAAAAAAAAAAA==";
        return next(args);
      },
      { step: "build", name: "wrongDigestOnPart2" },
    );
    const store = storeThrough(broken, p);
    const failure = await store.put(unevenChunks(randomBytes(4 * PART)), { scope: "s", name: "x" }).then(
      () => undefined,
      (error: unknown) => error as FileBridgeError,
    );
    expect(failure?.code).toBe("STORAGE_ERROR");
    expect((failure?.cause as { name?: string } | undefined)?.name).toBe("BadDigest");
    expect(await objectKeys(client, p)).toEqual([]);
    expect(await pendingUploads(client, p)).toEqual([]);
    await store.close?.();
    broken.destroy();
  });

  it("an abort while parts are in flight is ABORTED and leaves nothing", async () => {
    const p = prefix("abort-in-flight");
    const slow = testClient();
    const controller = new AbortController();
    let partsStarted = 0;
    slow.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "UploadPartCommand" && ++partsStarted === 3) controller.abort();
        return next(args);
      },
      { step: "initialize", name: "abortOnThirdPart" },
    );
    const store = storeThrough(slow, p, { queueSize: 2 });
    const put = store.put(unevenChunks(randomBytes(8 * PART)), {
      scope: "s",
      name: "x",
      signal: controller.signal,
    });
    expect(await codeOf(put)).toBe("ABORTED");
    expect(partsStarted).toBe(3);
    expect(await objectKeys(client, p)).toEqual([]);
    expect(await pendingUploads(client, p)).toEqual([]);
    await store.close?.();
    slow.destroy();
  });

  it("never makes more than queueSize + 1 part buffers, and stops reading while all are taken", async () => {
    const { bucket } = requireServices().s3;
    const key = `${prefix("pool")}object`;
    const queueSize = 2;
    const slow = testClient();
    let inFlight = 0;
    let maxInFlight = 0;
    let produced = 0;
    let acknowledged = 0;
    let maxUnacknowledged = 0;
    // S3 answers each part 300 ms late, so the parts pile up while the source could go on.
    slow.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "UploadPartCommand") return next(args);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        maxUnacknowledged = Math.max(maxUnacknowledged, produced - acknowledged);
        const result = await next(args);
        await new Promise((r) => setTimeout(r, 300));
        acknowledged += (args.input as { ContentLength: number }).ContentLength;
        inFlight--;
        return result;
      },
      { step: "initialize", name: "slowParts" },
    );
    const allocations: number[] = [];
    const sink = new S3Multipart({
      client: slow,
      bucket,
      key,
      partSize: PART,
      queueSize,
      error: storageError,
      allocate: (size) => {
        allocations.push(size);
        return Buffer.allocUnsafeSlow(size);
      },
    });
    const bytes = randomBytes(12 * PART + 77);
    const source = Readable.from(
      (async function* () {
        for (let at = 0; at < bytes.length; at += MiB) {
          const chunk = bytes.subarray(at, at + MiB);
          produced += chunk.length;
          maxUnacknowledged = Math.max(maxUnacknowledged, produced - acknowledged);
          yield chunk;
        }
      })(),
    );
    await pipeline(source, sink);
    expect(allocations).toEqual(Array(queueSize + 1).fill(PART));
    expect(maxInFlight).toBe(queueSize);
    // Read but not yet acknowledged: the parts in flight, the one filling, and a chunk or two in
    // the stream buffers between; never the rest of the source.
    expect(maxUnacknowledged).toBeLessThanOrEqual((queueSize + 1) * PART + 3 * MiB);
    const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const back = Buffer.from((await response.Body?.transformToByteArray()) ?? []);
    expect(sha256(back)).toBe(sha256(bytes));
    const { DeleteObjectCommand } = await import("@aws-sdk/client-s3");
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    slow.destroy();
  });

  it("discard after a failed stream aborts the multipart upload it started", async () => {
    const { bucket } = requireServices().s3;
    const p = prefix("discard");
    const sink = new S3Multipart({
      client,
      bucket,
      key: `${p}object`,
      partSize: PART,
      queueSize: 2,
      error: storageError,
    });
    const source = Readable.from(
      (async function* () {
        for (let i = 0; i < 12; i++) yield randomBytes(MiB);
        throw new Error("source broke");
      })(),
    );
    await expect(pipeline(source, sink)).rejects.toThrow("source broke");
    await sink.discard();
    expect(await objectKeys(client, p)).toEqual([]);
    expect(await pendingUploads(client, p)).toEqual([]);
  });
});
