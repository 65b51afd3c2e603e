/**
 * Resume after dropped connections: a 256 MiB upload whose connection is cut at 10 random offsets,
 * resumed each time from the offset HEAD answers; the stored sha256 is exact and no staging is left.
 * (test/s3/tus-s3-resume.test.ts runs the same on S3 staging across two replicas.)
 */
import { afterEach, describe, expect, it } from "vitest";
import { uploadSha256, uploadWithCuts } from "./cuts.js";
import { startTus, type TusHarness } from "./harness.js";

const SIZE = 256 * 1024 * 1024;

let harness: TusHarness;
afterEach(async () => {
  await harness.close();
});

describe("tus resume after dropped connections", () => {
  it("cut at 10 random offsets of 256 MiB, resumed each time: exact sha256, no staging left", async () => {
    harness = await startTus();
    const endpoint = await harness.endpoint("scope-a", { maxBytes: SIZE });
    const created = await fetch(endpoint, {
      method: "POST",
      headers: { "tus-resumable": "1.0.0", "upload-length": String(SIZE) },
    });
    const url = created.headers.get("location") as string;
    expect(await uploadWithCuts([url], SIZE, 10)).toBeGreaterThanOrEqual(8);
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.size).toBe(SIZE);
    expect(harness.stored[0]?.sha256).toBe(uploadSha256(SIZE));
    expect(await harness.stagingFiles()).toEqual([]);
  }, 240_000);
});
