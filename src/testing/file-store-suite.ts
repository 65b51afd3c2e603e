/**
 * The shared FileStore conformance suite. One job (every behaviour a FileStore driver must have), so
 * it stays one file past the usual ~600 lines.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { isId } from "../internal/ids.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import { type MakeQuotaFileStore, runFileStoreQuotaSuite } from "./file-store-quota-suite.js";
import {
  codeOf,
  type MakeFileStore,
  makeClock,
  readAll,
  SUITE_START as START,
  type TestClock,
} from "./support.js";

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const text = (value: string) => new TextEncoder().encode(value);

async function listAll(store: FileStore, scope: string, limit?: number): Promise<StoredFile[]> {
  const all: StoredFile[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const result = await store.list(scope, { cursor, limit });
    all.push(...result.files);
    if (!result.nextCursor) return all;
    cursor = result.nextCursor;
  }
  throw new Error("list never ended");
}

/** An endless source of 64 KiB chunks: only a cap enforced while streaming can stop it. */
async function* endless(): AsyncGenerator<Uint8Array> {
  const chunk = new Uint8Array(64 * 1024).fill(7);
  for (;;) yield chunk;
}

/**
 * Optional parts of the conformance suite, for drivers that have the capability.
 *
 * @example
 * ```ts
 * const options: FileStoreSuiteOptions = { quota: (now, quota) => myStore({ now, quota }) };
 * runFileStoreSuite("myStore", (now) => myStore({ now }), options);
 * ```
 */
export interface FileStoreSuiteOptions {
  /** For drivers that enforce per-scope quotas: makes a store with the given quota. */
  quota?: MakeQuotaFileStore;
}

/**
 * The shared {@link FileStore} conformance suite. Every driver runs it in a Vitest test file; a
 * driver that enforces per-scope quotas passes `{ quota }` to run the quota cases too.
 *
 * @example
 * ```ts
 * import { runFileStoreSuite } from "mcp-file-bridge/testing";
 * runFileStoreSuite("myStore", (now) => myStore({ now }), { quota: (now, quota) => myStore({ now, quota }) });
 * ```
 */
