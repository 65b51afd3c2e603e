/**
 * The sha256 stream where no worker thread can start (workerd's `node:worker_threads` throws
 * "not implemented"): it hashes in the calling thread, and must hash every byte.
 */
import { createHash, randomBytes } from "node:crypto";
import { expect, it, vi } from "vitest";

// node:worker_threads is loaded on first use through the package's loader: its Worker throws.
const tried = vi.hoisted(() => ({ workers: 0 }));
vi.mock("../../../src/internal/node-builtins.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../../../src/internal/node-builtins.js")>()),
  newWorker: () => {
    tried.workers++;
    throw new Error("[ERR_METHOD_NOT_IMPLEMENTED]: The Worker method is not implemented");
  },
}));

const { Sha256Stream } = await import("../../../src/storage/kit/sha256-stream.js");

it("hashes every byte of chunks that straddle a batch when no worker thread can start", async () => {
  const bytes = randomBytes(3 * 1024 * 1024 + 3);
  const stream = new Sha256Stream();
  for (let offset = 0; offset < bytes.length; offset += 1_000_003) {
    await stream.update(bytes.subarray(offset, offset + 1_000_003));
  }
  expect(await stream.digest()).toBe(createHash("sha256").update(bytes).digest("hex"));
  expect(tried.workers).toBeGreaterThan(0);
});
