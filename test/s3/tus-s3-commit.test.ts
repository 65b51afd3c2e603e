/**
 * The commit of a tus upload on S3 (real radosgw): the endpoint of an `s3Store` completes the staged
 * multipart upload (the tail copied in as its last part) and the store adopts it by server-side copy
 * into the file's key — never streaming it back through the put pipeline — with the pipeline's
 * guarantees: exact bytes and sha256, the file listed and `onStored` told, the staging removed, no
 * other scope seeing it; a commit the ticket's declared sha256 refuses leaves nothing. The copy of
 * objects past `CopyObject`'s 5 GiB runs in `UploadPartCopy` parts (here with the limits lowered). A
 * parallel upload's partial uploads are copied into one file the same way (hashed once, read, never
 * re-uploaded), unless a part is one S3 cannot take as a part.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { createServer } from "node:http";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import { toNodeHandler } from "../../src/node/index.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { adoptObject, type S3AdoptContext } from "../../src/s3/s3-adopt.js";
import { type S3FileStore, s3Store } from "../../src/s3/s3-store.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { planPut } from "../../src/storage/kit/put-plan.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StoredFile } from "../../src/storage/types.js";
import { TICKET_CLAIMS } from "../../src/uploads/upload-handle.js";
import { close, listen } from "../http/server-helpers.js";
import { codeOf, sha256 } from "../support/helpers.js";
import { connection, objectKeys, pendingUploads, testClient } from "./s3-helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };
const MiB = 1024 * 1024;

let prefix: string;
let client: S3Client;
let inner: S3FileStore;
let server: Server;
let origin: string;
let minter: SignedUrlMinter;
let stored: StoredFile[];
/** How the commits went: `stage` calls (re-streamed) and `adopt` answers (copied or not). */
let calls: { stage: number; adopted: boolean[] };

beforeEach(async () => {
  prefix = `${uniquePrefix("tusc").slice(0, -1)}/`;
  client = testClient();
  inner = s3Store({ ...connection(), prefix, sweepInterval: 0 });
  calls = { stage: 0, adopted: [] };
  stored = [];
  const store: FileStore = {
    ...inner,
    stage(source, options) {
      calls.stage++;
      return inner.stage(source, options);
    },
    async adopt(source, options) {
      const staged = await (inner.adopt as NonNullable<FileStore["adopt"]>)(source, options);
      calls.adopted.push(staged !== null);
      return staged;
    },
  };
  const state = memoryState();
  let routes: ((request: Request) => Promise<Response | undefined>) | undefined;
  server = createServer(toNodeHandler((request) => (routes as NonNullable<typeof routes>)(request)));
  origin = await listen(server);
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: origin, state });
  routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes: 64 * MiB,
    onStored: (file) => {
      stored.push(file);
    },
  });
});
afterEach(async () => {
  await close(server).catch(() => undefined);
  await inner.close?.();
  client.destroy();
});

const stagingPrefix = () => `${prefix.slice(0, -1)}-tus/`;

async function upload(bytes: Buffer, claims: Record<string, string> = {}): Promise<Response> {
  const { token } = await minter.mint({ scope: "s1", fileId: "t-1", action: "upload", ttl: "1h", claims });
  const created = await fetch(`${origin}/files/tus/${token}`, {
    method: "POST",
    headers: { ...TUS, "upload-length": String(bytes.length), "upload-metadata": "filename ZGF0YS5iaW4=" },
  });
  expect(created.status).toBe(201);
  const url = created.headers.get("location") as string;
  // 5 MiB, then the rest: one full 8 MiB part and a tail that the completion copies in as the last part.
  const first = await fetch(url, {
    method: "PATCH",
    headers: { ...OCTETS, "upload-offset": "0" },
    body: new Uint8Array(bytes.subarray(0, 5 * MiB)),
  });
  expect(first.status).toBe(204);
  return fetch(url, {
    method: "PATCH",
    headers: { ...OCTETS, "upload-offset": String(5 * MiB) },
    body: new Uint8Array(bytes.subarray(5 * MiB)),
  });
}

/**
 * A parallel upload: one partial upload per piece of `bytes` (cut at `sizes`), each sent in one
 * PATCH, then the final upload that concatenates them (which commits). Answers the final POST.
 */
