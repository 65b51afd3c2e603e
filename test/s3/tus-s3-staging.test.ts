/**
 * tus staging on S3 (real radosgw + redis-server): the endpoint of an `s3Store` stages each upload as
 * a multipart upload (8 MiB parts) plus a small tail object, with the part list in `redisState()`.
 * Two route instances (two HTTP servers, one bucket and one redis) stand for two replicas: an upload
 * cut on A, whose server is then closed, resumes through B (cut again at other offsets) and B commits
 * the exact bytes. Nothing of the staging is left in the bucket (objects and multipart uploads) after
 * commit, termination or the expiry sweep; another scope's ticket cannot see or write an upload. A
 * replica killed mid-PATCH under `Upload-Checksum` leaves none of that body counted. A 256 MiB upload
 * cut at 10 random offsets, resumed through either replica in turn, commits the exact bytes.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import type { S3Client } from "@aws-sdk/client-s3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { toNodeHandler } from "../../src/node/index.js";
import { redisState } from "../../src/redis/redis-state.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { s3TusStaging } from "../../src/s3/s3-staging.js";
import { type S3FileStore, s3Store } from "../../src/s3/s3-store.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import type { StateStore, StoredFile } from "../../src/storage/types.js";
import { close, listen } from "../http/server-helpers.js";
import { sha256 } from "../support/helpers.js";
import { uploadSha256, uploadWithCuts } from "../uploads/tus/cuts.js";
import { connection, objectKeys, pendingUploads, testClient } from "./s3-helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };
const MiB = 1024 * 1024;

interface Replica {
  origin: string;
  server: Server;
  state: StateStore;
  store: S3FileStore;
  minter: SignedUrlMinter;
}

let prefix: string;
let keyPrefix: string;
let client: S3Client;
let replicas: Replica[];
let stored: StoredFile[];
let children: ChildProcess[];

/** A route instance on the shared bucket and redis; `lockTtl` 1 s by default, so a killed replica's lock goes fast. */
async function replica(lockTtl = 1): Promise<Replica> {
  const state = redisState({ url: requireServices().redis.url, keyPrefix });
  const store = s3Store({ ...connection(), prefix, sweepInterval: 0 });
  let routes: ((request: Request) => Promise<Response | undefined>) | undefined;
  const server = createServer(toNodeHandler((request) => (routes as NonNullable<typeof routes>)(request)));
  const origin = await listen(server);
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes: 256 * MiB,
    onStored: (file) => {
      stored.push(file);
    },
    tus: { lockTtl },
  });
  return { origin, server, state, store, minter };
}

/** The staging prefix the endpoint derives from the store's prefix. */
const stagingPrefix = () => `${prefix.slice(0, -1)}-tus/`;

async function leftInBucket(): Promise<string[]> {
  return [...(await objectKeys(client, stagingPrefix())), ...(await pendingUploads(client, stagingPrefix()))];
}

beforeEach(async () => {
  prefix = `${uniquePrefix("tuss3").slice(0, -1)}/`;
  keyPrefix = uniquePrefix("tuss3");
  client = testClient();
  stored = [];
  children = [];
  replicas = [await replica(), await replica()];
});
afterEach(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const { server, state, store } of replicas) {
    await close(server).catch(() => undefined);
    await store.close?.();
    await state.close?.();
  }
  client.destroy();
});

async function createUpload(origin: string, minter: SignedUrlMinter, scope: string, length: number) {
  const { token } = await minter.mint({ scope, fileId: `t-${scope}`, action: "upload", ttl: "1h" });
  const created = await fetch(`${origin}/files/tus/${token}`, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(length) },
  });
  expect(created.status).toBe(201);
  return created.headers.get("location") as string;
}

/**
 * A PATCH on a raw socket that sends `bytes[from, cut)` of a body declared to run to the end, then
 * loses its connection: `drop` ends it (`"client"`: the socket is half-closed once every byte reached
 * the kernel, so the server reads exactly those bytes and then sees the body end early; a function:
 * whatever else cuts it, e.g. closing the server).
 */
