import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_QUEUED_BYTES, TempFileWriter } from "../../src/bridge/temp-file-writer.js";
import { codeOf, sha256 } from "../support/helpers.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-writer-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("TempFileWriter", () => {
  it("writes queued chunks in order, past the queue limit, with the right size and sha256", async () => {
    const chunks = Array.from({ length: 12 }, (_, i) => randomBytes(1024 * 1024 + i));
    const path = join(dir, "out.bin");
    const writer = TempFileWriter.deferred(Promise.resolve(path), 64 * 1024 * 1024);
    for (const chunk of chunks) await writer.write(chunk);
    const written = await writer.finish();
    const all = Buffer.concat(chunks);
    expect(all.length).toBeGreaterThan(MAX_QUEUED_BYTES);
    expect(written.size).toBe(all.length);
    expect(written.sha256).toBe(sha256(all));
    expect(written.head.equals(all.subarray(0, 8))).toBe(true);
    expect((await readFile(path)).equals(all)).toBe(true);
  });

  it("lets the producer run ahead while the file is being opened", async () => {
    let open!: (path: string) => void;
    const path = new Promise<string>((resolve) => {
      open = resolve;
    });
    const writer = TempFileWriter.deferred(path, 1024 * 1024);
    // Both writes return although the file cannot be opened yet.
    await writer.write(Buffer.from("hello "));
    await writer.write(Buffer.from("world"));
    open(join(dir, "late.txt"));
    expect((await writer.finish()).sha256).toBe(sha256(Buffer.from("hello world")));
    expect(await readFile(join(dir, "late.txt"), "utf8")).toBe("hello world");
  });

  it("reports a file that cannot be created on a later write or on finish", async () => {
    const taken = join(dir, "taken.txt");
    await writeFile(taken, "already here");
    const writer = TempFileWriter.deferred(Promise.resolve(taken), 1024);
    await writer.write(Buffer.from("x"));
    await expect(writer.finish()).rejects.toMatchObject({ code: "EEXIST" });
    expect(await readFile(taken, "utf8")).toBe("already here");
    await writer.close();
  });

  it("refuses bytes over the cap with FILE_TOO_LARGE", async () => {
    const writer = TempFileWriter.deferred(Promise.resolve(join(dir, "cap.bin")), 10);
    await writer.write(Buffer.alloc(6));
    expect(await codeOf(writer.write(Buffer.alloc(5)))).toBe("FILE_TOO_LARGE");
    await writer.close();
  });

  it("starts over after reset()", async () => {
    const path = join(dir, "reset.txt");
    const writer = TempFileWriter.deferred(Promise.resolve(path), 1024);
    await writer.write(Buffer.from("first attempt"));
    await writer.reset();
    await writer.write(Buffer.from("second"));
    const written = await writer.finish();
    expect(written).toMatchObject({ size: 6, sha256: sha256(Buffer.from("second")) });
    expect(await readFile(path, "utf8")).toBe("second");
  });
});
