/** tus-js-client (Node) against the tus endpoint: plain, chunked, parallel (concatenation), resumed. */
import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import * as tus from "tus-js-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseUploadHandle } from "../../../src/uploads/upload-handle.js";
import { startTus, type TusHarness } from "./harness.js";

let harness: TusHarness;

beforeEach(async () => {
  harness = await startTus();
});
afterEach(async () => {
  await harness.close();
});

function hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function upload(
  endpoint: string,
  bytes: Buffer,
  options: Partial<tus.UploadOptions> = {},
): Promise<tus.Upload> {
  return new Promise((resolve, reject) => {
    const run: tus.Upload = new tus.Upload(bytes, {
      endpoint,
      metadata: { filename: "data.bin", filetype: "application/octet-stream" },
      retryDelays: [],
      ...options,
      onSuccess: () => resolve(run),
      onError: reject,
    });
    run.start();
  });
}

describe("tus-js-client in Node", () => {
  it("uploads in one PATCH and stores the exact bytes under the ticket's scope", async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const endpoint = await harness.endpoint("scope-a");
    const run = await upload(endpoint, bytes);
    expect(run.url?.startsWith(`${endpoint}/`)).toBe(true);
    expect(run.url).not.toContain("scope-a");
    expect(harness.stored).toHaveLength(1);
    const file = harness.stored[0];
    expect(file?.scope).toBe("scope-a");
    expect(file?.name).toBe("data.bin");
    expect(file?.sha256).toBe(hex(bytes));
    expect(file?.size).toBe(bytes.length);
    expect(await harness.stagingFiles()).toEqual([]);
  });

  it("uploads in 1 MiB chunks and reports progress in offsets", async () => {
    const bytes = randomBytes(5 * 1024 * 1024 + 3);
    const endpoint = await harness.endpoint("scope-a");
    const offsets: number[] = [];
    await upload(endpoint, bytes, {
      chunkSize: 1024 * 1024,
      onChunkComplete: (_size, accepted) => offsets.push(accepted),
    });
    expect(offsets).toEqual([1, 2, 3, 4, 5].map((n) => n * 1024 * 1024).concat(bytes.length));
    expect(harness.stored[0]?.sha256).toBe(hex(bytes));
  });

  it("uploads in parallel (partial + final concatenation) into one file", async () => {
    const bytes = randomBytes(4 * 1024 * 1024 + 5);
    const endpoint = await harness.endpoint("scope-a");
    await upload(endpoint, bytes, { parallelUploads: 4 });
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.sha256).toBe(hex(bytes));
    expect(harness.stored[0]?.size).toBe(bytes.length);
    expect(await harness.stagingFiles()).toEqual([]);
  });

  it("uploads a stream of unknown length (creation-defer-length)", async () => {
    const bytes = randomBytes(2 * 1024 * 1024 + 9);
    const endpoint = await harness.endpoint("scope-a");
    const source = Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]);
    await new Promise<void>((resolve, reject) => {
      const run = new tus.Upload(source as unknown as Buffer, {
        endpoint,
        chunkSize: 512 * 1024,
        uploadLengthDeferred: true,
        retryDelays: [],
        onSuccess: () => resolve(),
        onError: reject,
      });
      run.start();
    });
    expect(harness.stored[0]?.sha256).toBe(hex(bytes));
  });

  it("uses creation-with-upload for the first chunk", async () => {
    const bytes = randomBytes(700 * 1024);
    const endpoint = await harness.endpoint("scope-a");
    await upload(endpoint, bytes, { uploadDataDuringCreation: true, chunkSize: 256 * 1024 });
    expect(harness.stored[0]?.sha256).toBe(hex(bytes));
  });

  it("resumes a stopped upload from the server's offset and answers the ticket's handle", async () => {
    const bytes = randomBytes(4 * 1024 * 1024);
    const endpoint = await harness.endpoint("scope-a", { fileId: "ticket-resume" });
    let first: tus.Upload | undefined;
    await new Promise<void>((resolve, reject) => {
      first = new tus.Upload(bytes, {
        endpoint,
        chunkSize: 1024 * 1024,
        retryDelays: [],
        onChunkComplete: (_size, accepted) => {
          if (accepted >= 2 * 1024 * 1024) {
            void first?.abort().then(resolve);
          }
        },
        onSuccess: () => reject(new Error("should not finish")),
        onError: reject,
      });
      first.start();
    });
    const url = first?.url as string;
    const head = await fetch(url, { method: "HEAD", headers: { "tus-resumable": "1.0.0" } });
    expect(head.headers.get("upload-offset")).toBe(String(2 * 1024 * 1024));
    let handle: string | null = null;
    const sent: number[] = [];
    await upload(endpoint, bytes, {
      uploadUrl: url,
      chunkSize: 1024 * 1024,
      onChunkComplete: (size) => sent.push(size),
      onAfterResponse: (_req, res) => {
        handle = res.getHeader("upload-handle") ?? handle;
      },
    });
    expect(sent.reduce((a, b) => a + b, 0)).toBe(2 * 1024 * 1024);
    expect(harness.stored[0]?.sha256).toBe(hex(bytes));
    expect(parseUploadHandle(handle ?? "")?.id).toBe("ticket-resume");
  });
});
