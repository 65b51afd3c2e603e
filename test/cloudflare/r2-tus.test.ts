/**
 * tus uploads staged in R2 (issue 46), run in workerd through miniflare: our routes on an `r2Store`
 * and a `durableObjectState`, the tus endpoint given no staging (it must take the one the store
 * offers). The client side follows the tus 1.0 core protocol and its creation and termination
 * extensions as the spec words them: `POST` with `Upload-Length` answers 201 and a `Location`;
 * `PATCH` with `Content-Type: application/offset+octet-stream` and the `Upload-Offset` the server
 * holds answers 204 and the new `Upload-Offset`; a `PATCH` whose offset differs answers 409 Conflict
 * "and MUST NOT modify" the upload; `HEAD` answers the offset (how a client resumes); `DELETE`
 * answers 204 and the upload is gone (404 or 410 after it). Workerd is started again between
 * requests (local R2 and Durable Objects persisted on disk), so a resume truly comes from a new
 * isolate with nothing in memory.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { r2TusStaging } from "../../src/cloudflare/index.js";
import { memoryState } from "../../src/index.js";
import { bundleWorker, startWorker, workerRequests } from "./workerd.js";

const MiB = 1024 * 1024;
/** The per-request body cap the test Worker emulates (`fixtures/tus-worker.ts`). */
const BODY_CAP = 6 * MiB;
const TUS = { "tus-resumable": "1.0.0" };

let script: string;
let persist: string;
let mf: Miniflare | undefined;

/** (Re)starts workerd on the same persisted R2 bucket and Durable Objects: a new isolate. */
async function restart(): Promise<void> {
  await mf?.dispose();
  mf = await startWorker(script, { persist });
}

const { send, json } = workerRequests(() => mf, "http://tus.test");

async function bucketKeys(): Promise<string[]> {
  const bucket = await (mf as Miniflare).getR2Bucket("FILES");
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list(cursor ? { cursor } : {});
    keys.push(...page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

const stagingKeys = async () => (await bucketKeys()).filter((key) => key.startsWith("files-tus/"));

interface Ticket {
  upload_url: string;
}

/** A new upload: a ticket for `scope`, then the tus creation request. */
async function create(scope: string, length: number): Promise<string> {
  const ticket = await json<Ticket>(`/test/ticket?scope=${scope}`);
  const endpoint = ticket.upload_url.replace("/upload/", "/tus/");
  const response = await send(endpoint, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(length), "upload-metadata": `filename ${btoa("r2.bin")}` },
  });
  expect(response.status).toBe(201);
  return new URL(response.headers.get("location") as string, endpoint).href;
}

async function patch(
  location: string,
  offset: number,
  body: Uint8Array,
  extra: Record<string, string> = {},
): Promise<Response> {
  return send(location, {
    method: "PATCH",
    body: body as BodyInit,
    headers: {
      ...TUS,
      ...extra,
      "upload-offset": String(offset),
      "content-type": "application/offset+octet-stream",
      "content-length": String(body.byteLength),
    },
  });
}

/** The offset the server holds (`HEAD`), as a resuming client asks it. */
async function offsetOf(location: string): Promise<number> {
  const response = await send(location, { method: "HEAD", headers: TUS });
  expect(response.status).toBeLessThan(300);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return Number(response.headers.get("upload-offset"));
}

const uploadIdOf = (location: string) => new URL(location).pathname.split("/").at(-1) as string;

interface StoredFile {
  id: string;
  size: number;
  sha256: string;
}

async function storedBytes(scope: string): Promise<{ file: StoredFile; bytes: Buffer }> {
  const { files } = await json<{ files: StoredFile[] }>(`/test/files?scope=${scope}`);
  expect(files).toHaveLength(1);
  const file = files[0] as StoredFile;
  const response = await send(`http://tus.test/test/read?scope=${scope}&id=${file.id}`);
  return { file, bytes: Buffer.from(await response.arrayBuffer()) };
}

beforeAll(async () => {
  script = await bundleWorker(join(import.meta.dirname, "fixtures/tus-worker.ts"));
  persist = await mkdtemp(join(tmpdir(), "r2-tus-"));
  await restart();
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
  await rm(persist, { recursive: true, force: true });
});

