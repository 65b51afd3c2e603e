/**
 * `r2Store` beyond the shared suite: its options, multipart uploads with equal parts (miniflare's
 * R2, like R2, refuses a completion whose parts differ in size), ranged reads across part
 * boundaries, and object keys that do not show the scope. The store runs inside workerd.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { r2Store } from "../../src/cloudflare/index.js";
import { makeClock, readAll } from "../../src/testing/index.js";
import { type SuiteWorker, startSuiteWorker } from "./workerd.js";

let worker: SuiteWorker;
beforeAll(async () => {
  worker = await startSuiteWorker();
}, 60_000);
afterAll(async () => {
  await worker?.dispose();
});

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("r2Store", () => {
  it("validates its options with INVALID_OPTION naming the option", () => {
    const bucket = {
      head() {},
      get() {},
      put() {},
      delete() {},
      list() {},
      createMultipartUpload() {},
    } as never;
    const cases: Array<[unknown, string]> = [
      [null, "options"],
      [{ bucket: {} }, "bucket"],
      [{ bucket, prefix: "no-slash" }, "prefix"],
      [{ bucket, keySecret: "short" }, "keySecret"],
      [{ bucket, partSize: 1024 }, "partSize"],
      [{ bucket, partSize: 6 * 1024 ** 3 }, "partSize"],
      [{ bucket, queueSize: 0 }, "queueSize"],
      [{ bucket, now: "today" }, "now"],
    ];
    for (const [options, option] of cases) {
      expect(() => r2Store(options as never)).toThrow(
        expect.objectContaining({ code: "INVALID_OPTION", data: { option } }),
      );
    }
  });

  it("streams a 12 MiB put in equal 5 MiB parts; whole and ranged reads across part boundaries round-trip", async () => {
    const store = worker.fileStore(makeClock().now);
    const bytes = randomBytes(12 * 1024 * 1024 + 3);
    // Odd chunk sizes, so no chunk lines up with a part boundary.
    const source = (async function* () {
      for (let offset = 0; offset < bytes.length; offset += 1_000_003)
        yield bytes.subarray(offset, offset + 1_000_003);
    })();
    const file = await store.put(source, { scope: "big", name: "big.bin" });
    expect(file.size).toBe(bytes.length);
    expect(file.sha256).toBe(sha256(bytes));
    expect((await readAll(await store.read("big", file.id))).equals(bytes)).toBe(true);
    const boundary = 5 * 1024 * 1024;
    for (const [start, end] of [
      [boundary - 10, boundary + 10],
      [2 * boundary - 1, 2 * boundary],
      [bytes.length - 5, bytes.length - 1],
    ] as const) {
      const got = await readAll(await store.read("big", file.id, { start, end }));
      expect(got.equals(bytes.subarray(start, end + 1))).toBe(true);
    }
    expect(await store.delete("big", file.id)).toBe(true);
  });

  it("a put refused past its cap leaves no object and no part behind", async () => {
    const store = worker.fileStore(makeClock().now);
    const before = await worker.bucketKeys();
    const source = (async function* () {
      for (let i = 0; i < 12; i++) yield randomBytes(1024 * 1024);
    })();
    const refused = await store
      .put(source, { scope: "cap", name: "x", maxBytes: 11 * 1024 * 1024 })
      .catch((e) => e);
    expect(refused.code).toBe("FILE_TOO_LARGE");
    const after = (await worker.bucketKeys()).filter(
      (key) => !before.includes(key) && !key.endsWith(".scope-key"),
    );
    expect(after).toEqual([]);
  });

  it("object keys never show the scope", async () => {
    const store = worker.fileStore(makeClock().now);
    const scope = "alice@example.com";
    await store.put(new TextEncoder().encode("x"), { scope, name: "alice-secret-plans.txt" });
    const keys = await worker.bucketKeys();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).not.toContain("alice");
      expect(key).not.toContain("example.com");
    }
  });
});
