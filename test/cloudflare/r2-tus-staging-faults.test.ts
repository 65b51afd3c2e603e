/**
 * `r2TusStaging` when a step fails halfway (review of issue 46): run in Node on a small in-memory
 * bucket that keeps R2's rules (every part of a multipart upload but the last of one size, a
 * completion naming the parts), so a state store that fails once, or a foreign object under the
 * staging prefix, can be arranged exactly. The end-to-end behaviour in workerd is
 * `r2-tus.test.ts`.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { r2TusStaging } from "../../src/cloudflare/index.js";
import { memoryState } from "../../src/index.js";
import { readAll } from "../../src/testing/index.js";
import { stateFailingOnce } from "../support/failing-state.js";
import { bucketValueBytes } from "./bucket-value.js";

const MiB = 1024 * 1024;

interface Stored {
  bytes: Uint8Array;
  uploaded: Date;
  customMetadata?: Record<string, string>;
}

/** An in-memory R2 bucket with R2's multipart rules. */
function memoryBucket() {
  const objects = new Map<string, Stored>();
  const uploads = new Map<string, { key: string; parts: Map<number, { etag: string; bytes: Uint8Array }> }>();
  let next = 0;
  const bytesOf = bucketValueBytes;
  const multipart = (key: string, uploadId: string) => ({
    uploadId,
    async uploadPart(n: number, value: ArrayBufferView) {
      const upload = uploads.get(uploadId);
      if (!upload || upload.key !== key) throw new Error("no such multipart upload");
      const etag = `e${++next}`;
      upload.parts.set(n, { etag, bytes: bytesOf(value) });
      return { partNumber: n, etag };
    },
    async abort() {
      if (!uploads.delete(uploadId)) throw new Error("no such multipart upload");
    },
    async complete(parts: { partNumber: number; etag: string }[]) {
      const upload = uploads.get(uploadId);
      if (!upload) throw new Error("no such multipart upload");
      const chosen = parts.map(({ partNumber, etag }) => {
        const part = upload.parts.get(partNumber);
        if (part?.etag !== etag) throw new Error("unknown part");
        return part.bytes;
      });
      const size = chosen[0]?.byteLength ?? 0;
      if (chosen.slice(0, -1).some((part) => part.byteLength !== size))
        throw new Error("parts differ in size");
      objects.set(key, { bytes: Buffer.concat(chosen), uploaded: new Date() });
      uploads.delete(uploadId);
    },
  });
  const bucket = {
    async head(key: string) {
      const object = objects.get(key);
      return object ? { key, size: object.bytes.byteLength, ...object } : null;
    },
    async get(key: string, options?: { range?: { offset: number; length: number } }) {
      const object = objects.get(key);
      if (!object) return null;
      const { offset = 0, length = object.bytes.byteLength } = options?.range ?? {};
      const bytes = object.bytes.subarray(offset, offset + length);
      return {
        key,
        size: object.bytes.byteLength,
        uploaded: object.uploaded,
        body: new Blob([Buffer.from(bytes)]).stream(),
        text: async () => new TextDecoder().decode(bytes),
      };
    },
    async put(key: string, value: unknown, options?: { customMetadata?: Record<string, string> }) {
      objects.set(key, {
        bytes: bytesOf(value),
        uploaded: new Date(),
        ...(options?.customMetadata ? { customMetadata: options.customMetadata } : {}),
      });
      return { key };
    },
    async delete(keys: string | string[]) {
      for (const key of Array.isArray(keys) ? keys : [keys]) objects.delete(key);
    },
    async list(options: { prefix?: string } = {}) {
      const prefix = options.prefix ?? "";
      const found = [...objects.entries()]
        .filter(([key]) => key.startsWith(prefix))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, object]) => ({ key, size: object.bytes.byteLength, ...object }));
      return { objects: found, truncated: false };
    },
    async createMultipartUpload(key: string) {
      const uploadId = `u${++next}`;
      uploads.set(uploadId, { key, parts: new Map() });
      return multipart(key, uploadId);
    },
    resumeMultipartUpload(key: string, uploadId: string) {
      return multipart(key, uploadId);
    },
  };
  return { bucket, objects, uploads };
}