async function parallelUpload(bytes: Buffer, sizes: number[], fileId = "t-1"): Promise<Response> {
  const { endpoint, paths } = await partialUploads(bytes, sizes, fileId);
  return finalUpload(endpoint, paths);
}

/** The final upload that concatenates `paths` (which commits). */
function finalUpload(endpoint: string, paths: string[]): Promise<Response> {
  return fetch(endpoint, {
    method: "POST",
    headers: {
      ...TUS,
      "upload-concat": `final;${paths.join(" ")}`,
      "upload-metadata": "filename ZGF0YS5iaW4=",
    },
  });
}

/** One finished partial upload per piece of `bytes` (cut at `sizes`): the endpoint and their paths. */
async function partialUploads(bytes: Buffer, sizes: number[], fileId: string) {
  const { token } = await minter.mint({ scope: "s1", fileId, action: "upload", ttl: "1h" });
  const endpoint = `${origin}/files/tus/${token}`;
  const paths: string[] = [];
  let at = 0;
  for (const size of sizes) {
    const created = await fetch(endpoint, {
      method: "POST",
      headers: { ...TUS, "upload-concat": "partial", "upload-length": String(size) },
    });
    expect(created.status).toBe(201);
    const url = created.headers.get("location") as string;
    const patched = await fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: new Uint8Array(bytes.subarray(at, at + size)),
    });
    expect(patched.status).toBe(204);
    paths.push(new URL(url).pathname);
    at += size;
  }
  expect(at).toBe(bytes.length);
  return { endpoint, paths };
}

/** The adoption context of a store on the test bucket, copying into `<prefix>copies/` in 5 MiB parts. */
function adoptContext(overrides: Partial<S3AdoptContext> = {}): S3AdoptContext {
  return {
    client,
    bucket: requireServices().s3.bucket,
    dataKey: (_scope, id) => `${prefix}copies/${id}`,
    tagFor: async () => undefined,
    error: (action, cause) =>
      cause instanceof FileBridgeError ? cause : new FileBridgeError("STORAGE_ERROR", action, { cause }),
    copyPart: 5 * MiB,
    ...overrides,
  };
}

