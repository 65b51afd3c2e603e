/**
 * `s3TusStaging` when recording a part fails once (review of issue 46, the same shape as
 * `r2TusStaging`'s): a part that went up is not kept again as the tail, so the staged bytes never
 * count more than arrived. Real radosgw; the part list in a memory state store that fails once.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeWithServices, uniquePrefix } from "../../scripts/services/test-env.js";
import { s3TusStaging } from "../../src/s3/s3-staging.js";
import { type S3FileStore, s3Store } from "../../src/s3/s3-store.js";
import { readAll } from "../../src/testing/index.js";
import { stateFailingOnce } from "../support/failing-state.js";
import { connection } from "./s3-helpers.js";

const MiB = 1024 * 1024;
let store: S3FileStore;

beforeEach(() => {
  store = s3Store({ ...connection(), prefix: `${uniquePrefix("tusfault").slice(0, -1)}/`, sweepInterval: 0 });
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