export function runFileStoreSuite(
  label: string,
  makeStore: MakeFileStore,
  options: FileStoreSuiteOptions = {},
): void {
  if (options.quota) runFileStoreQuotaSuite(label, options.quota);
  describe(`FileStore conformance: ${label}`, () => {
    let store: FileStore;
    let clock: TestClock;
    let scratch: string;
    const scope = "scope-a";

    beforeEach(async () => {
      clock = makeClock();
      store = await makeStore(clock.now);
      scratch = await mkdtemp(join(tmpdir(), "mfb-suite-"));
    });

    afterEach(async () => {
      await store.close?.();
      await rm(scratch, { recursive: true, force: true });
    });

    describe("put", () => {
      it("stores bytes and returns complete metadata", async () => {
        const bytes = randomBytes(100_000);
        const file = await store.put(bytes, { scope, name: "report.pdf", metadata: { tool: "convert" } });
        expect(isId(file.id)).toBe(true);
        expect(file).toMatchObject({
          scope,
          name: "report.pdf",
          mimeType: "application/pdf",
          size: bytes.length,
          sha256: sha256(bytes),
          createdAt: START,
          kind: "file",
          metadata: { tool: "convert" },
        });
        expect(file.expiresAt).toBeUndefined();
        expect(await store.head(scope, file.id)).toEqual(file);
        expect((await readAll(await store.read(scope, file.id))).equals(bytes)).toBe(true);
      });

      it("accepts every source form", async () => {
        const bytes = randomBytes(200_000);
        const path = join(scratch, "source.bin");
        await writeFile(path, bytes);
        const chunksOf = (b: Buffer) => [
          b.subarray(0, 70_000),
          b.subarray(70_000, 150_000),
          b.subarray(150_000),
        ];
        const sources = [
          bytes,
          new Uint8Array(bytes),
          Readable.from(chunksOf(bytes)),
          (async function* () {
            yield* chunksOf(bytes);
          })(),
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (const chunk of chunksOf(bytes)) controller.enqueue(new Uint8Array(chunk));
              controller.close();
            },
          }),
          { path },
        ];
        for (const source of sources) {
          const file = await store.put(source, { scope, name: "x.bin" });
          expect(file.size).toBe(bytes.length);
          expect(file.sha256).toBe(sha256(bytes));
          expect((await readAll(await store.read(scope, file.id))).equals(bytes)).toBe(true);
        }
      });

      it("copies the bytes: changing the caller's buffer afterwards does not change stored data", async () => {
        const buffer = Buffer.alloc(1000, 1);
        const file = await store.put(buffer, { scope, name: "reuse.bin" });
        buffer.fill(9);
        expect((await readAll(await store.read(scope, file.id))).equals(Buffer.alloc(1000, 1))).toBe(true);
      });

      it("hands out copies on read: changing a read chunk does not change stored data", async () => {
        const bytes = randomBytes(200_000);
        const file = await store.put(bytes, { scope, name: "mutable.bin" });
        for await (const chunk of (await store.read(scope, file.id)) as Readable) (chunk as Buffer).fill(0);
        for await (const chunk of (await store.read(scope, file.id, {
          start: 10,
          end: 99_999,
        })) as Readable) {
          (chunk as Buffer).fill(0);
        }
        expect((await readAll(await store.read(scope, file.id))).equals(bytes)).toBe(true);
      });

      it("stores empty files", async () => {
        const file = await store.put(new Uint8Array(0), { scope, name: "empty.txt" });
        expect(file.size).toBe(0);
        expect(file.sha256).toBe(sha256(new Uint8Array(0)));
        expect((await readAll(await store.read(scope, file.id))).length).toBe(0);
      });

      it("sanitizes names, keeps nested relative paths, never climbs out", async () => {
        const nested = await store.put(text("a"), { scope, name: "docs/a b.txt" });
        expect(nested.name).toBe("docs/a b.txt");
        const climbing = await store.put(text("b"), { scope, name: "../../etc/passwd" });
        expect(climbing.name).toBe("etc/passwd");
        const control = await store.put(text("c"), { scope, name: "bad\u0000na\u202eme.txt" });
        expect(control.name).toBe("badname.txt");
        const empty = await store.put(text("d"), { scope, name: "" });
        expect(empty.name).toBe("file");
      });

      it("chooses the media type: declared, else from the name, else sniffed, else octet-stream", async () => {
        const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
        expect((await store.put(text("x"), { scope, name: "a.bin", mimeType: "Text/Plain" })).mimeType).toBe(
          "text/plain",
        );
        expect((await store.put(text("x"), { scope, name: "a.json" })).mimeType).toBe("application/json");
        expect((await store.put(png, { scope, name: "noext" })).mimeType).toBe("image/png");
        expect((await store.put(text("x"), { scope, name: "noext" })).mimeType).toBe(
          "application/octet-stream",
        );
        expect((await store.put(text("x"), { scope, name: "a.txt", mimeType: "not a type" })).mimeType).toBe(
          "text/plain",
        );
      });

      it("records kind and ttl", async () => {
        const file = await store.put(text("x"), { scope, name: "a.txt", kind: "artifact", ttl: "5m" });
        expect(file.kind).toBe("artifact");
        expect(file.expiresAt).toBe(START + 5 * 60_000);
        const seconds = await store.put(text("x"), { scope, name: "a.txt", ttl: 30 });
        expect(seconds.expiresAt).toBe(START + 30_000);
      });

      it("gives every file its own id", async () => {
        const files = await Promise.all(
          Array.from({ length: 50 }, (_, i) => store.put(text(String(i)), { scope, name: "same.txt" })),
        );
        expect(new Set(files.map((f) => f.id)).size).toBe(50);
      });
    });

    describe("put failures store nothing", () => {
      async function expectNothingStored() {
        expect((await store.list(scope)).files).toEqual([]);
      }

      it("maxBytes: exactly the cap is fine, one byte over is FILE_TOO_LARGE with data.limit", async () => {
        const ok = await store.put(Buffer.alloc(1024), { scope, name: "ok.bin", maxBytes: 1024 });
        expect(ok.size).toBe(1024);
        await store.delete(scope, ok.id);
        try {
          await store.put(Buffer.alloc(1025), { scope, name: "big.bin", maxBytes: 1024 });
          expect.unreachable();
        } catch (error) {
          expect((error as FileBridgeError).code).toBe("FILE_TOO_LARGE");
          expect((error as FileBridgeError).data).toMatchObject({ limit: 1024 });
        }
        await expectNothingStored();
      });

      it("maxBytes is enforced while streaming: an endless source is cut off", async () => {
        expect(await codeOf(store.put(endless(), { scope, name: "endless", maxBytes: 1024 * 1024 }))).toBe(
          "FILE_TOO_LARGE",
        );
        await expectNothingStored();
      });

      it("declared size above the cap fails before reading", async () => {
        let pulled = false;
        const source = (async function* () {
          pulled = true;
          yield text("x");
        })();
        expect(await codeOf(store.put(source, { scope, name: "a", maxBytes: 10, expectedSize: 11 }))).toBe(
          "FILE_TOO_LARGE",
        );
        expect(pulled).toBe(false);
        await expectNothingStored();
      });

      it("digest and size mismatches are DIGEST_MISMATCH", async () => {
        const bytes = text("hello world");
        const good = await store.put(bytes, {
          scope,
          name: "a",
          expectedSha256: sha256(bytes),
          expectedSize: 11,
        });
        expect(good.sha256).toBe(sha256(bytes));
        await store.delete(scope, good.id);
        expect(
          await codeOf(store.put(bytes, { scope, name: "a", expectedSha256: sha256(text("other")) })),
        ).toBe("DIGEST_MISMATCH");
        expect(await codeOf(store.put(bytes, { scope, name: "a", expectedSize: 10 }))).toBe(
          "DIGEST_MISMATCH",
        );
        expect(await codeOf(store.put(bytes, { scope, name: "a", expectedSize: 12 }))).toBe(
          "DIGEST_MISMATCH",
        );
        await expectNothingStored();
      });

      it("an already aborted signal is ABORTED", async () => {
        const controller = new AbortController();
        controller.abort();
        expect(await codeOf(store.put(text("x"), { scope, name: "a", signal: controller.signal }))).toBe(
          "ABORTED",
        );
        await expectNothingStored();
      });

      it("aborting mid-stream is ABORTED", async () => {
        const controller = new AbortController();
        const source = (async function* () {
          yield Buffer.alloc(64 * 1024, 1);
          yield Buffer.alloc(64 * 1024, 2);
          controller.abort();
          await new Promise(() => {}); // hangs: only the abort can end the put
        })();
        expect(await codeOf(store.put(source, { scope, name: "a", signal: controller.signal }))).toBe(
          "ABORTED",
        );
        await expectNothingStored();
      });

      it("a failing source is STORAGE_ERROR with the cause; a FileBridgeError passes through", async () => {
        const boom = new Error("disk on fire");
        const failing = (async function* () {
          yield text("partial");
          throw boom;
        })();
        try {
          await store.put(failing, { scope, name: "a" });
          expect.unreachable();
        } catch (error) {
          expect((error as FileBridgeError).code).toBe("STORAGE_ERROR");
          expect((error as FileBridgeError).cause).toBe(boom);
        }
        const typed = (async function* () {
          yield text("partial");
          throw new FileBridgeError("FETCH_FAILED", "upstream went away");
        })();
        expect(await codeOf(store.put(typed, { scope, name: "a" }))).toBe("FETCH_FAILED");
        expect(await codeOf(store.put({ path: join(scratch, "missing") }, { scope, name: "a" }))).toBe(
          "STORAGE_ERROR",
        );
        await expectNothingStored();
      });

      it("non-byte chunks and unusable sources are INVALID_INPUT", async () => {
        const objects = Readable.from([{ not: "bytes" }]);
        expect(await codeOf(store.put(objects, { scope, name: "a" }))).toBe("INVALID_INPUT");
        expect(await codeOf(store.put(42 as never, { scope, name: "a" }))).toBe("INVALID_INPUT");
        expect(await codeOf(store.put({ path: "" }, { scope, name: "a" }))).toBe("INVALID_INPUT");
        await expectNothingStored();
      });

      it("bad scopes are INVALID_INPUT, bad options INVALID_OPTION, bad declarations INVALID_INPUT", async () => {
        const bytes = text("x");
        expect(await codeOf(store.put(bytes, { scope: "", name: "a" }))).toBe("INVALID_INPUT");
        expect(await codeOf(store.put(bytes, { scope: "a\nb", name: "a" }))).toBe("INVALID_INPUT");
        expect(await codeOf(store.put(bytes, { scope: "x".repeat(257), name: "a" }))).toBe("INVALID_INPUT");
        // Lone surrogates: as UTF-8 each would be U+FFFD, the scope of another caller.
        expect(await codeOf(store.put(bytes, { scope: "user-\uD800", name: "a" }))).toBe("INVALID_INPUT");
        expect(await codeOf(store.put(bytes, { scope: "\uDC00user", name: "a" }))).toBe("INVALID_INPUT");
        expect(await codeOf(store.put(bytes, { scope, name: "a", maxBytes: -1 }))).toBe("INVALID_OPTION");
        expect(await codeOf(store.put(bytes, { scope, name: "a", maxBytes: 1.5 }))).toBe("INVALID_OPTION");
        expect(await codeOf(store.put(bytes, { scope, name: "a", ttl: "soon" as never }))).toBe(
          "INVALID_OPTION",
        );
        expect(await codeOf(store.put(bytes, { scope, name: "a", kind: "other" as never }))).toBe(
          "INVALID_OPTION",
        );
        expect(await codeOf(store.put(bytes, { scope, name: "a", metadata: { n: 1 } as never }))).toBe(
          "INVALID_OPTION",
        );
        expect(await codeOf(store.put(bytes, { scope, name: "a", expectedSha256: "ABC" }))).toBe(
          "INVALID_INPUT",
        );
        expect(await codeOf(store.put(bytes, { scope, name: "a", expectedSize: -2 }))).toBe("INVALID_INPUT");
        await expectNothingStored();
      });

      it("a failed put leaves earlier files untouched", async () => {
        const kept = await store.put(text("keep me"), { scope, name: "kept.txt" });
        await codeOf(store.put(Buffer.alloc(100), { scope, name: "kept.txt", maxBytes: 10 }));
        expect((await store.list(scope)).files.map((f) => f.id)).toEqual([kept.id]);
        expect((await readAll(await store.read(scope, kept.id))).toString()).toBe("keep me");
      });
    });

    describe("stage", () => {
      it("is invisible until commit, then visible", async () => {
        const staged = await store.stage(text("batch"), { scope, name: "a.txt" });
        expect(staged.file.size).toBe(5);
        expect(await store.head(scope, staged.file.id)).toBeNull();
        expect(await store.read(scope, staged.file.id)).toBeNull();
        expect((await store.list(scope)).files).toEqual([]);
        const committed = await staged.commit();
        expect(committed).toEqual(staged.file);
        expect(await store.head(scope, staged.file.id)).toEqual(staged.file);
        expect((await readAll(await store.read(scope, staged.file.id))).toString()).toBe("batch");
        expect(await staged.commit()).toEqual(staged.file); // idempotent
        await staged.abort(); // after a commit: no-op
        expect(await store.head(scope, staged.file.id)).toEqual(staged.file);
      });

      it("abort throws the bytes away, is idempotent, and commit after abort is ABORTED", async () => {
        const staged = await store.stage(text("gone"), { scope, name: "a.txt" });
        await staged.abort();
        await staged.abort();
        expect(await codeOf(staged.commit())).toBe("ABORTED");
        expect(await store.head(scope, staged.file.id)).toBeNull();
        expect((await store.list(scope)).files).toEqual([]);
      });

      it("fails like put, storing nothing", async () => {
        expect(await codeOf(store.stage(Buffer.alloc(100), { scope, name: "a", maxBytes: 10 }))).toBe(
          "FILE_TOO_LARGE",
        );
        expect((await store.list(scope)).files).toEqual([]);
      });

      it("all-or-nothing batches: commit all or abort all", async () => {
        const staged = await Promise.all(
          ["a", "b", "c"].map((name) => store.stage(text(name), { scope, name: `${name}.txt` })),
        );
        await Promise.all(staged.map((s) => s.abort()));
        expect((await store.list(scope)).files).toEqual([]);
        const again = await Promise.all(
          ["a", "b", "c"].map((name) => store.stage(text(name), { scope, name: `${name}.txt` })),
        );
        await Promise.all(again.map((s) => s.commit()));
        expect((await store.list(scope)).files.map((f) => f.name).sort()).toEqual([
          "a.txt",
          "b.txt",
          "c.txt",
        ]);
      });
    });

    describe("head / read / delete: missing means null", () => {
      it("unknown, malformed, other-scope ids are null / false", async () => {
        const file = await store.put(text("secret"), { scope, name: "a.txt" });
        const unknown = "0".repeat(26);
        for (const id of [unknown, "../../etc/passwd", file.id.toUpperCase(), "", `${file.id}.json`, "x"]) {
          expect(await store.head(scope, id)).toBeNull();
          expect(await store.read(scope, id)).toBeNull();
          expect(await store.delete(scope, id)).toBe(false);
        }
        for (const other of ["scope-b", "", scope.toUpperCase()]) {
          expect(await store.head(other, file.id)).toBeNull();
          expect(await store.read(other, file.id)).toBeNull();
          expect(await store.delete(other, file.id)).toBe(false);
          expect(await store.localPath?.(other, file.id)).toBeFalsy();
        }
        expect(await store.head(scope, file.id)).not.toBeNull();
      });

      it("delete removes once", async () => {
        const file = await store.put(text("x"), { scope, name: "a.txt" });
        expect(await store.delete(scope, file.id)).toBe(true);
        expect(await store.delete(scope, file.id)).toBe(false);
        expect(await store.head(scope, file.id)).toBeNull();
        expect(await store.read(scope, file.id)).toBeNull();
        expect((await store.list(scope)).files).toEqual([]);
      });

      it("a stream opened before delete still reads the whole file", async () => {
        const bytes = randomBytes(300_000);
        const file = await store.put(bytes, { scope, name: "a.bin" });
        const stream = await store.read(scope, file.id);
        expect(await store.delete(scope, file.id)).toBe(true);
        expect((await readAll(stream)).equals(bytes)).toBe(true);
      });
    });

    describe("expiry", () => {
      it("expired files are missing at once, and sweep removes them", async () => {
        const short = await store.put(text("short"), { scope, name: "s.txt", ttl: 60 });
        clock.advance(1);
        const long = await store.put(text("long"), { scope, name: "l.txt", ttl: "1h" });
        clock.advance(1);
        const forever = await store.put(text("forever"), { scope, name: "f.txt" });
        clock.advance(59_997);
        expect(await store.head(scope, short.id)).not.toBeNull();
        clock.advance(1);
        expect(await store.head(scope, short.id)).toBeNull();
        expect(await store.read(scope, short.id)).toBeNull();
        expect(await store.delete(scope, short.id)).toBe(false);
        expect(await store.localPath?.(scope, short.id)).toBeFalsy();
        expect((await store.list(scope)).files.map((f) => f.id)).toEqual([long.id, forever.id]);
        clock.advance(3_600_000);
        expect(await store.sweep()).toBe(2);
        expect(await store.sweep()).toBe(0);
        expect((await store.list(scope)).files.map((f) => f.id)).toEqual([forever.id]);
      });
    });

    describe("read ranges", () => {
      it("reads inclusive ranges and clamps the end", async () => {
        const bytes = Buffer.from("0123456789");
        const file = await store.put(bytes, { scope, name: "digits.txt" });
        const range = async (start: number, end?: number) =>
          (
            await readAll(await store.read(scope, file.id, end === undefined ? { start } : { start, end }))
          ).toString();
        expect(await range(0, 0)).toBe("0");
        expect(await range(2, 5)).toBe("2345");
        expect(await range(7)).toBe("789");
        expect(await range(9, 9)).toBe("9");
        expect(await range(5, 100)).toBe("56789");
      });

      it("refuses ranges outside the file with RANGE_NOT_SATISFIABLE", async () => {
        const file = await store.put(Buffer.from("0123456789"), { scope, name: "digits.txt" });
        const empty = await store.put(new Uint8Array(0), { scope, name: "empty" });
        for (const range of [
          { start: 10 },
          { start: 11, end: 20 },
          { start: 5, end: 4 },
          { start: -1 },
          { start: 1.5 },
        ]) {
          expect(await codeOf(store.read(scope, file.id, range))).toBe("RANGE_NOT_SATISFIABLE");
        }
        expect(await codeOf(store.read(scope, empty.id, { start: 0 }))).toBe("RANGE_NOT_SATISFIABLE");
        // Missing files are null even with a bad range: no existence leak.
        expect(await store.read("scope-b", file.id, { start: 100 })).toBeNull();
      });

      it("any range of any content equals the slice (property)", async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.uint8Array({ minLength: 1, maxLength: 200_000 }),
            fc.nat(),
            fc.nat(),
            async (bytes, a, b) => {
              const file = await store.put(bytes, { scope: "prop", name: "p.bin" });
              const start = a % bytes.length;
              const end = start + (b % (bytes.length - start + 10));
              const got = await readAll(await store.read("prop", file.id, { start, end }));
              await store.delete("prop", file.id);
              return got.equals(Buffer.from(bytes).subarray(start, end + 1));
            },
          ),
          { numRuns: 40 },
        );
      });
    });

    describe("list", () => {
      it("orders by id, pages with an opaque cursor, each file once", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 25; i++) {
          ids.push((await store.put(text(String(i)), { scope, name: `${i}.txt` })).id);
          clock.advance(1);
        }
        expect((await store.list(scope)).files.map((f) => f.id)).toEqual(ids);
        for (const limit of [1, 2, 7, 25, 26, 1000]) {
          expect((await listAll(store, scope, limit)).map((f) => f.id)).toEqual(ids);
        }
        const first = await store.list(scope, { limit: 25 });
        expect(first.nextCursor).toBeUndefined();
        const paged = await store.list(scope, { limit: 10 });
        expect(paged.files).toHaveLength(10);
        expect(typeof paged.nextCursor).toBe("string");
        expect((await store.list("scope-b", { cursor: paged.nextCursor })).files).toEqual([]);
      });

      it("defaults to 100 per page, clamps limits above 1000", async () => {
        await Promise.all(
          Array.from({ length: 101 }, (_, i) => store.put(text(String(i)), { scope, name: "x" })),
        );
        const page = await store.list(scope);
        expect(page.files).toHaveLength(100);
        expect(page.nextCursor).toBeDefined();
        expect((await store.list(scope, { limit: 5000 })).files).toHaveLength(101);
        expect(await codeOf(store.list(scope, { limit: 0 }))).toBe("INVALID_INPUT");
        expect(await codeOf(store.list(scope, { limit: 2.5 }))).toBe("INVALID_INPUT");
      });

      it("filters by kind", async () => {
        const kinds = ["upload", "artifact", "file", "artifact", "upload", "artifact"] as const;
        const files: StoredFile[] = [];
        for (const kind of kinds) {
          files.push(await store.put(text(kind), { scope, name: "k", kind }));
          clock.advance(1);
        }
        const artifacts = files.filter((f) => f.kind === "artifact").map((f) => f.id);
        const listed: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.list(scope, { kind: "artifact", limit: 1, cursor });
          listed.push(...page.files.map((f) => f.id));
          cursor = page.nextCursor;
        } while (cursor);
        expect(listed).toEqual(artifacts);
        expect(await codeOf(store.list(scope, { kind: "bogus" as never }))).toBe("INVALID_INPUT");
      });

      it("rejects invalid cursors with INVALID_CURSOR", async () => {
        await store.put(text("x"), { scope, name: "a" });
        for (const cursor of ["", "!!!", "bm90LWEtY3Vyc29y", "a".repeat(500), "djE6Li4vLi4vZXRj"]) {
          expect(await codeOf(store.list(scope, { cursor }))).toBe("INVALID_CURSOR");
        }
      });

      it("every file exactly once when files are added and deleted between pages", async () => {
        const initial: string[] = [];
        for (let i = 0; i < 30; i++) {
          initial.push((await store.put(text(String(i)), { scope, name: "x" })).id);
          clock.advance(1);
        }
        const deleted = new Set<string>();
        const seen: string[] = [];
        let cursor: string | undefined;
        let round = 0;
        do {
          const page = await store.list(scope, { limit: 4, cursor });
          seen.push(...page.files.map((f) => f.id));
          cursor = page.nextCursor;
          // Between pages: delete a file not yet seen, and one already seen; add a new one.
          const unseen = initial.filter((id) => !seen.includes(id) && !deleted.has(id));
          const victim = unseen[unseen.length - 1];
          if (victim && round % 2 === 0) {
            await store.delete(scope, victim);
            deleted.add(victim);
          }
          if (seen[0]) await store.delete(scope, seen[0]);
          clock.advance(1);
          await store.put(text("new"), { scope, name: "new" });
          round++;
        } while (cursor);
        expect(new Set(seen).size).toBe(seen.length);
        const survivors = initial.filter((id) => !deleted.has(id));
        for (const id of survivors) expect(seen).toContain(id);
        for (const id of deleted) expect(seen).not.toContain(id);
      });
    });

    describe("concurrency", () => {
      it("200 parallel puts, deletes and lists in one scope stay consistent", async () => {
        const contents = Array.from({ length: 200 }, (_, i) => randomBytes(1000 + i));
        const listings: Promise<unknown>[] = [];
        const results = await Promise.all(
          contents.map(async (bytes, i) => {
            const file = await store.put(bytes, { scope, name: `f${i}.bin` });
            expect((await store.head(scope, file.id))?.sha256).toBe(file.sha256);
            if (i % 10 === 0) {
              // Lists racing with the puts and deletes: every listed file is complete and unique.
              listings.push(
                listAll(store, scope, 50).then((files) => {
                  expect(new Set(files.map((f) => f.id)).size).toBe(files.length);
                  for (const listed of files)
                    expect(listed.size).toBe(1000 + Number(listed.name.slice(1, -4)));
                }),
              );
            }
            if (i % 2 === 0) expect(await store.delete(scope, file.id)).toBe(true);
            return file;
          }),
        );
        await Promise.all(listings);
        const remaining = await listAll(store, scope, 37);
        const expected = results.filter((_, i) => i % 2 === 1).map((f) => f.id);
        expect(remaining.map((f) => f.id)).toEqual([...expected].sort());
        for (const file of remaining) {
          const i = Number(file.name.slice(1, -4));
          expect((await readAll(await store.read(scope, file.id))).equals(contents[i] as Buffer)).toBe(true);
        }
      });

      it("concurrent deletes of one file: exactly one wins", async () => {
        const file = await store.put(text("x"), { scope, name: "a" });
        const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.delete(scope, file.id)));
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      });
    });

    describe("scopes are isolated", () => {
      it("lists, reads and deletes only the caller's scope", async () => {
        const a = await store.put(text("a"), { scope: "scope-a", name: "same.txt" });
        const b = await store.put(text("b"), { scope: "scope-b", name: "same.txt" });
        expect((await store.list("scope-a")).files.map((f) => f.id)).toEqual([a.id]);
        expect((await store.list("scope-b")).files.map((f) => f.id)).toEqual([b.id]);
        expect(await store.delete("scope-a", b.id)).toBe(false);
        expect((await readAll(await store.read("scope-b", b.id))).toString()).toBe("b");
      });
    });

    it("returned metadata cannot be used to change stored metadata", async () => {
      const file = await store.put(text("x"), { scope, name: "a.txt", metadata: { k: "v" } });
      try {
        (file as { name: string }).name = "hacked";
        (file.metadata as Record<string, string>).k = "hacked";
      } catch {
        // frozen: fine
      }
      const again = await store.head(scope, file.id);
      expect(again?.name).toBe("a.txt");
      expect(again?.metadata).toEqual({ k: "v" });
    });
  });
}
