/**
 * Uploads whose sha-256 the client declared, into R2 through our routes in workerd (issue 46): the
 * body goes to R2 as the request's own stream and R2 verifies the digest itself (`put(key, body,
 * { sha256 })`), so the stored object carries the checksum R2 checked. A wrong digest answers the
 * same code as on Node (`DIGEST_MISMATCH`, 422) and leaves no object; a files-extension ticket stays
 * usable after such a refusal. Uploads with no declared digest keep today's path (no R2 checksum).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleWorker, startWorker, workerRequests } from "./workerd.js";

const MiB = 1024 * 1024;
let mf: Miniflare;
let persist: string;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

const { send, json } = workerRequests(() => mf, "http://digest.test");

interface StoredObject {
  key: string;
  sha256: string | null;
}

const objects = () => json<StoredObject[]>("/test/objects");

async function put(url: string, bytes: Uint8Array, headers: Record<string, string> = {}) {
  const response = await send(url, {
    method: "PUT",
    body: bytes as unknown as BodyInit,
    headers: {
      "content-type": "application/octet-stream",
      "content-length": String(bytes.length),
      ...headers,
    },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const codeOf = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

beforeAll(async () => {
  persist = await mkdtemp(join(tmpdir(), "r2-digest-"));
  mf = await startWorker(await bundleWorker(join(import.meta.dirname, "fixtures/tus-worker.ts")), {
    persist,
  });
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  await rm(persist, { recursive: true, force: true });
});

describe("declared sha-256 into R2 (workerd)", () => {
  it("a ticket PUT with X-Content-SHA256 is verified by R2 itself and stores the exact bytes", async () => {
    const scope = "declared-header";
    const bytes = randomBytes(3 * MiB + 11);
    const ticket = await json<{ upload_url: string }>(`/test/ticket?scope=${scope}`);
    const before = (await objects()).map((o) => o.key);
    const reply = await put(ticket.upload_url, bytes, { "x-content-sha256": sha256(bytes) });
    expect(reply.status).toBe(201);
    const file = (reply.body.files as { id: string; sha256: string; size: number }[])[0];
    expect(file).toMatchObject({ sha256: sha256(bytes), size: bytes.length });
    const added = (await objects()).filter((o) => !before.includes(o.key));
    // R2 checked the digest on the put: the object carries it (a JS-hashed multipart put has none).
    expect(added).toEqual([expect.objectContaining({ sha256: sha256(bytes) })]);
    const read = await send(`http://digest.test/test/read?scope=${scope}&id=${file?.id}`);
    expect(sha256(new Uint8Array(await read.arrayBuffer()))).toBe(sha256(bytes));
  }, 60_000);

  it("a files-extension ticket's declared digest is verified by R2 itself", async () => {
    const scope = "declared-claim";
    const bytes = randomBytes(2 * MiB + 5);
    const ticket = await json<{ upload_url: string }>(
      `/test/declared-ticket?scope=${scope}&size=${bytes.length}&sha256=${sha256(bytes)}`,
    );
    const before = (await objects()).map((o) => o.key);
    const reply = await put(ticket.upload_url, bytes);
    expect(reply.status).toBe(201);
    const added = (await objects()).filter((o) => !before.includes(o.key));
    expect(added).toEqual([expect.objectContaining({ sha256: sha256(bytes) })]);
  }, 60_000);

  it("a wrong X-Content-SHA256 answers DIGEST_MISMATCH (as on Node) and leaves no object", async () => {
    const scope = "wrong-header";
    const bytes = randomBytes(MiB + 3);
    const ticket = await json<{ upload_url: string }>(`/test/ticket?scope=${scope}`);
    const before = await objects();
    const reply = await put(ticket.upload_url, bytes, { "x-content-sha256": sha256(randomBytes(8)) });
    expect(reply.status).toBe(422);
    expect(codeOf(reply.body)).toBe("DIGEST_MISMATCH");
    expect(await objects()).toEqual(before);
    expect(await json<{ files: unknown[] }>(`/test/files?scope=${scope}`)).toEqual({ files: [] });
  }, 60_000);

  it("a wrong declared digest on a files-extension ticket answers digestMismatch, stores nothing, and the ticket still works", async () => {
    const scope = "wrong-claim";
    const bytes = randomBytes(MiB + 9);
    const ticket = await json<{ upload_url: string }>(
      `/test/declared-ticket?scope=${scope}&size=${bytes.length}&sha256=${sha256(bytes)}`,
    );
    const before = await objects();
    const other = Uint8Array.from(bytes);
    other[other.length - 1] = (other[other.length - 1] as number) ^ 1;
    const refused = await put(ticket.upload_url, other);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: "DIGEST_MISMATCH", reason: "digestMismatch" });
    expect(await objects()).toEqual(before);
    // The refusal did not use the single-use ticket up: the right bytes go through.
    const accepted = await put(ticket.upload_url, bytes);
    expect(accepted.status).toBe(201);
  }, 60_000);

  it("a declared size that the body does not match is refused and leaves no object", async () => {
    const scope = "wrong-size";
    const bytes = randomBytes(MiB);
    const ticket = await json<{ upload_url: string }>(
      `/test/declared-ticket?scope=${scope}&size=${bytes.length + 1}&sha256=${sha256(bytes)}`,
    );
    const before = await objects();
    const reply = await put(ticket.upload_url, bytes);
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: "INVALID_REQUEST", reason: "sizeMismatch" });
    expect(await objects()).toEqual(before);
  }, 60_000);

  it("a body shorter than a ticket's declared size answers sizeMismatch (as on Node), not digestMismatch", async () => {
    const scope = "short-body";
    const bytes = randomBytes(MiB + 21);
    const ticket = await json<{ upload_url: string }>(
      `/test/declared-ticket?scope=${scope}&size=${bytes.length}&sha256=${sha256(bytes)}`,
    );
    const before = await objects();
    // The file changed since it was declared: fewer bytes, so neither its size nor its digest holds.
    // Node checks the size first (declaredFileCheck); so must the native put.
    const reply = await put(ticket.upload_url, bytes.subarray(0, bytes.length - 1000));
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: "INVALID_REQUEST", reason: "sizeMismatch" });
    expect(await objects()).toEqual(before);
    expect((await put(ticket.upload_url, bytes)).status).toBe(201);
  }, 60_000);

  it("store.put of a stream made in JavaScript with a declared size and digest: R2 verifies it; wrong digest or length stores nothing", async () => {
    const scope = "js-stream";
    const n = MiB + 17;
    const bytes = Uint8Array.from({ length: n }, (_, i) => i % 251);
    const before = await objects();
    const putStream = (total: number, size: number, digest: string) =>
      json<{ code?: string; file?: { sha256: string; size: number; id: string } }>(
        `/test/put-stream?scope=${scope}&bytes=${total}&size=${size}&sha256=${digest}`,
      );
    expect(await putStream(n, n, sha256(randomBytes(4)))).toEqual({ code: "DIGEST_MISMATCH" });
    expect(await putStream(n - 1, n, sha256(bytes))).toEqual({ code: "DIGEST_MISMATCH" });
    expect(await putStream(n + 1, n, sha256(bytes))).toEqual({ code: "DIGEST_MISMATCH" });
    expect(await objects()).toEqual(before);
    const stored = await putStream(n, n, sha256(bytes));
    expect(stored.file).toMatchObject({ sha256: sha256(bytes), size: n });
    const added = (await objects()).filter((o) => !before.some((b) => b.key === o.key));
    expect(added).toEqual([expect.objectContaining({ sha256: sha256(bytes) })]);
    const read = await send(`http://digest.test/test/read?scope=${scope}&id=${stored.file?.id}`);
    expect(sha256(new Uint8Array(await read.arrayBuffer()))).toBe(sha256(bytes));
  }, 60_000);

  it("a declared-digest upload whose body stalls ends at the total upload timeout (408) and leaves no object", async () => {
    const scope = "stalled";
    const bytes = randomBytes(MiB);
    const ticket = await json<{ upload_url: string }>(`/test/ticket?scope=${scope}`);
    const before = await objects();
    let sent = false;
    // Half the body, then nothing: the client neither finishes nor goes away.
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent) return new Promise<void>(() => {});
        sent = true;
        controller.enqueue(bytes.subarray(0, MiB / 2));
      },
    });
    const started = Date.now();
    const response = await send(ticket.upload_url, {
      method: "PUT",
      body,
      duplex: "half",
      headers: {
        "content-length": String(bytes.length),
        "x-content-sha256": sha256(bytes),
        "x-test-upload-timeout": "1500",
      },
    } as RequestInit);
    expect(response.status).toBe(408);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("REQUEST_TIMEOUT");
    expect(Date.now() - started).toBeLessThan(15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await objects()).toEqual(before);
  }, 60_000);

  it("an upload with no declared digest is hashed by us (no R2 checksum) and reports its sha-256", async () => {
    const scope = "undeclared";
    const bytes = randomBytes(MiB + 1);
    const ticket = await json<{ upload_url: string }>(`/test/ticket?scope=${scope}`);
    const before = (await objects()).map((o) => o.key);
    const reply = await put(ticket.upload_url, bytes);
    expect(reply.status).toBe(201);
    expect((reply.body.files as { sha256: string }[])[0]?.sha256).toBe(sha256(bytes));
    expect((await objects()).filter((o) => !before.includes(o.key))).toHaveLength(1);
  }, 60_000);
});
