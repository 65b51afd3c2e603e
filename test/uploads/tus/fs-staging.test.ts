import { createHash, randomBytes } from "node:crypto";
import {
  appendFile,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../../src/errors/file-bridge-error.js";
import { fsTusStaging, type TusStaging } from "../../../src/uploads/tus/fs-staging.js";
import { startTus, type TusHarness } from "./harness.js";

let dir: string;
let staging: TusStaging;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-fs-staging-"));
  staging = fsTusStaging(dir);
  await staging.create("u", Date.now() + 60_000);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
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

describe("fsTusStaging.shortfall", () => {
  it("tells the bytes a file holds only when they are fewer than the offset", async () => {
    await staging.write("u", 0, Readable.from([randomBytes(1000)]));
    expect(await staging.shortfall?.("u", 1000)).toBeUndefined();
    expect(await staging.shortfall?.("u", 800)).toBeUndefined(); // an uncounted tail is not a shortfall
    expect(await staging.shortfall?.("u", 1200)).toBe(1000);
    expect(await staging.shortfall?.("missing", 1200)).toBeUndefined();
  });
});

describe("a staging file that lost bytes the record counted", () => {
  let harness: TusHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it("HEAD answers the offset the file really has; the upload resumes from there to the exact bytes", async () => {
    harness = await startTus();
    const bytes = new Uint8Array(randomBytes(300_000));
    const endpoint = await harness.endpoint("scope-a", { maxBytes: bytes.length });
    const tus = { "tus-resumable": "1.0.0" };
    const created = await fetch(endpoint, {
      method: "POST",
      headers: { ...tus, "upload-length": String(bytes.length) },
    });
    const url = created.headers.get("location") as string;
    const patch = (offset: number, body: Uint8Array<ArrayBuffer>) =>
      fetch(url, {
        method: "PATCH",
        headers: {
          ...tus,
          "upload-offset": String(offset),
          "content-type": "application/offset+octet-stream",
        },
        body,
      });
    expect((await patch(0, bytes.subarray(0, 200_000))).headers.get("upload-offset")).toBe("200000");
    const [file] = await harness.stagingFiles();
    await truncate(file as string, 120_000); // a crash lost pages the record had counted

    const head = await fetch(url, { method: "HEAD", headers: tus });
    expect(head.status).toBe(200);
    expect(head.headers.get("upload-offset")).toBe("120000");
    // The old offset is refused as any stale offset is, with the real one to resume from.
    const stale = await patch(200_000, bytes.subarray(200_000));
    expect(stale.status).toBe(409);
    expect((await stat(file as string)).size).toBe(120_000);

    const done = await patch(120_000, bytes.subarray(120_000));
    expect(done.status).toBe(204);
    expect(done.headers.get("upload-offset")).toBe(String(bytes.length));
    expect(harness.stored).toHaveLength(1);
    expect(harness.stored[0]?.size).toBe(bytes.length);
    expect(harness.stored[0]?.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(await harness.stagingFiles()).toEqual([]);
  });
});

describe("fsTusStaging.sweep beside a creation under way", () => {
  it("keeps an upload whose sidecar is made but not yet written (a sweep read it empty: expired at 0)", async () => {
    // What a concurrent create leaves between its exclusive open of the sidecar and its write.
    await writeFile(join(dir, "v.expires"), "", { mode: 0o600 });
    await writeFile(join(dir, "v"), "", { mode: 0o600 });
    expect(await staging.sweep(Date.now())).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(["u", "u.expires", "v", "v.expires"]);
  });

  it("removes an upload whose sidecar stayed empty past the orphan age (a crash mid-create)", async () => {
    await writeFile(join(dir, "v.expires"), "", { mode: 0o600 });
    await writeFile(join(dir, "v"), "", { mode: 0o600 });
    const old = new Date(Date.now() - 25 * 60 * 60_000);
    await utimes(join(dir, "v.expires"), old, old);
    expect(await staging.sweep(Date.now())).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(["u", "u.expires"]);
  });

  it("still removes an expired upload, and keeps a live one", async () => {
    await staging.create("w", Date.now() - 1);
    expect(await staging.sweep(Date.now())).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(["u", "u.expires"]);
  });
});