describe("tus staged in R2 (workerd)", () => {
  it("r2TusStaging validates its options with INVALID_OPTION naming the option", () => {
    const bucket = Object.fromEntries(
      ["head", "get", "put", "delete", "list", "createMultipartUpload", "resumeMultipartUpload"].map((m) => [
        m,
        () => undefined,
      ]),
    );
    const state = memoryState();
    const cases: Array<[unknown, string]> = [
      [null, "options"],
      [{ bucket: { ...bucket, resumeMultipartUpload: undefined }, state }, "bucket"],
      [{ bucket, state: {} }, "state"],
      [{ bucket, state, prefix: "no-slash" }, "prefix"],
      [{ bucket, state, partSize: 4 * MiB }, "partSize"],
      [{ bucket, state, partSize: 101 * MiB }, "partSize"],
    ];
    for (const [options, option] of cases) {
      expect(() => r2TusStaging(options as never)).toThrow(
        expect.objectContaining({ code: "INVALID_OPTION", data: { option } }),
      );
    }
  });

  it("uneven PATCHes, a resume by HEAD in a new isolate, and the exact bytes stored with their digest", async () => {
    // Part size 5 MiB: chunks that never line up with a part, so remainders carry across PATCHes.
    const bytes = randomBytes(13 * MiB + 17);
    const location = await create("alice", bytes.length);
    const cuts = [3 * MiB + 1, 7 * MiB - 5, 9 * MiB + 333, 12 * MiB + 9, bytes.length];
    let offset = 0;
    for (const [index, cut] of cuts.entries()) {
      if (index === 2) {
        // A new isolate: nothing of the upload in memory; the client resumes from HEAD.
        await restart();
        expect(await offsetOf(location)).toBe(offset);
      }
      const response = await patch(location, offset, bytes.subarray(offset, cut));
      expect(response.status).toBe(204);
      expect(Number(response.headers.get("upload-offset"))).toBe(cut);
      offset = cut;
      if (cut < bytes.length) expect(await offsetOf(location)).toBe(cut);
    }
    const { file, bytes: stored } = await storedBytes("alice");
    expect(file.size).toBe(bytes.length);
    expect(file.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(stored.equals(bytes)).toBe(true);
    // The commit removed the staging: no multipart object, tail or marker left.
    expect(await stagingKeys()).toEqual([]);
  }, 120_000);

  it("a PATCH at a wrong offset is refused with 409 and changes nothing", async () => {
    const bytes = randomBytes(6 * MiB - 3);
    const location = await create("bob", bytes.length);
    expect((await patch(location, 0, bytes.subarray(0, 5 * MiB + 7))).status).toBe(204);
    const id = uploadIdOf(location);
    const recordBefore = await json<unknown>(`/test/staging?id=${id}`);
    const keysBefore = await stagingKeys();
    for (const wrong of [0, 5 * MiB, 5 * MiB + 8]) {
      const refused = await patch(location, wrong, bytes.subarray(wrong, wrong + 1000));
      expect(refused.status).toBe(409);
    }
    expect(await offsetOf(location)).toBe(5 * MiB + 7);
    expect(await json<unknown>(`/test/staging?id=${id}`)).toEqual(recordBefore);
    expect(await stagingKeys()).toEqual(keysBefore);
    expect((await patch(location, 5 * MiB + 7, bytes.subarray(5 * MiB + 7))).status).toBe(204);
    const { bytes: stored } = await storedBytes("bob");
    expect(stored.equals(bytes)).toBe(true);
  }, 120_000);

  it("a body under Upload-Checksum that does not match is refused (460) and cut off, across a part boundary", async () => {
    const bytes = randomBytes(11 * MiB + 5);
    const location = await create("frank", bytes.length);
    expect((await patch(location, 0, bytes.subarray(0, 3 * MiB))).status).toBe(204);
    const body = bytes.subarray(3 * MiB, 9 * MiB);
    const sha1 = (data: Uint8Array) => `sha1 ${createHash("sha1").update(data).digest("base64")}`;
    const wrong = await patch(location, 3 * MiB, body, { "upload-checksum": sha1(randomBytes(8)) });
    expect(wrong.status).toBe(460);
    expect(await offsetOf(location)).toBe(3 * MiB);
    const right = await patch(location, 3 * MiB, body, { "upload-checksum": sha1(body) });
    expect(right.status).toBe(204);
    expect(await offsetOf(location)).toBe(9 * MiB);
    expect((await patch(location, 9 * MiB, bytes.subarray(9 * MiB))).status).toBe(204);
    const { bytes: stored } = await storedBytes("frank");
    expect(stored.equals(bytes)).toBe(true);
  }, 120_000);

  it("termination leaves no R2 objects and no multipart upload behind", async () => {
    const bytes = randomBytes(12 * MiB);
    const location = await create("carol", bytes.length);
    // One whole part (the multipart upload exists) and a remainder in a tail object.
    expect((await patch(location, 0, bytes.subarray(0, 5 * MiB + 100))).status).toBe(204);
    const id = uploadIdOf(location);
    const record = await json<{ uploadId?: string; parts: unknown[] }>(`/test/staging?id=${id}`);
    expect(record.parts).toHaveLength(1);
    expect(typeof record.uploadId).toBe("string");
    expect((await stagingKeys()).length).toBeGreaterThan(0);
    const key = `files-tus/${id}`;
    const terminated = await send(location, { method: "DELETE", headers: TUS });
    expect(terminated.status).toBe(204);
    expect(await stagingKeys()).toEqual([]);
    expect(await json<unknown>(`/test/staging?id=${id}`)).toBeNull();
    const multipart = await json<{ alive: boolean }>(
      `/test/multipart?key=${encodeURIComponent(key)}&uploadId=${encodeURIComponent(record.uploadId as string)}`,
    );
    expect(multipart.alive).toBe(false);
    const head = await send(location, { method: "HEAD", headers: TUS });
    expect([404, 410]).toContain(head.status);
    const { files } = await json<{ files: unknown[] }>("/test/files?scope=carol");
    expect(files).toEqual([]);
  }, 120_000);

  it("a file larger than the per-request body cap: refused in one request, stored through tus chunks", async () => {
    const bytes = randomBytes(2 * BODY_CAP + 12_345);
    const ticket = await json<Ticket>("/test/ticket?scope=dave");
    // Refused on its declared length before the body is read: the client sees the 413, or (when the
    // refusal and the close overtake its write) the connection reset. Either way nothing is stored:
    // `storedBytes` below finds exactly the one file the chunks made.
    const single = await send(ticket.upload_url, {
      method: "PUT",
      body: bytes,
      headers: { "content-type": "application/octet-stream", "content-length": String(bytes.length) },
    }).then(
      (response) => response.status,
      (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
    );
    expect([413, "ECONNRESET", "EPIPE"]).toContain(single);
    const location = await create("dave", bytes.length);
    const chunk = BODY_CAP - 1024;
    for (let offset = 0; offset < bytes.length; offset += chunk) {
      const response = await patch(location, offset, bytes.subarray(offset, offset + chunk));
      expect(response.status).toBe(204);
    }
    const { file, bytes: stored } = await storedBytes("dave");
    expect(file.size).toBe(bytes.length);
    expect(stored.equals(bytes)).toBe(true);
    expect(await stagingKeys()).toEqual([]);
  }, 120_000);

  it("the sweep removes an expired upload: its multipart upload aborted, its objects and record gone", async () => {
    const bytes = randomBytes(6 * MiB);
    const location = await create("erin", bytes.length);
    expect((await patch(location, 0, bytes.subarray(0, 5 * MiB + 1))).status).toBe(204);
    const id = uploadIdOf(location);
    const record = await json<{ uploadId: string; expiresAt: number }>(`/test/staging?id=${id}`);
    expect(await json<number>(`/test/sweep?now=${record.expiresAt - 1000}`)).toBe(0);
    expect((await stagingKeys()).length).toBeGreaterThan(0);
    expect(await json<number>(`/test/sweep?now=${record.expiresAt + 1}`)).toBe(1);
    expect(await stagingKeys()).toEqual([]);
    expect(await json<unknown>(`/test/staging?id=${id}`)).toBeNull();
    const multipart = await json<{ alive: boolean }>(
      `/test/multipart?key=${encodeURIComponent(`files-tus/${id}`)}&uploadId=${encodeURIComponent(record.uploadId)}`,
    );
    expect(multipart.alive).toBe(false);
  }, 120_000);
});