describe("r2TusStaging, failures halfway", () => {
  it("a part recorded late (the state store failed once) is not counted again as the tail", async () => {
    const { bucket } = memoryBucket();
    // set #1: create; #2: the record after the first part (fails); #3: the record at the body's end.
    const staging = r2TusStaging({ bucket: bucket as never, state: stateFailingOnce(2), partSize: 5 * MiB });
    await staging.create("a1", Date.now() + 3_600_000);
    const bytes = randomBytes(5 * MiB + 1000);
    const result = await staging.write("a1", 0, Readable.from([bytes]));
    expect(result.error).toBeDefined();
    // Never more than arrived, and exactly what the staging holds.
    expect(result.written).toBeLessThanOrEqual(bytes.length);
    const size = (await staging.size?.("a1")) as number;
    expect(size).toBe(result.written);
    const held = await readAll(staging.read("a1", size));
    expect(held.equals(bytes.subarray(0, size))).toBe(true);
  });

  it("the rest of the upload continues after such a failure and reads back exactly", async () => {
    const { bucket } = memoryBucket();
    const staging = r2TusStaging({ bucket: bucket as never, state: stateFailingOnce(2), partSize: 5 * MiB });
    await staging.create("a2", Date.now() + 3_600_000);
    const bytes = randomBytes(11 * MiB + 77);
    const first = await staging.write("a2", 0, Readable.from([bytes.subarray(0, 6 * MiB)]));
    const offset = (await staging.size?.("a2")) as number;
    expect(offset).toBe(first.written);
    const second = await staging.write("a2", offset, Readable.from([bytes.subarray(offset)]));
    expect(second.error).toBeUndefined();
    expect(await staging.size?.("a2")).toBe(bytes.length);
    expect((await readAll(staging.read("a2", bytes.length))).equals(bytes)).toBe(true);
  });
});

describe("r2TusStaging's sweep and the rest of the bucket", () => {
  it("leaves objects under its prefix that are not staged uploads", async () => {
    const { bucket, objects } = memoryBucket();
    const staging = r2TusStaging({ bucket: bucket as never, state: memoryState(), prefix: "stage/" });
    await bucket.put("stage/notes.txt", "not ours");
    await bucket.put("stage/k00/d/file", "not ours either");
    await bucket.put("elsewhere", "outside the prefix");
    // An abandoned upload's tail (no record, no marker): the sweep's to remove after a day.
    await bucket.put(`stage/${"A".repeat(22)}.0a0b0c0d0e0f.tail`, "orphan");
    expect(await staging.sweep(Date.now() + 2 * 86_400_000)).toBe(1);
    expect([...objects.keys()].sort()).toEqual(["elsewhere", "stage/k00/d/file", "stage/notes.txt"]);
  });

  it("refuses an empty prefix (its sweep would walk the whole bucket) with INVALID_OPTION", () => {
    const { bucket } = memoryBucket();
    expect(() => r2TusStaging({ bucket: bucket as never, state: memoryState(), prefix: "" })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "prefix" } }),
    );
  });
});

describe("r2TusStaging's objects", () => {
  it("bodies under a checksum (provisional, then confirmed) leave no superseded tail objects", async () => {
    const { bucket, objects } = memoryBucket();
    const staging = r2TusStaging({ bucket: bucket as never, state: memoryState(), prefix: "stage/" });
    const id = "B".repeat(22);
    await staging.create(id, Date.now() + 3_600_000);
    const bytes = randomBytes(10 * 1000);
    for (let offset = 0; offset < bytes.length; offset += 1000) {
      const result = await staging.write(
        id,
        offset,
        Readable.from([bytes.subarray(offset, offset + 1000)]),
        undefined,
        {
          provisional: true,
        },
      );
      expect(result.error).toBeUndefined();
      await staging.confirm?.(id);
    }
    expect(await staging.size?.(id)).toBe(bytes.length);
    const tails = [...objects.keys()].filter((key) => key.endsWith(".tail"));
    // The current tail, and the one before it (what a refused body is cut back to).
    expect(tails.length).toBeLessThanOrEqual(2);
    expect((await readAll(staging.read(id, bytes.length))).equals(bytes)).toBe(true);
  });

  it("removal deletes more than 1,000 objects of an upload (R2 deletes at most 1,000 keys a call)", async () => {
    const { bucket, objects } = memoryBucket();
    const limited = {
      ...bucket,
      async delete(keys: string | string[]) {
        if (Array.isArray(keys) && keys.length > 1000) throw new Error("at most 1000 keys per delete");
        return await bucket.delete(keys);
      },
    };
    const staging = r2TusStaging({ bucket: limited as never, state: memoryState(), prefix: "stage/" });
    const id = "C".repeat(22);
    await staging.create(id, Date.now() + 3_600_000);
    // Tails left by requests that died before recording them.
    for (let i = 0; i < 1005; i++)
      await bucket.put(`stage/${id}.${i.toString(16).padStart(12, "0")}.tail`, "x");
    await staging.remove(id);
    expect([...objects.keys()]).toEqual([]);
  });
});
