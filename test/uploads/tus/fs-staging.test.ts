import { randomBytes } from "node:crypto";
import { appendFile, mkdtemp, readFile, rm, stat, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../../src/errors/file-bridge-error.js";
import { fsTusStaging, type TusStaging } from "../../../src/uploads/tus/fs-staging.js";

let dir: string;
let staging: TusStaging;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-fs-staging-"));
  staging = fsTusStaging(dir);
  await staging.create("u", Date.now() + 60_000);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const path = () => staging.localPath?.("u") as string;

describe("fsTusStaging.write at the recorded offset", () => {
  it("appends at the offset, and first cuts off a tail past it (what a crash left of a cut write)", async () => {
    const first = randomBytes(1000);
    expect(await staging.write("u", 0, Readable.from([first]))).toEqual({ written: 1000 });
    await appendFile(path(), randomBytes(300)); // bytes the record never counted
    const second = randomBytes(500);
    expect(await staging.write("u", 1000, Readable.from([second]))).toEqual({ written: 500 });
    expect(await readFile(path())).toEqual(Buffer.concat([first, second]));
  });

  it("refuses (STORAGE_ERROR) a file shorter than the offset instead of filling the hole with zeros", async () => {
    const first = randomBytes(1000);
    await staging.write("u", 0, Readable.from([first]));
    await truncate(path(), 600); // a crash lost pages the record had counted
    const source = Readable.from([randomBytes(500)]);
    const { written, error } = await staging.write("u", 1000, source);
    expect(written).toBe(0);
    expect(isFileBridgeError(error, "STORAGE_ERROR")).toBe(true);
    expect((await stat(path())).size).toBe(600);
    expect(await readFile(path())).toEqual(first.subarray(0, 600));
  });
});