async function cutPatch(
  url: string,
  bytes: Buffer,
  from: number,
  cut: number,
  drop: "client" | (() => Promise<void>),
  extraHeaders = "",
) {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, "connect");
  const closed = new Promise((resolve) => socket.once("close", resolve));
  let answer = "";
  socket.on("error", () => undefined);
  socket.on("data", (chunk: Buffer) => {
    answer += chunk.toString("latin1");
  });
  socket.write(
    `PATCH ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nTus-Resumable: 1.0.0\r\n` +
      `Content-Type: application/offset+octet-stream\r\nUpload-Offset: ${from}\r\n` +
      `Content-Length: ${bytes.length - from}\r\n${extraHeaders}Connection: close\r\n\r\n`,
  );
  // The write settles with an error when the drop came first (the server closed): that is the cut.
  // Bytes the server had not read when the body ended early are dropped by it (not counted).
  const sent = new Promise<void>((resolve) => socket.write(bytes.subarray(from, cut), () => resolve()));
  if (drop === "client") await sent;
  if (drop === "client") socket.end();
  else await drop();
  await closed;
  return answer;
}

/** The upload's offset as `url`'s replica reports it, once no writer holds the lock any more. */
async function offsetOf(url: string): Promise<number> {
  for (;;) {
    const head = await fetch(url, { method: "HEAD", headers: TUS });
    expect(head.status).toBe(200);
    const offset = Number(head.headers.get("upload-offset"));
    // A PATCH at that offset answers 409 while the dropped request still records its bytes: ask again.
    const probe = await fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(offset) },
      body: new Uint8Array(0),
    });
    if (probe.status === 204) return offset;
    expect([409, 423]).toContain(probe.status);
  }
}

/** Starts a replica in a child process (test/s3/fixtures/tus-replica.ts); resolves with it and its origin. */
async function childReplica(): Promise<{ child: ChildProcess; origin: string }> {
  const { s3, redis } = requireServices();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(new URL("./fixtures/tus-replica.ts", import.meta.url))],
    {
      env: {
        ...process.env,
        REPLICA_REDIS_URL: redis.url,
        REPLICA_KEY_PREFIX: keyPrefix,
        REPLICA_S3_BUCKET: s3.bucket,
        REPLICA_S3_ENDPOINT: s3.endpoint,
        REPLICA_S3_REGION: s3.region,
        REPLICA_S3_KEY: s3.accessKeyId,
        REPLICA_S3_SECRET: s3.secretAccessKey,
        REPLICA_S3_PREFIX: prefix,
        REPLICA_SECRET: SECRET,
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  children.push(child);
  let out = "";
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    out += chunk.toString("utf8");
    if (out.includes("\n")) break;
  }
  return { child, origin: out.trim() };
}

