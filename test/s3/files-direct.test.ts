/**
 * The files extension's direct-to-bucket uploads against real radosgw: `authorizeUpload` hands out a
 * presigned POST form of a staging object, the bytes go straight to the bucket, and the commit (first
 * resolve, or `files/completeUpload`) verifies size and sha-256 before the file exists. Wrong bytes,
 * a wrong size and expired descriptors are refused and leave no object in the bucket (listed);
 * dedup finds a scope's own file with the declared digest, never another scope's.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { describeWithServices } from "../../scripts/services/test-env.js";
import { s3Store } from "../../src/s3/s3-store.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { StoredFile } from "../../src/storage/types.js";
import { readAll } from "../../src/testing/index.js";
import type { FilesExtensionOptions } from "../../src/uploads/types.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import {
  DRAFT_CLIENT_CAPABILITY,
  draftDigest,
  draftFiles,
  sendBytes,
  sha256Hex,
} from "../support/draft-files-client.js";
import { connection, objectKeys, testClient } from "./s3-helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function rpcError(promise: Promise<unknown>): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const { code, data } = error as { code: number; data: Record<string, unknown> };
    return { code, data };
  }
  throw new Error("the request did not fail");
}

/** One bucket prefix, a shared clock, and a client per scope on its own server. */
async function setup(files: FilesExtensionOptions = {}) {
  const clock = { now: Date.now() };
  const now = () => clock.now;
  const prefix = `direct-${randomBytes(6).toString("hex")}/`;
  const store = s3Store({ ...connection(), prefix, sweepInterval: 0, now });
  const state = memoryState({ now });
  const minter = new SignedUrlMinter({
    secret: "a-test-secret-that-is-long-enough-0123456789",
    baseUrl: "http://127.0.0.1:9",
    state,
    now,
  });
  const stored: StoredFile[] = [];
  const s3 = testClient();
  cleanups.push(async () => {
    await store.close?.();
    s3.destroy();
  });
  const resolvers: Record<string, UploadHandleResolver> = {};
  const clientOf = async (scope: string) => {
    const uploads = new UploadHandleResolver({ store, state, minter, scope: () => scope, ttl: "10m" });
    resolvers[scope] = uploads;
    const server = new McpServer({ name: "t", version: "1.0.0" });
    uploads.attach(server, {
      files: {
        ...files,
        direct: { onStored: (file) => void stored.push(file), ...(files.direct as object) },
      },
    });
    const client = new Client(
      { name: "c", version: "1.0.0" },
      { capabilities: DRAFT_CLIENT_CAPABILITY as never },
    );
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    return client;
  };
  const alice = await clientOf("alice");
  const bob = await clientOf("bob");
  return { clock, store, stored, alice, bob, resolvers, keys: () => objectKeys(s3, prefix) };
}

/** The draft's encoding (unpadded base64url), which the server also echoes. */
const digestOf = draftDigest;

