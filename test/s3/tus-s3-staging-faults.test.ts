/**
 * `s3TusStaging` when recording a part fails once (review of issue 46, the same shape as
 * `r2TusStaging`'s): a part that went up is not kept again as the tail, so the staged bytes never
 * count more than arrived. Real radosgw; the part list in a memory state store that fails once.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, requireServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { memoryState } from "../../src/index.js";
import { s3TusStaging } from "../../src/s3/s3-staging.js";
import { type S3FileStore, s3Store } from "../../src/s3/s3-store.js";
import { readAll } from "../../src/testing/index.js";
import { stateFailingOnce } from "../support/failing-state.js";
import { connection, objectKeys, testClient } from "./s3-helpers.js";

const MiB = 1024 * 1024;
let store: S3FileStore;
let prefix: string;

beforeEach(() => {
  prefix = `${uniquePrefix("tusfault").slice(0, -1)}/`;
  store = s3Store({ ...connection(), prefix, sweepInterval: 0 });
});
afterEach(async () => {
  await store.close?.();
});

describeWithServices("s3TusStaging, a part recorded late (radosgw)", () => {
  it("is not counted again as the tail, and the upload continues to the exact bytes", async () => {
    // set #1: create; #2: the record after the first part (fails); then every set works.
    const staging = s3TusStaging(store, stateFailingOnce(2), { partSize: 5 * MiB });
    await staging.create("f1", Date.now() + 3_600_000);
    const bytes = randomBytes(11 * MiB + 77);
    const first = await staging.write("f1", 0, Readable.from([bytes.subarray(0, 5 * MiB + 1000)]));
    expect(first.error).toBeDefined();
    expect(first.written).toBeLessThanOrEqual(5 * MiB + 1000);
    const offset = (await staging.size?.("f1")) as number;
    expect(offset).toBe(first.written);
    const second = await staging.write("f1", offset, Readable.from([bytes.subarray(offset)]));
    expect(second.error).toBeUndefined();
    expect(await staging.size?.("f1")).toBe(bytes.length);
    expect((await readAll(staging.read("f1", bytes.length))).equals(bytes)).toBe(true);
    await staging.remove("f1");
  }, 60_000);
});

describeWithServices("s3TusStaging's tail objects (radosgw)", () => {
  it("bodies under a checksum (provisional, then confirmed) leave no superseded tail objects", async () => {
    const staging = s3TusStaging(store, memoryState());
    await staging.create("f2", Date.now() + 3_600_000);
    const bytes = randomBytes(10 * 1000);
    for (let offset = 0; offset < bytes.length; offset += 1000) {
      const body = Readable.from([bytes.subarray(offset, offset + 1000)]);
      const result = await staging.write("f2", offset, body, undefined, { provisional: true });
      expect(result.error).toBeUndefined();
      await staging.confirm?.("f2");
    }
    expect(await staging.size?.("f2")).toBe(bytes.length);
    const client = testClient();
    const tails = await objectKeys(client, `${prefix.slice(0, -1)}-tus/f2.`);
    // The current tail, and the one before it (what a refused body is cut back to).
    expect(tails.length).toBeLessThanOrEqual(2);
    expect((await readAll(staging.read("f2", bytes.length))).equals(bytes)).toBe(true);
    await staging.remove("f2");
    expect(await objectKeys(client, `${prefix.slice(0, -1)}-tus/`)).toEqual([]);
    client.destroy();
  }, 60_000);
});

describeWithServices("s3TusStaging's removal (radosgw)", () => {
  it("removes more than one listing page (1,000) of an upload's objects", async () => {
    const staging = s3TusStaging(store, memoryState());
    await staging.create("f3", Date.now() + 3_600_000);
    const client = testClient();
    const at = `${prefix.slice(0, -1)}-tus/f3.`;
    // Tails left by requests that died before recording them.
    const keys = Array.from({ length: 1005 }, (_, i) => `${at}${String(i).padStart(6, "0")}.part`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(
        keys
          .slice(i, i + 50)
          .map((Key) =>
            client.send(new PutObjectCommand({ Bucket: requireServices().s3.bucket, Key, Body: "x" })),
          ),
      );
    }
    await staging.remove("f3");
    expect(await objectKeys(client, at)).toEqual([]);
    client.destroy();
  }, 120_000);
});
