import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type MaterializeContext,
  type MaterializeSpec,
  materialize,
  materializeStoredFile,
  materializeStream,
} from "../../src/bridge/materialize.js";
import { ACTIVE_CALL_DIRS } from "../../src/internal/temp-dir.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore } from "../../src/storage/types.js";
import { codeOf, sha256 } from "../support/helpers.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

let base: string;
let tmp: string;

function context(overrides: Partial<MaterializeContext> = {}): MaterializeContext {
  return {
    tmpDir: tmp,
    maxBytes: 1024,
    signal: undefined,
    allowEmpty: false,
    fallbackName: undefined,
    ...overrides,
  };
}

const spec: MaterializeSpec = { kind: "resolver", detail: "test", name: undefined, mimeType: undefined };

async function tempEntries(): Promise<string[]> {
  return tempLeftovers(tmp);
}

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-materialize-")));
  tmp = join(base, "tmp");
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

describe("materialize", () => {
  it("writes the bytes into a private file in the process's call root and unlinks it on dispose", async () => {
    const bytes = randomBytes(3000);
    const file = await materialize(
      context({ maxBytes: 4096 }),
      { ...spec, name: "a.bin" },
      async (writer) => {
        await writer.write(bytes.subarray(0, 1000));
        await writer.write(bytes.subarray(1000));
      },
    );
    expect(file).toMatchObject({ name: "a.bin", size: 3000, sha256: sha256(bytes) });
    expect(file.source).toEqual({ kind: "resolver", detail: "test" });
    expect((await readFile(file.path)).equals(bytes)).toBe(true);
    expect(dirname(dirname(file.path))).toBe(tmp);
    expect(basename(file.path)).toBe("a.bin");
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(file.path))).mode & 0o777).toBe(0o700);
    // The root stays in use (no sweep of this process takes it); the file itself is gone.
    expect(ACTIVE_CALL_DIRS.has(dirname(file.path))).toBe(true);
    await file.dispose();
    expect(await tempEntries()).toEqual([]);
    await expect(stat(file.path)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("names an unnamed file from its sniffed type, and the caller's name wins over the input's", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    const sniffed = await materialize(context(), spec, (writer) => writer.write(png));
    expect(sniffed).toMatchObject({ name: "file.png", mimeType: "image/png" });
    const overridden = await materialize(
      context({ nameOverride: "chosen.txt", mimeOverride: "text/plain" }),
      { ...spec, name: "carried.bin" },
      (writer) => writer.write(Buffer.from("hi")),
    );
    expect(overridden).toMatchObject({ name: "chosen.txt", mimeType: "text/plain" });
    await Promise.all([sniffed.dispose(), overridden.dispose()]);
  });

  it("refuses, and leaves nothing behind, when the bytes are too many, empty or not as declared", async () => {
    expect(
      await codeOf(materialize(context({ maxBytes: 10 }), spec, (writer) => writer.write(randomBytes(11)))),
    ).toBe("FILE_TOO_LARGE");
    expect(await codeOf(materialize(context(), spec, async () => {}))).toBe("EMPTY_FILE");
    const bytes = Buffer.from("declared");
    expect(
      await codeOf(
        materialize(context(), { ...spec, expectedSize: bytes.length + 1 }, (writer) => writer.write(bytes)),
      ),
    ).toBe("DIGEST_MISMATCH");
    expect(
      await codeOf(
        materialize(context(), { ...spec, expectedSha256: sha256("other") }, (writer) => writer.write(bytes)),
      ),
    ).toBe("DIGEST_MISMATCH");
    expect(
      await codeOf(
        materialize(context(), spec, async () => {
          throw new Error("producer broke");
        }),
      ),
    ).toBe("STORAGE_ERROR");
    expect(await tempEntries()).toEqual([]);
  });

  it("accepts an empty file when allowed", async () => {
    const file = await materialize(
      context({ allowEmpty: true }),
      { ...spec, name: "empty.txt" },
      async () => {},
    );
    expect(file.size).toBe(0);
    expect(await readFile(file.path)).toHaveLength(0);
    await file.dispose();
  });

  it("fails with ABORTED and removes the folder when the signal fires mid-write", async () => {
    const controller = new AbortController();
    const run = materialize(context({ signal: controller.signal }), spec, async (writer) => {
      await writer.write(Buffer.from("first"));
      controller.abort();
      await writer.write(Buffer.from("second"));
    });
    expect(await codeOf(run)).toBe("ABORTED");
    expect(await tempEntries()).toEqual([]);
  });
});

describe("materializeStream", () => {
  it("copies a stream and destroys it afterwards, also when the copy fails", async () => {
    const ok = Readable.from([Buffer.from("one "), Buffer.from("two")]);
    const file = await materializeStream(context(), { ...spec, name: "s.txt" }, () => ok);
    expect((await file.bytes()).toString()).toBe("one two");
    expect(ok.destroyed).toBe(true);
    await file.dispose();
    const big = Readable.from([randomBytes(600), randomBytes(600)]);
    expect(await codeOf(materializeStream(context(), spec, async () => big))).toBe("FILE_TOO_LARGE");
    expect(big.destroyed).toBe(true);
    expect(await tempEntries()).toEqual([]);
  });
});

describe("materializeStoredFile", () => {
  let store: FileStore;
  beforeEach(() => {
    store = memoryStore();
  });
  afterEach(async () => {
    await store.close?.();
  });

  it("copies a stored file under its stored name and type, verified against its metadata", async () => {
    const bytes = randomBytes(500);
    const stored = await store.put(bytes, { scope: "s1", name: "report.pdf", mimeType: "application/pdf" });
    const file = await materializeStoredFile(context(), store, stored, {
      kind: "resolver",
      detail: "upload handle",
    });
    expect(file).toMatchObject({
      name: "report.pdf",
      mimeType: "application/pdf",
      size: 500,
      sha256: stored.sha256,
      source: { kind: "resolver", detail: "upload handle" },
    });
    expect((await readFile(file.path)).equals(bytes)).toBe(true);
    await file.dispose();
    expect(await tempEntries()).toEqual([]);
  });

  it("fails with DIGEST_MISMATCH when the bytes differ from the metadata, and with NOT_FOUND when gone", async () => {
    const stored = await store.put(Buffer.from("real bytes"), { scope: "s1", name: "a.txt" });
    const source = { kind: "resolver", detail: "upload handle" } as const;
    const lying = { ...stored, sha256: sha256("other bytes") };
    expect(await codeOf(materializeStoredFile(context(), store, lying, source))).toBe("DIGEST_MISMATCH");
    await store.delete(stored.scope, stored.id);
    expect(await codeOf(materializeStoredFile(context(), store, stored, source))).toBe("NOT_FOUND");
    expect(await tempEntries()).toEqual([]);
  });
});
