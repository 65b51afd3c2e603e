/**
 * Issue 40, items 1 and 2, on real radosgw: what the holder of a direct-upload descriptor
 * (`files: { direct: true }`) can make the bucket do. radosgw obeys `x-amz-*` headers a presigned
 * PUT's signature does not cover, and ignores `x-amz-copy-source-if-match`.
 *
 * 1. bob adds `x-amz-copy-source: <bucket>/<alice's data key>` (as a header, and as a form field
 *    when the descriptor is a form): alice's object must not become bob's upload, nor be readable
 *    through bob's staging object. `x-amz-acl: public-read` must not make anything anonymously
 *    readable; `x-amz-meta-*` must not be stored.
 * 2. bob uploads other bytes while the commit runs (after the commit read the first ones): the file
 *    must be the bytes its sha-256 says, and never other bytes than the declared digest's.
 */
import { createHash, randomBytes } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { afterEach, expect, it } from "vitest";
import { describeWithServices, requireServices } from "../../../scripts/services/test-env.js";
import { newId } from "../../../src/internal/ids.js";
import { readAll } from "../../../src/testing/index.js";
import { type Descriptor, sendBytes, sha256Hex } from "../../support/draft-files-client.js";
import { bucketSetup, sendWith } from "./bucket-setup.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** The staging object a descriptor writes (the key in the form, else the URL's path). */
function stagingKeyOf(descriptor: Descriptor): string {
  const fromForm = descriptor.multipart?.fields?.key;
  if (fromForm) return fromForm;
  const path = decodeURIComponent(new URL(descriptor.url).pathname);
  return path.slice(`/${requireServices().s3.bucket}/`.length);
}

async function settle<T>(promise: Promise<T>): Promise<T | { refused: unknown }> {
  try {
    return await promise;
  } catch (error) {
    return { refused: error };
  }
}

describeWithServices("attack: a direct-upload descriptor's holder steers the bucket", () => {
  it("x-amz-copy-source does not make another scope's object bob's upload", async () => {
    const { store, stored, bob, keys } = await bucketSetup(cleanups);
    const secret = randomBytes(64);
    const alices = await store.put(secret, { scope: "alice", name: "secret.bin", kind: "upload" });
    const aliceKey = (await keys()).find((key) => key.endsWith(`/${alices.id}`)) as string;
    expect(aliceKey).toBeDefined();
    const copy = { "x-amz-copy-source": `${requireServices().s3.bucket}/${aliceKey}` };

    // With nothing declared (no size, no digest), and with the size of alice's file declared.
    for (const declared of [{}, { size: secret.length }]) {
      const { file, upload } = await bob.authorizeUpload({ name: "mine.bin", ...declared });
      await sendWith(upload, new Uint8Array(0), copy);
      await settle(bob.completeUpload(file.uri));
    }
    for (const file of stored) {
      expect(file.sha256).not.toBe(sha256Hex(secret));
      const bytes = Buffer.from(await readAll((await store.read(file.scope, file.id))!));
      expect(bytes.equals(secret)).toBe(false);
    }
    expect((await store.list("bob")).files.map((file) => file.sha256)).not.toContain(sha256Hex(secret));
  });

  it("x-amz-acl: public-read makes nothing anonymously readable; x-amz-meta-* is not stored", async () => {
    const { bob, keys, metadataOf, anonymousStatus, store } = await bucketSetup(cleanups);
    const bytes = Buffer.from("bob's bytes, public?");
    const { file, upload } = await bob.authorizeUpload({ name: "p.txt" });
    const sent = await sendWith(upload, bytes, {
      acl: "public-read",
      "x-amz-acl": "public-read",
      "x-amz-meta-evil": "planted",
    });
    const staged = stagingKeyOf(upload);
    // Before any commit: the staging object (if the store took the upload) is private and clean.
    if (sent.ok) {
      expect(await anonymousStatus(staged)).toBe(403);
      expect(await metadataOf(staged)).not.toHaveProperty("evil");
    }
    await settle(bob.completeUpload(file.uri));
    // A plain upload to the same descriptor still works and commits.
    const second = await bob.authorizeUpload({ name: "q.txt" });
    expect((await sendBytes(second.upload, bytes)).ok).toBe(true);
    await bob.completeUpload(second.file.uri);
    for (const key of await keys()) {
      expect(await anonymousStatus(key)).toBe(403);
      expect(await metadataOf(key)).not.toHaveProperty("evil");
    }
    expect((await store.list("bob")).files.length).toBeGreaterThan(0);
  });

  it("bytes uploaded again during the commit never become a file whose sha-256 is not its bytes'", async () => {
    const { store, stored, bob } = await bucketSetup(cleanups);
    const first = randomBytes(4096);
    const swapped = randomBytes(4096);
    // The attacker's second upload lands just before each S3 request the commit makes after its
    // first look at the staged object (the window radosgw's ignored copy precondition left open).
    const commands = ["CopyObjectCommand", "GetObjectCommand", "HeadObjectCommand", "PutObjectCommand"];
    for (const at of commands) {
      for (const declareDigest of [true, false]) {
        const { file, upload } = await bob.authorizeUpload({
          name: `race-${at}.bin`,
          size: first.length,
          ...(declareDigest ? { digest: { algorithm: "sha-256", value: sha256Hex(first) } } : {}),
        });
        expect((await sendBytes(upload, first)).ok).toBe(true);
        let seen = 0;
        let fired = false;
        const step =
          (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
          async (args: unknown) => {
            if (context.commandName === "HeadObjectCommand" && seen++ === 0 && at === "HeadObjectCommand") {
              return next(args); // the commit's first look: the race starts after it
            }
            if (!fired && context.commandName === at) {
              fired = true;
              await sendBytes(upload, swapped);
            }
            return next(args);
          };
        store.client.middlewareStack.add(step as never, { step: "initialize", name: "race", override: true });
        try {
          await settle(bob.completeUpload(file.uri));
        } finally {
          store.client.middlewareStack.remove("race");
        }
      }
    }
    expect(stored.length).toBeGreaterThan(0);
    for (const file of stored) {
      const bytes = Buffer.from(await readAll((await store.read(file.scope, file.id))!));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(file.sha256);
      expect(bytes.length).toBe(file.size);
    }
    // With the digest declared, a stored file is the declared bytes and nothing else.
    for (const file of stored.filter((each) => each.sha256 === sha256Hex(first))) {
      expect(Buffer.from(await readAll((await store.read(file.scope, file.id))!)).equals(first)).toBe(true);
    }
  });

  it("the commit refuses a staged object with metadata or an ACL grant it did not set (a store that ignores the policy)", async () => {
    const { store, s3, keys } = await bucketSetup(cleanups);
    const direct = store.directUploads;
    const Bucket = requireServices().s3.bucket;
    const planted = [{ Metadata: { evil: "planted" } }, { ACL: "public-read" as const }];
    for (const extra of planted) {
      const stagingId = newId();
      const target = await direct.presignUpload({ scope: "bob", stagingId, expiresIn: 60 });
      // What a store that does not enforce the POST policy would have stored.
      await s3.send(new PutObjectCommand({ Bucket, Key: target.fields.key, Body: "bob", ...extra }));
      const refused = await settle(
        direct.commit("bob", stagingId, { scope: "bob", name: "x", maxBytes: 100 }),
      );
      expect(refused).toHaveProperty("refused");
      expect((refused as { refused: { code?: string } }).refused.code).toBe("INVALID_INPUT");
    }
    expect(await keys()).toEqual([]); // staging objects removed, no file, no copy left
    expect((await store.list("bob")).files).toEqual([]);
  });
});
