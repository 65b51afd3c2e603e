/**
 * A tus upload's lock stays held while its request runs, however short `lockTtl` is: with a 1 s TTL
 * it was renewed every second and lapsed just before each renewal, so a request slower than a second
 * (an S3 part upload under load, a flush after a cut) lost its lock to the next request, whose offset
 * check then passed against an offset about to change.
 */
import { describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../../src/errors/file-bridge-error.js";
import { memoryState } from "../../../src/storage/memory-state.js";
import { lockUpload } from "../../../src/uploads/tus/records.js";

describe("tus upload lock renewal", () => {
  it("a lock with a 1 s TTL held for 2.5 s is still held: a second taker gets UPLOAD_IN_PROGRESS", async () => {
    const state = memoryState();
    const lock = await lockUpload(state, "upload-1", 1000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const second = await lockUpload(state, "upload-1", 1000, 0).catch((error: unknown) => error);
    expect(isFileBridgeError(second, "UPLOAD_IN_PROGRESS")).toBe(true);
    await lock.release();
    const third = await lockUpload(state, "upload-1", 1000, 0);
    await third.release();
  });
});