/** The bytes of stored file `file` of scope s1. */
async function storedBytes(file: StoredFile): Promise<Buffer> {
  const read = await inner.read("s1", file.id);
  const chunks: Buffer[] = [];
  for await (const chunk of read as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describeWithServices("tus commit on S3 by server-side copy (radosgw)", () => {
  it("a parallel upload's partial uploads are copied into place in order: exact bytes and sha256, nothing re-streamed or left staged", async () => {
    const sizes = [9 * MiB, 8 * MiB + 5, 8 * MiB];
    const bytes = randomBytes(sizes.reduce((sum, size) => sum + size, 0));
    const final = await parallelUpload(bytes, sizes);
    expect(final.status).toBe(201);
    expect(calls).toEqual({ stage: 0, adopted: [true] });
    const file = stored[0] as StoredFile;
    expect(file).toMatchObject({ scope: "s1", name: "data.bin", size: bytes.length, sha256: sha256(bytes) });
    expect(Buffer.compare(await storedBytes(file), bytes)).toBe(0);
    expect(await objectKeys(client, stagingPrefix())).toEqual([]);
    expect(await pendingUploads(client, stagingPrefix())).toEqual([]);
    expect(await pendingUploads(client, prefix)).toEqual([]);
  });

  it("a parallel upload with a part that is not a whole staged object of 5 MiB or more is streamed, exact", async () => {
    // A 3 MiB part before the last (under S3's 5 MiB part minimum), then a last part of 6 MiB (under
    // one 8 MiB staging part: a tail, not one object). Both decided before any byte is read.
    for (const [index, sizes] of [
      [9 * MiB, 3 * MiB, 9 * MiB + 1],
      [9 * MiB, 9 * MiB, 6 * MiB],
    ].entries()) {
      calls = { stage: 0, adopted: [] };
      const bytes = randomBytes(sizes.reduce((sum, size) => sum + size, 0));
      const final = await parallelUpload(bytes, sizes, `t-${index}`);
      expect(final.status).toBe(201);
      expect(calls).toEqual({ stage: 1, adopted: [] });
      const file = stored[index] as StoredFile;
      expect(file).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
      expect(Buffer.compare(await storedBytes(file), bytes)).toBe(0);
    }
    expect(await objectKeys(client, stagingPrefix())).toEqual([]);
    expect(await pendingUploads(client, stagingPrefix())).toEqual([]);
  });

  it("a parallel upload whose copy fails leaves nothing of it, and the same final upload commits when sent again", async () => {
    let failCopies = 1;
    inner.client.middlewareStack.add(
      (next, context) => async (args) => {
        const key = String((args.input as { Key?: string }).Key);
        // The copy into the file's key (not the staging's own completion, which copies its tail).
        if (context.commandName === "UploadPartCopyCommand" && key.startsWith(prefix) && failCopies > 0) {
          failCopies--;
          throw new Error("injected UploadPartCopy failure");
        }
        return next(args);
      },
      { step: "initialize", name: "failOneCopy" },
    );
    const sizes = [9 * MiB, 9 * MiB];
    const bytes = randomBytes(sizes.reduce((sum, size) => sum + size, 0));
    const { endpoint, paths } = await partialUploads(bytes, sizes, "t-1");
    const failed = await finalUpload(endpoint, paths);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failCopies).toBe(0);
    expect(stored).toEqual([]);
    expect(await objectKeys(client, prefix)).toEqual([]);
    expect(await pendingUploads(client, prefix)).toEqual([]);
    const again = await finalUpload(endpoint, paths);
    expect(again.status).toBe(201);
    expect(calls.adopted).toEqual([true]);
    const file = stored[0] as StoredFile;
    expect(file).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    expect(Buffer.compare(await storedBytes(file), bytes)).toBe(0);
    expect(await objectKeys(client, stagingPrefix())).toEqual([]);
    expect(await pendingUploads(client, stagingPrefix())).toEqual([]);
  });

  it("copies the staged object into place: exact bytes and sha256, listed, staging gone, other scopes see nothing", async () => {
    const bytes = randomBytes(13 * MiB + 4321);
    const last = await upload(bytes);
    expect(last.status).toBe(204);
    expect(calls).toEqual({ stage: 0, adopted: [true] });
    expect(stored).toHaveLength(1);
    const file = stored[0] as StoredFile;
    expect(file).toMatchObject({ scope: "s1", name: "data.bin", size: bytes.length, sha256: sha256(bytes) });
    const read = await inner.read("s1", file.id);
    const chunks: Buffer[] = [];
    for await (const chunk of read as AsyncIterable<Buffer>) chunks.push(chunk);
    expect(Buffer.compare(Buffer.concat(chunks), bytes)).toBe(0);
    expect((await inner.list("s1")).files.map((each) => each.id)).toEqual([file.id]);
    expect(await inner.head("s2", file.id)).toBeNull();
    expect(await inner.read("s2", file.id)).toBeNull();
    expect(await objectKeys(client, stagingPrefix())).toEqual([]);
    expect(await pendingUploads(client, stagingPrefix())).toEqual([]);
  });

  it("a commit the ticket's declared sha256 refuses leaves nothing: no file, no copy, no staging", async () => {
    const bytes = randomBytes(9 * MiB + 17);
    const last = await upload(bytes, { [TICKET_CLAIMS.sha256]: sha256(Buffer.from("something else")) });
    expect(last.status).toBeGreaterThanOrEqual(400);
    expect(calls.adopted).toEqual([true]);
    expect(stored).toEqual([]);
    expect((await inner.list("s1")).files).toEqual([]);
    expect(await objectKeys(client, prefix)).toEqual([]);
    expect(await objectKeys(client, stagingPrefix())).toEqual([]);
    expect(await pendingUploads(client, stagingPrefix())).toEqual([]);
  });

  it("copies past the CopyObject limit in UploadPartCopy parts; refuses a source of another size or client", async () => {
    const { bucket } = requireServices().s3;
    const bytes = randomBytes(13 * MiB + 5);
    const key = `${prefix}source.bin`;
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    const ctx = adoptContext({ copyObjectMax: 0 });
    const object = { client, bucket, key };
    const plan = () => planPut({ scope: "s1", name: "copy.bin" }, Date.now());
    const file = await adoptObject(ctx, { object, size: bytes.length, sha256: sha256(bytes) }, plan());
    expect(file).toMatchObject({ size: bytes.length, sha256: sha256(bytes), name: "copy.bin" });
    const copied = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: ctx.dataKey("s1", (file as StoredFile).id) }),
    );
    const body = Buffer.from((await copied.Body?.transformToByteArray()) ?? []);
    expect(Buffer.compare(body, bytes)).toBe(0);
    expect(await pendingUploads(client, `${prefix}copies/`)).toEqual([]);
    // With an expiry tag (bucket lifecycle): set once the copy is complete (radosgw ignores a tag
    // given to CreateMultipartUpload).
    const tagged = await adoptObject(
      { ...ctx, tagFor: async () => ({ Key: "mfb-expire-days", Value: "2" }) },
      { object, size: bytes.length, sha256: sha256(bytes) },
      plan(),
    );
    const tags = await client.send(
      new GetObjectTaggingCommand({ Bucket: bucket, Key: ctx.dataKey("s1", (tagged as StoredFile).id) }),
    );
    expect(tags.TagSet).toEqual([{ Key: "mfb-expire-days", Value: "2" }]);
    await client.send(
      new DeleteObjectCommand({ Bucket: bucket, Key: ctx.dataKey("s1", (tagged as StoredFile).id) }),
    );
    // Measured at another size: refused before any copy.
    expect(
      await codeOf(adoptObject(ctx, { object, size: bytes.length + 1, sha256: sha256(bytes) }, plan())),
    ).toBe("INVALID_INPUT");
    // Another client (another endpoint or credentials, as far as the store knows): not its object.
    const other = testClient();
    expect(
      await adoptObject(
        ctx,
        { object: { ...object, client: other }, size: bytes.length, sha256: sha256(bytes) },
        plan(),
      ),
    ).toBeNull();
    other.destroy();
    expect(await objectKeys(client, `${prefix}copies/`)).toHaveLength(1);
  });

  it("copies several objects one after another as one file, a short remainder joined to its range; refuses what S3 could not assemble", async () => {
    const { bucket } = requireServices().s3;
    // With 5 MiB copy parts: 7 MiB + 3 is one range of 5 MiB and a remainder of 2 MiB + 3 (too
    // short to be a part before another): copied as one range of 7 MiB + 3.
    const pieces = [randomBytes(7 * MiB + 3), randomBytes(5 * MiB), randomBytes(1 * MiB + 9)];
    const bytes = Buffer.concat(pieces);
    const keys = pieces.map((_, index) => `${prefix}piece-${index}.bin`);
    for (const [index, piece] of pieces.entries()) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: keys[index], Body: piece }));
    }
    const ctx = adoptContext();
    const objects = pieces.map((piece, index) => ({
      object: { client, bucket, key: keys[index] as string },
      size: piece.length,
    }));
    const plan = () => planPut({ scope: "s1", name: "joined.bin" }, Date.now());
    const file = await adoptObject(ctx, { objects, size: bytes.length, sha256: sha256(bytes) }, plan());
    expect(file).toMatchObject({ size: bytes.length, sha256: sha256(bytes), name: "joined.bin" });
    const copied = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: ctx.dataKey("s1", (file as StoredFile).id) }),
    );
    expect(Buffer.compare(Buffer.from((await copied.Body?.transformToByteArray()) ?? []), bytes)).toBe(0);
    expect(await pendingUploads(client, `${prefix}copies/`)).toEqual([]);

    const source = (parts: typeof objects) => ({
      objects: parts,
      size: parts.reduce((sum, part) => sum + part.size, 0),
      sha256: sha256(bytes),
    });
    // A part under 5 MiB before the last: S3 cannot take it as a part; not this store's to copy.
    const short = [objects[2], objects[0]] as typeof objects;
    expect(await adoptObject(ctx, source(short), plan())).toBeNull();
    // One object another client reaches: not this store's.
    const other = testClient();
    const foreign = [objects[0], { ...objects[1], object: { ...objects[1]?.object, client: other } }];
    expect(await adoptObject(ctx, source(foreign as typeof objects), plan())).toBeNull();
    other.destroy();
    // Sizes that do not add up to the measured size, or an object of another size: refused.
    expect(await codeOf(adoptObject(ctx, { ...source(objects), size: bytes.length + 1 }, plan()))).toBe(
      "INVALID_INPUT",
    );
    const misstated = objects.map((part, index) => (index === 1 ? { ...part, size: part.size + 1 } : part));
    expect(await codeOf(adoptObject(ctx, { ...source(misstated), sha256: sha256(bytes) }, plan()))).toBe(
      "INVALID_INPUT",
    );
    // Only the one copy made above.
    expect(await objectKeys(client, `${prefix}copies/`)).toHaveLength(1);
  });
});
