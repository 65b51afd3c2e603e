import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { MAX_QUEUED_BYTES, sha256OfFileSync, TempFileWriter } from "../../src/bridge/temp-file-writer.js";
import { codeOf, sha256 } from "../support/helpers.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-writer-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
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

  it("without hashing: writes many chunks side by side at their offsets and leaves sha256 undefined", async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => randomBytes(256 * 1024 + i * 7));
    const path = join(dir, "parallel.bin");
    const writer = TempFileWriter.deferred(Promise.resolve(path), 64 * 1024 * 1024, { hash: false });
    for (const chunk of chunks) await writer.write(chunk);
    const written = await writer.finish();
    const all = Buffer.concat(chunks);
    expect(written.sha256).toBeUndefined();
    expect(written.size).toBe(all.length);
    expect(written.head.equals(all.subarray(0, 8))).toBe(true);
    expect((await readFile(path)).equals(all)).toBe(true);
  });

  it("still refuses over the cap, and reports an aborted signal, without hashing", async () => {
    const controller = new AbortController();
    const writer = TempFileWriter.deferred(Promise.resolve(join(dir, "cap2.bin")), 10, {
      signal: controller.signal,
      hash: false,
    });
    await writer.write(Buffer.alloc(6));
    expect(await codeOf(writer.write(Buffer.alloc(5)))).toBe("FILE_TOO_LARGE");
    controller.abort();
    expect(await codeOf(writer.write(Buffer.alloc(1)))).toBe("ABORTED");
    await writer.close();
  });

  it("sha256OfFileSync hashes a file of any size", async () => {
    for (const size of [0, 1, 1024 * 1024, 3 * 1024 * 1024 + 5]) {
      const bytes = randomBytes(size);
      const path = join(dir, `h${size}.bin`);
      await writeFile(path, bytes);
      expect(sha256OfFileSync(path)).toBe(sha256(bytes));
    }
  });
});

describe("ResolvedFile.sha256 of inputs decoded from the argument (computed on first read)", () => {
  it("is the sha256 of the file, also in a spread copy and in JSON", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
    const bytes = randomBytes(300_000);
    for (const input of [
      `data:application/octet-stream;base64,${bytes.toString("base64")}`,
      { name: "a.bin", content: bytes.toString("base64") },
    ]) {
      const file = await bridge.resolve(input, { scope: "s" });
      expect({ ...file }.sha256).toBe(sha256(bytes));
      expect(JSON.parse(JSON.stringify(file)).sha256).toBe(sha256(bytes));
      expect(file.sha256).toBe(sha256(bytes));
      await file.dispose();
    }
  });

  it("is read from the file when first asked for: read it before changing the file", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
    const file = await bridge.resolve("data:text/plain;name=a.txt,original", { scope: "s" });
    await writeFile(file.path, "changed by the tool");
    expect(file.sha256).toBe(sha256("changed by the tool"));
    await writeFile(file.path, "changed again");
    expect(file.sha256).toBe(sha256("changed by the tool")); // computed once
    await file.dispose();
  });

  it("fails with NOT_FOUND when first read after dispose(), and is kept when read before", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
    const unread = await bridge.resolve("data:,hello", { scope: "s" });
    const read = await bridge.resolve("data:,hello", { scope: "s" });
    expect(read.sha256).toBe(sha256("hello"));
    await Promise.all([unread.dispose(), read.dispose()]);
    expect(read.sha256).toBe(sha256("hello"));
    expect(await codeOf(async () => unread.sha256)).toBe("NOT_FOUND");
    expect(await tempLeftovers(join(dir, "tmp"))).toEqual([]);
  });

  it("is checked at once when the input declares a digest", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
    const body = Buffer.from("digest me");
    const good = `sha256:${sha256(body)}`;
    const uri = `data:;base64,${body.toString("base64")}`;
    const file = await bridge.resolve({ uri, name: "d.txt", digest: good }, { scope: "s" });
    expect(file.sha256).toBe(sha256(body));
    await file.dispose();
    const bad = `sha256:${sha256("other")}`;
    expect(await codeOf(bridge.resolve({ uri, name: "d.txt", digest: bad }, { scope: "s" }))).toBe(
      "DIGEST_MISMATCH",
    );
    expect(await tempLeftovers(join(dir, "tmp"))).toEqual([]);
  });
});
