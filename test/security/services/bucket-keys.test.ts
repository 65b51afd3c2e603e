/**
 * Issue 40, item 3, on real radosgw: the bucket's key prefix of a scope was `sha256(scope)[0..32]`,
 * so whoever saw one object key (a presigned download URL, a direct-upload descriptor) could test
 * guesses offline ("bob" among 272,000 names in 2.4 s). Keys now carry a keyed reference; files
 * written under the old layout stay readable, and `migrateKeys()` moves them.
 */
import { createHash, randomBytes } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { afterEach, expect, it } from "vitest";
import { describeWithServices, requireServices } from "../../../scripts/services/test-env.js";
import { newId } from "../../../src/internal/ids.js";
import { serializeMeta } from "../../../src/s3/s3-keys.js";
import { type S3FileStore, s3Store } from "../../../src/s3/s3-store.js";
import type { StoredFile } from "../../../src/storage/types.js";
import { readAll } from "../../../src/testing/index.js";
import { connection, objectKeys, testClient } from "../../s3/s3-helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** What an attacker computes offline for each candidate name: the unkeyed folder of that scope. */
const unkeyed = (scope: string) => createHash("sha256").update(scope, "utf8").digest("hex").slice(0, 32);
const CANDIDATES = ["alice", "bob", "carol", "admin", "user-1", "user-2", "bob@example.com"];

function storeOf(prefix: string, options: Partial<Parameters<typeof s3Store>[0]> = {}): S3FileStore {
  const store = s3Store({
    ...connection(),
    prefix,
    sweepInterval: 0,
    presign: { expiresIn: "5m" },
    ...options,
  });
  cleanups.push(async () => store.close?.());
  return store;
}

describeWithServices("attack: guessing a scope offline from the bucket's keys", () => {
  it("no object key, presigned download URL or upload form carries an unkeyed hash of the scope", async () => {
    const prefix = `keys-${randomBytes(6).toString("hex")}/`;
    const store = storeOf(prefix);
    const file = await store.put(Buffer.from("bob's"), { scope: "bob", name: "b.txt" });
    const url = (await store.presignedUrl("bob", file.id)) as string;
    const form = await store.directUploads.presignUpload({ scope: "bob", stagingId: newId(), expiresIn: 60 });
    const seen = [url, form.fields.key as string, ...(await objectKeys(testClient(), prefix))].join("\n");
    const hits = CANDIDATES.filter((name) => seen.includes(unkeyed(name)));
    expect(hits).toEqual([]);
    // The folder is the same for one scope on every replica (the key is shared through the bucket),
    // and differs between scopes.
    const replica = storeOf(prefix);
    expect(Buffer.from(await readAll((await replica.read("bob", file.id))!)).toString()).toBe("bob's");
    const other = await replica.put(Buffer.from("alice's"), { scope: "alice", name: "a.txt" });
    const folders = new Set((await objectKeys(testClient(), prefix)).map((key) => key.split("/")[1]));
    expect(folders.size).toBe(2); // bob's and alice's
    expect(await store.head("alice", other.id)).toMatchObject({ id: other.id });
  });

  it("an operator's keySecret keys the folders; another secret finds nothing", async () => {
    const prefix = `keys-${randomBytes(6).toString("hex")}/`;
    const secret = randomBytes(32);
    const store = storeOf(prefix, { keySecret: secret });
    const file = await store.put(Buffer.from("x"), { scope: "bob", name: "x" });
    expect(await storeOf(prefix, { keySecret: secret }).head("bob", file.id)).toMatchObject({ id: file.id });
    expect(await storeOf(prefix, { keySecret: randomBytes(32) }).head("bob", file.id)).toBeNull();
    expect(() => storeOf(prefix, { keySecret: "short" })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "keySecret" } }),
    );
  });

  it("files of the unkeyed layout stay readable, and migrateKeys() moves them to the keyed one", async () => {
    const prefix = `keys-${randomBytes(6).toString("hex")}/`;
    const s3 = testClient();
    cleanups.push(async () => s3.destroy());
    const Bucket = requireServices().s3.bucket;
    // A bucket written by the layout before issue 40: `<prefix><sha256(scope)[0..32]>/<id>` + `.json`.
    const legacy: StoredFile[] = [];
    for (const [scope, text] of [
      ["bob", "old bob"],
      ["alice", "old alice"],
    ] as const) {
      const id = newId();
      const file: StoredFile = {
        id,
        scope,
        name: `${scope}.txt`,
        mimeType: "text/plain",
        size: text.length,
        sha256: createHash("sha256").update(text).digest("hex"),
        createdAt: Date.now(),
        kind: "upload",
      };
      const folder = `${prefix}${unkeyed(scope)}/`;
      await s3.send(new PutObjectCommand({ Bucket, Key: folder + id, Body: text }));
      await s3.send(new PutObjectCommand({ Bucket, Key: `${folder}${id}.json`, Body: serializeMeta(file) }));
      legacy.push(file);
    }
    const store = storeOf(prefix);
    const [bobs, alices] = legacy as [StoredFile, StoredFile];
    expect(await store.head("bob", bobs.id)).toMatchObject({ id: bobs.id });
    expect(Buffer.from(await readAll((await store.read("bob", bobs.id))!)).toString()).toBe("old bob");
    expect(await store.head("alice", bobs.id)).toBeNull(); // still per scope
    const fresh = await store.put(Buffer.from("new bob"), { scope: "bob", name: "n.txt" });
    expect((await store.list("bob")).files.map((file) => file.id).sort()).toEqual([bobs.id, fresh.id].sort());

    expect(await store.migrateKeys()).toEqual({ moved: 2 });
    expect(await store.presignedUrl("bob", bobs.id)).not.toContain(unkeyed("bob"));
    const keys = await objectKeys(s3, prefix);
    expect(keys.filter((key) => CANDIDATES.some((name) => key.includes(unkeyed(name))))).toEqual([]);
    expect(await store.migrateKeys()).toEqual({ moved: 0 }); // once is enough
    // After the migration the old layout need not be read at all.
    const keyedOnly = storeOf(prefix, { legacyKeys: false });
    expect(Buffer.from(await readAll((await keyedOnly.read("alice", alices.id))!)).toString()).toBe(
      "old alice",
    );
    expect((await keyedOnly.list("bob")).files).toHaveLength(2);
    expect(await keyedOnly.delete("bob", bobs.id)).toBe(true);
    expect(await keyedOnly.head("bob", bobs.id)).toBeNull();
  });
});
