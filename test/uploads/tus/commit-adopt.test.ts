/**
 * The cheap commit: bytes are hashed while they arrive and the store adopts the staging file
 * (`fsStore().adopt`) instead of reading it again. A body that lands in another instance (another
 * replica, or after a restart) hashes the staged prefix once; a body refused by its checksum is cut
 * off from the hash too, and one cut mid-body counts none of its bytes. Stores without `adopt`
 * stream as before.
 */
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fsStore } from "../../../src/storage/fs-store.js";
import { memoryStore } from "../../../src/storage/memory-store.js";
import type { AdoptSource, FileStore, PutOptions } from "../../../src/storage/types.js";
import { fsTusStaging } from "../../../src/uploads/tus/fs-staging.js";
import { startTus, type TusHarness } from "./harness.js";

const TUS = { "tus-resumable": "1.0.0" };
const SIZE = 3 * 1024 * 1024 + 11;
const BYTES = randomBytes(SIZE);
const SHA256 = createHash("sha256").update(BYTES).digest("hex");

const harnesses: TusHarness[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0).reverse()) await harness.close();
});

/** An fsStore whose successful adoptions are counted. */
function countingStore(dir: string): { store: FileStore; adopted: AdoptSource[] } {
  const base = fsStore(dir, { sweepInterval: 0 });
  const adopted: AdoptSource[] = [];
  const store: FileStore = {
    ...base,
    async adopt(source: AdoptSource, options: PutOptions) {
      const staged = await base.adopt(source, options);
      if (staged) adopted.push(source);
      return staged;
    },
  };
  return { store, adopted };
}

function patch(url: string, offset: number, body: Buffer, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "PATCH",
    headers: {
      ...TUS,
      "content-type": "application/offset+octet-stream",
      "upload-offset": String(offset),
      ...headers,
    },
    body: new Uint8Array(body),
  });
}

async function create(endpoint: string): Promise<string> {
  const created = await fetch(endpoint, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(SIZE), "upload-metadata": "filename YS5iaW4=" },
  });
  expect(created.status).toBe(201);
  return created.headers.get("location") as string;
}

/** A PATCH of `body` under `Upload-Checksum` whose connection is lost after `sent` of its bytes. */
async function cutChecksummedPatch(url: string, offset: number, body: Buffer, sent: number): Promise<void> {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, "connect");
  socket.on("error", () => undefined);
  const closed = once(socket, "close");
  const digest = createHash("sha256").update(body).digest("base64");
  socket.write(
    `PATCH ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nTus-Resumable: 1.0.0\r\n` +
      `Content-Type: application/offset+octet-stream\r\nUpload-Offset: ${offset}\r\n` +
      `Upload-Checksum: sha256 ${digest}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
  );
  await new Promise<void>((resolve) => socket.write(body.subarray(0, sent), () => resolve()));
  socket.destroy();
  await closed;
}

/** The upload's offset once no writer holds it (a zero-length PATCH there is accepted). */
async function settledOffset(url: string): Promise<number> {
  for (;;) {
    const head = await fetch(url, { method: "HEAD", headers: TUS });
    const offset = Number(head.headers.get("upload-offset"));
    const probe = await patch(url, offset, Buffer.alloc(0));
    if (probe.status === 204) return offset;
    expect([409, 423]).toContain(probe.status);
  }
}

describe("tus commit by adoption", () => {
  it("a PATCH under Upload-Checksum cut mid-body counts none of its bytes: the old offset, then exact bytes", async () => {
    const first = await startTus();
    harnesses.push(first);
    const { store, adopted } = countingStore(join(first.dir, "adopting"));
    const harness = await startTus({ store, tus: { staging: fsTusStaging(join(first.dir, "staging-2")) } });
    harnesses.push(harness);
    const url = await create(await harness.endpoint("scope-a"));
    const mid = 1024 * 1024 + 7;
    expect((await patch(url, 0, BYTES.subarray(0, mid))).status).toBe(204);
    await cutChecksummedPatch(url, mid, BYTES.subarray(mid), 1024 * 1024 + 5);
    expect(await settledOffset(url)).toBe(mid);
    expect((await patch(url, mid, BYTES.subarray(mid))).status).toBe(204);
    expect(adopted).toEqual([expect.objectContaining({ size: SIZE, sha256: SHA256 })]);
    expect(harness.stored).toEqual([expect.objectContaining({ size: SIZE, sha256: SHA256 })]);
    expect(await harness.stagingFiles()).toEqual([]);
  });

  it("adopts the staging file with the sha256 hashed on arrival; nothing staged is left", async () => {
    const first = await startTus();
    harnesses.push(first);
    const { store, adopted } = countingStore(join(first.dir, "adopting"));
    const harness = await startTus({ store, tus: { staging: fsTusStaging(join(first.dir, "staging-2")) } });
    harnesses.push(harness);
    const url = await create(await harness.endpoint("scope-a"));
    const mid = 1024 * 1024 + 3;
    expect((await patch(url, 0, BYTES.subarray(0, mid))).status).toBe(204);
    // A body refused by its checksum leaves neither bytes nor hash behind.
    const wrong = `sha256 ${createHash("sha256").update("other").digest("base64")}`;
    expect(
      (await patch(url, mid, BYTES.subarray(mid, mid + 1000), { "upload-checksum": wrong })).status,
    ).toBe(460);
    const done = await patch(url, mid, BYTES.subarray(mid));
    expect(done.status).toBe(204);
    expect(adopted).toEqual([expect.objectContaining({ size: SIZE, sha256: SHA256 })]);
    expect(harness.stored).toEqual([expect.objectContaining({ size: SIZE, sha256: SHA256, name: "a.bin" })]);
    const id = harness.stored[0]?.id as string;
    const read = await store.read("scope-a", id);
    const chunks: Buffer[] = [];
    for await (const chunk of read as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(BYTES)).toBe(true);
    expect(await harness.stagingFiles()).toEqual([]);
  });

  it("resumed through another instance: the staged prefix is hashed there once, the sha256 exact", async () => {
    const a = await startTus();
    harnesses.push(a);
    const { store, adopted } = countingStore(join(a.dir, "shared-store"));
    const shared = { state: a.state, store, tus: { staging: fsTusStaging(a.stagingDir) } };
    const one = await startTus(shared);
    const two = await startTus(shared);
    harnesses.push(one, two);
    const url = await create(await one.endpoint("scope-a"));
    const mid = 2 * 1024 * 1024 + 5;
    expect((await patch(url, 0, BYTES.subarray(0, mid))).status).toBe(204);
    const there = url.replace(one.origin, two.origin);
    expect((await patch(there, mid, BYTES.subarray(mid))).status).toBe(204);
    expect(adopted).toEqual([expect.objectContaining({ size: SIZE, sha256: SHA256 })]);
    expect(two.stored).toEqual([expect.objectContaining({ size: SIZE, sha256: SHA256 })]);
    expect(await a.stagingFiles()).toEqual([]);
  });

  it("streams into a store without adopt, as before", async () => {
    const store = memoryStore({ sweepInterval: 0 });
    const harness = await startTus({ store });
    harnesses.push(harness);
    const url = await create(await harness.endpoint("scope-a"));
    expect((await patch(url, 0, BYTES)).status).toBe(204);
    expect(harness.stored).toEqual([expect.objectContaining({ size: SIZE, sha256: SHA256 })]);
    expect(await harness.stagingFiles()).toEqual([]);
  });
});