describeWithServices("files extension: direct uploads to the bucket", () => {
  it("commits the right bytes (completeUpload, or the URI's first resolve) and leaves only the file", async () => {
    const { store, stored, alice, resolvers, keys } = await setup();
    const files = draftFiles(alice as never);
    const bytes = randomBytes(3000);
    const { file, upload } = await files.authorizeUpload({
      name: "a.bin",
      mimeType: "application/octet-stream",
      size: bytes.length,
      digest: digestOf(bytes),
    });
    expect(new URL(upload.url).origin).toBe(new URL(connection().endpoint).origin); // the bucket, not us
    // A form whose policy pins the key, the type and the size, and names no ACL (issue 40).
    expect(upload).toMatchObject({ method: "POST", multipart: { fileField: "file" } });
    expect(upload.multipart?.fields).toMatchObject({ "Content-Type": "application/octet-stream" });
    expect(upload.multipart?.fields).not.toHaveProperty("acl");
    expect((await sendBytes(upload, bytes)).status).toBe(204);
    const completed = await files.completeUpload(file.uri);
    expect(completed.file).toMatchObject({ uri: file.uri, size: bytes.length, digest: digestOf(bytes) });
    const [committed] = stored;
    expect(Buffer.from(await readAll((await store.read("alice", committed?.id as string))!))).toEqual(bytes);
    expect((await files.completeUpload(file.uri)).file).toEqual(completed.file); // answered again

    // No declared size or digest: the commit hashes the object; a tool's resolve commits it.
    const second = await files.authorizeUpload({ name: "b.txt" });
    expect((await sendBytes(second.upload, Buffer.from("hello"))).status).toBe(204);
    const resolved = await resolvers.alice?.fileFor(second.file.uri, { scope: "alice" });
    expect(resolved).toMatchObject({ name: "b.txt", size: 5, sha256: sha256Hex(Buffer.from("hello")) });
    // The Codex variant: prepareUpload's transfer is the same presigned form.
    const { file: third, transfer } = await files.prepareUpload({
      name: "c.txt",
      mimeType: "text/plain",
      size: 2,
    });
    expect((await sendBytes(transfer, Buffer.from("hi"))).status).toBe(204);
    expect((await files.completeUpload(third.uri)).file).toMatchObject({
      name: "c.txt",
      mimeType: "text/plain",
    });
    expect(stored).toHaveLength(3);
    expect((await keys()).filter((key) => key.includes("/staging/"))).toEqual([]);
    expect(await keys()).toHaveLength(6); // three files: bytes + metadata each
  });

  it("needs a store with directUploads, and no uploadMethod POST", async () => {
    const base = { store: memoryStore(), state: memoryState(), scope: () => "s" };
    const minter = new SignedUrlMinter({
      secret: "a-test-secret-that-is-long-enough-0123456789",
      baseUrl: "http://127.0.0.1:9",
    });
    const server = new McpServer({ name: "t", version: "1.0.0" });
    expect(() =>
      new UploadHandleResolver({ ...base, minter }).attach(server, { files: { direct: true } }),
    ).toThrow(expect.objectContaining({ code: "INVALID_OPTION", data: { option: "direct" } }));
    const { store } = await setup();
    const s3Uploads = new UploadHandleResolver({ ...base, store, minter });
    expect(() => s3Uploads.attach(server, { files: { direct: true, uploadMethod: "POST" } })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "direct" } }),
    );
  });

  it("refuses wrong bytes, a wrong size and a second upload, leaving no object behind", async () => {
    const { store, alice, bob, keys } = await setup({ maxSize: 100 });
    const files = draftFiles(alice as never);
    const bytes = randomBytes(50);
    const wrong = await files.authorizeUpload({ name: "w.bin", size: 50, digest: digestOf(bytes) });
    const put = await sendBytes(wrong.upload, randomBytes(50));
    if (put.ok) {
      // radosgw 16 ignores x-amz-checksum-sha256: the commit's own hash refuses the bytes.
      const refused = await rpcError(files.completeUpload(wrong.file.uri));
      expect(refused.code).toBe(-32602);
      expect(refused.data).toMatchObject({ reason: "digestMismatch", code: "DIGEST_MISMATCH" });
    } else {
      expect(put.status).toBe(400); // S3 that checks checksums refuses them itself
    }
    // A declared size is pinned by the policy: S3 refuses another length.
    expect((await sendBytes(wrong.upload, randomBytes(51))).status).toBe(400);
    expect((await sendBytes(wrong.upload, randomBytes(49))).status).toBe(400);
    // No declared size: the policy's range is the cap (maxSize); nothing is staged past it.
    const big = await files.authorizeUpload({ name: "big.bin" });
    expect((await sendBytes(big.upload, randomBytes(101))).status).toBe(400);
    expect((await rpcError(files.completeUpload(big.file.uri))).data).toMatchObject({
      reason: "fileNotFound",
    });
    expect(await keys()).toEqual([]);
    expect((await store.list("alice")).files).toEqual([]);

    // The refused descriptor works again with the right bytes; bytes put after the commit are refused.
    expect((await sendBytes(wrong.upload, bytes)).status).toBe(204);
    expect((await files.completeUpload(wrong.file.uri)).file.digest).toEqual(digestOf(bytes));
    expect((await sendBytes(wrong.upload, bytes)).status).toBe(204);
    expect((await rpcError(files.completeUpload(wrong.file.uri))).data).toMatchObject({
      reason: "alreadyCommitted",
      code: "TOKEN_ALREADY_USED",
    });
    expect((await keys()).filter((key) => key.includes("/staging/"))).toEqual([]);

    // Another scope's URI is exactly an unknown one.
    const unknown = `${wrong.file.uri.slice(0, wrong.file.uri.lastIndexOf("/") + 1)}01JUNKNOWNUNKNOWNUNKNOWN00`;
    const stolen = await rpcError(draftFiles(bob as never).completeUpload(wrong.file.uri));
    const missing = await rpcError(draftFiles(bob as never).completeUpload(unknown));
    expect(stolen.data).toMatchObject({ reason: "fileNotFound", code: "NOT_FOUND" });
    expect({ ...stolen.data, uri: "" }).toEqual({ ...missing.data, uri: "" });
  });

  it("refuses expired descriptors, and the sweep removes what was put but never committed", async () => {
    const { clock, store, alice, keys } = await setup();
    const files = draftFiles(alice as never);
    clock.now = Date.now() - 60 * 60_000; // signed an hour ago with a 10-minute lifetime
    const stale = await files.authorizeUpload({ name: "late.txt", size: 5 });
    expect((await sendBytes(stale.upload, Buffer.from("hello"))).status).toBe(403);
    clock.now = Date.now();
    const fresh = await files.authorizeUpload({ name: "ok.txt", size: 5 });
    expect((await sendBytes(fresh.upload, Buffer.from("hello"))).status).toBe(204);
    clock.now += 10 * 60_000 + 1000; // the ticket expired before the commit
    expect((await rpcError(files.completeUpload(fresh.file.uri))).data).toMatchObject({
      reason: "fileNotFound",
    });
    expect((await store.list("alice")).files).toEqual([]);
    clock.now += 60 * 60_000; // past the store's staleAfter
    await store.sweep();
    expect(await keys()).toEqual([]);
  });

  it("dedups a declared digest within the scope, never across scopes", async () => {
    const { store, alice, bob } = await setup({ direct: { dedup: true } });
    const bytes = randomBytes(200);
    const existing = await store.put(bytes, { scope: "alice", name: "have.bin", kind: "upload" });
    const Result = z.looseObject({
      file: z.looseObject({ uri: z.string() }),
      committed: z.boolean().optional(),
    });
    const ask = (client: Client) =>
      client.request(
        { method: "files/authorizeUpload", params: { name: "x.bin", size: 200, digest: digestOf(bytes) } },
        Result,
      );
    const hit = await ask(alice);
    expect(hit).toMatchObject({ committed: true, file: { size: 200, digest: digestOf(bytes) } });
    expect(hit).not.toHaveProperty("upload");
    const { file } = await draftFiles(alice as never).authorizeDownload(hit.file.uri);
    expect(file.digest).toEqual(digestOf(bytes));
    expect((await store.list("alice")).files.map((each) => each.id)).toEqual([existing.id]);
    const miss = await ask(bob);
    expect(miss.committed).toBeUndefined();
    expect(miss).toHaveProperty("upload");
  });
});