describeWithServices("tus staging on S3 across replicas (radosgw + redis-server)", () => {
  it("commit aborts every multipart upload on the staging key, also one that was never recorded", async () => {
    const a = replicas[0] as Replica;
    const bytes = randomBytes(9 * MiB + 17);
    const url = await createUpload(a.origin, a.minter, "s1", bytes.length);
    const id = url.slice(url.lastIndexOf("/") + 1);
    const first = await fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: new Uint8Array(bytes.subarray(0, 8 * MiB + 5)),
    });
    expect(first.status).toBe(204);
    // What a part upload that failed after its multipart upload was created leaves: one the record
    // does not know.
    const { CreateMultipartUploadCommand } = await import("@aws-sdk/client-s3");
    await client.send(
      new CreateMultipartUploadCommand({ Bucket: requireServices().s3.bucket, Key: stagingPrefix() + id }),
    );
    expect(await pendingUploads(client, stagingPrefix())).toHaveLength(2);
    const rest = await fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(8 * MiB + 5) },
      body: new Uint8Array(bytes.subarray(8 * MiB + 5)),
    });
    expect(rest.status).toBe(204);
    expect(stored[0]?.sha256).toBe(sha256(bytes));
    expect(await leftInBucket()).toEqual([]);
  });

  it("256 MiB cut at 10 random offsets, each resume through the other replica: exact sha256, nothing staged left", async () => {
    // Nothing is killed here: locks with the default lifetime, so a renewal that a busy machine
    // delays cannot let two replicas write at once (a 1 s lock did in CI, under load).
    const [a, b] = [await replica(30), await replica(30)];
    replicas.push(a, b);
    const size = 256 * MiB;
    const onA = await createUpload(a.origin, a.minter, "s1", size);
    const onB = b.origin + onA.slice(a.origin.length);
    expect(await uploadWithCuts([onA, onB], size, 10)).toBeGreaterThanOrEqual(8);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.size).toBe(size);
    expect(stored[0]?.sha256).toBe(uploadSha256(size));
    expect(await leftInBucket()).toEqual([]);
    // The object in the store holds those bytes (read back, hashed as it streams).
    const file = stored[0] as StoredFile;
    const hash = createHash("sha256");
    for await (const chunk of (await a.store.read(file.scope, file.id)) ?? []) hash.update(chunk as Buffer);
    expect(hash.digest("hex")).toBe(uploadSha256(size));
  }, 300_000);

  it("resumes through replica B an upload whose replica A was killed (SIGKILL) mid-body: from A's last part, exact bytes", async () => {
    const b = replicas[1] as Replica;
    const a = await childReplica();
    const bytes = randomBytes(20 * MiB + 4321);
    const onA = await createUpload(a.origin, b.minter, "s1", bytes.length);
    const id = onA.slice(onA.lastIndexOf("/") + 1);
    // The whole body to A; A is killed once its first part is in the bucket and in redis, before it
    // recorded any offset (a real crash: no handler left to record what it wrote).
    await cutPatch(onA, bytes, 0, bytes.length, async () => {
      for (;;) {
        const staged = await b.state.get<{ parts: unknown[] }>(`mcp-file-bridge:tus-s3:${id}`);
        if ((staged?.parts.length ?? 0) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      a.child.kill("SIGKILL");
    });
    const onB = onA.replace(a.origin, b.origin);
    // B continues from the bytes in A's completed parts (A's lock runs out after its 1 s TTL).
    const offset = await offsetOf(onB);
    expect(offset).toBeGreaterThanOrEqual(8 * MiB);
    expect(offset % (8 * MiB)).toBe(0);
    const rest = await fetch(onB, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(offset) },
      body: new Uint8Array(bytes.subarray(offset)),
    });
    expect(rest.status).toBe(204);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.sha256).toBe(sha256(bytes));
    expect(await leftInBucket()).toEqual([]);
  });

  it("a replica killed mid-PATCH under Upload-Checksum counts none of that body: the old offset, then exact bytes and no parts left", async () => {
    const b = replicas[1] as Replica;
    const a = await childReplica();
    const bytes = randomBytes(30 * MiB + 999);
    const onA = await createUpload(a.origin, b.minter, "s1", bytes.length);
    const id = onA.slice(onA.lastIndexOf("/") + 1);
    const before = 8 * MiB + 100; // one part and a tail, counted
    const first = await fetch(onA, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: new Uint8Array(bytes.subarray(0, before)),
    });
    expect(first.status).toBe(204);
    // The rest under a checksum of the whole rest; A is killed once two of its parts are in the bucket.
    const digest = createHash("sha256").update(bytes.subarray(before)).digest("base64");
    const key = `mcp-file-bridge:tus-s3:${id}`;
    await cutPatch(
      onA,
      bytes,
      before,
      bytes.length,
      async () => {
        for (;;) {
          // Two parts of this body uploaded (one before it): wherever the staging records them.
          const staged = await b.state.get<{ parts: unknown[]; pending?: { parts: unknown[] } }>(key);
          if ((staged?.parts.length ?? 0) + (staged?.pending?.parts.length ?? 0) >= 3) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        a.child.kill("SIGKILL");
      },
      `Upload-Checksum: sha256 ${digest}\r\n`,
    );
    const onB = onA.replace(a.origin, b.origin);
    expect(await offsetOf(onB)).toBe(before);
    // Resumed through B under the same checksum: its parts overwrite the unconfirmed ones.
    const rest = await fetch(onB, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(before), "upload-checksum": `sha256 ${digest}` },
      body: new Uint8Array(bytes.subarray(before)),
    });
    expect(rest.status).toBe(204);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.sha256).toBe(sha256(bytes));
    const read = await b.store.read("s1", (stored[0] as StoredFile).id);
    const chunks: Buffer[] = [];
    for await (const chunk of read as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(bytes));
    // No multipart upload (with its unlisted parts) nor tail object left.
    expect(await leftInBucket()).toEqual([]);
  });

  it("resumes through replica B an upload cut on replica A (closed), cut again twice: exact bytes, nothing staged left", async () => {
    const [a, b] = replicas as [Replica, Replica];
    const bytes = randomBytes(26 * MiB + 12_345);
    const onA = await createUpload(a.origin, a.minter, "s1", bytes.length);
    const onB = onA.replace(a.origin, b.origin);
    // 13 MiB to A in one whole PATCH: one 8 MiB part of a multipart upload and a 5 MiB tail object.
    const first = await fetch(onA, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: new Uint8Array(bytes.subarray(0, 13 * MiB)),
    });
    expect(first.status).toBe(204);
    expect(first.headers.get("upload-offset")).toBe(String(13 * MiB));
    expect(await pendingUploads(client, stagingPrefix())).toHaveLength(1);
    expect(await objectKeys(client, stagingPrefix())).toHaveLength(1);
    // 2 MiB more to A, and replica A goes away mid-body (its server and connections closed).
    await cutPatch(onA, bytes, 13 * MiB, 15 * MiB, () => close(a.server));
    let offset = await offsetOf(onB);
    expect(offset).toBeGreaterThanOrEqual(13 * MiB);
    expect(offset).toBeLessThanOrEqual(15 * MiB);
    // Two more cuts on B, 3 MiB and 9 MiB on: each resumes from what the server read before the cut.
    for (const span of [3 * MiB + 777, 9 * MiB + 5]) {
      const cut = offset + span;
      await cutPatch(onB, bytes, offset, cut, "client");
      const next = await offsetOf(onB);
      expect(next).toBeGreaterThanOrEqual(offset);
      expect(next).toBeLessThanOrEqual(cut);
      offset = next;
    }
    const rest = await fetch(onB, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(offset) },
      body: new Uint8Array(bytes.subarray(offset)),
    });
    expect(rest.status).toBe(204);
    expect(stored).toHaveLength(1);
    const file = stored[0] as StoredFile;
    expect(file.sha256).toBe(sha256(bytes));
    const read = await b.store.read("s1", file.id);
    const chunks: Buffer[] = [];
    for await (const chunk of read as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(bytes));
    expect(await leftInBucket()).toEqual([]);
  });

  it("termination and the expiry sweep leave nothing staged; another scope cannot HEAD, PATCH or DELETE", async () => {
    const [a, b] = replicas as [Replica, Replica];
    const bytes = randomBytes(10 * MiB);
    const first = await createUpload(a.origin, a.minter, "s1", 30 * MiB);
    const written = await fetch(first, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: new Uint8Array(bytes),
    });
    expect(written.status).toBe(204);
    expect(await pendingUploads(client, stagingPrefix())).toHaveLength(1);
    expect(await objectKeys(client, stagingPrefix())).toHaveLength(1); // the 2 MiB tail
    // Another scope's ticket on the same upload id: unknown upload, nothing written or removed.
    const id = first.slice(first.lastIndexOf("/") + 1);
    const { token: other } = await b.minter.mint({
      scope: "s2",
      fileId: "t-s2",
      action: "upload",
      ttl: "1h",
    });
    const foreign = `${b.origin}/files/tus/${other}/${id}`;
    expect((await fetch(foreign, { method: "HEAD", headers: TUS })).status).toBe(404);
    const patch = await fetch(foreign, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": String(bytes.length) },
      body: "x",
    });
    expect(patch.status).toBe(404);
    expect((await fetch(foreign, { method: "DELETE", headers: TUS })).status).toBe(404);
    const head = await fetch(first.replace(a.origin, b.origin), { method: "HEAD", headers: TUS });
    expect(head.headers.get("upload-offset")).toBe(String(bytes.length));
    // Termination through B aborts the multipart upload and deletes the tail.
    expect((await fetch(first.replace(a.origin, b.origin), { method: "DELETE", headers: TUS })).status).toBe(
      204,
    );
    expect(await leftInBucket()).toEqual([]);

    // An upload left to expire: the sweep (any replica's, here a staging on the same bucket and redis)
    // aborts its multipart upload and deletes its tail once it is past its expiry, not before.
    const second = await createUpload(b.origin, b.minter, "s3", 30 * MiB);
    const more = await fetch(second, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: new Uint8Array(bytes),
    });
    expect(more.status).toBe(204);
    const sweeper = s3TusStaging(b.store, b.state);
    expect(await sweeper.sweep(Date.now())).toBe(0);
    expect(await leftInBucket()).toHaveLength(2);
    expect(await sweeper.sweep(Date.now() + 2 * 60 * 60_000)).toBe(1);
    expect(await leftInBucket()).toEqual([]);
    expect(stored).toEqual([]);
  });
});
