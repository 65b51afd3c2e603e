import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { storedFileSource } from "../../src/bridge/stored-file-source.js";
import type { FileStore, StoredFile } from "../../src/storage/types.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

let base: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "fb-stored-"));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

const bytes = Buffer.from("bytes kept by a store");
const file: StoredFile = {
  id: "01hzzzzzzzzzzzzzzzzzzzzzzz",
  scope: "s1",
  name: "notes/readme.md",
  mimeType: "text/markdown",
  size: bytes.length,
  sha256: createHash("sha256").update(bytes).digest("hex"),
  createdAt: 0,
  kind: "upload",
};

/** A read-only store over one file, with or without a local path, counting which method was used. */
function oneFileStore(options: { localPath?: string; gone?: boolean }): FileStore & { used: string[] } {
  const used: string[] = [];
  const unsupported = async (): Promise<never> => {
    throw new Error("not used by this test");
  };
  return {
    driver: "test",
    used,
    put: unsupported,
    stage: unsupported,
    list: unsupported,
    delete: unsupported,
    sweep: unsupported,
    head: async () => (options.gone ? null : file),
    read: async () => {
      used.push("read");
      return options.gone ? null : Readable.from([bytes]);
    },
    ...(options.localPath !== undefined
      ? {
          localPath: async () => {
            used.push("localPath");
            return options.gone ? null : (options.localPath as string);
          },
        }
      : {}),
  };
}

function bridgeFor(store: FileStore): FileBridge {
  return new FileBridge({
    tmpDir: join(base, "tmp"),
    resolvers: [
      {
        name: "stored file",
        matches: (input) => input.startsWith("stored://"),
        resolve: async (_input, { scope }) =>
          (await store.head(scope, file.id)) ? storedFileSource(store, file) : null,
      },
    ],
  });
}

describe("storedFileSource", () => {
  it("carries the metadata and streams from store.read when there is no local path", async () => {
    const store = oneFileStore({});
    const source = storedFileSource(store, file);
    expect([source.name, source.mimeType, source.size, source.sha256]).toEqual([
      file.name,
      file.mimeType,
      file.size,
      file.sha256,
    ]);
    const resolved = await bridgeFor(store).resolve("stored://x", { scope: "s1" });
    expect([resolved.name, resolved.mimeType]).toEqual(["readme.md", "text/markdown"]);
    expect((await resolved.bytes()).equals(bytes)).toBe(true);
    expect(store.used).toEqual(["read"]);
    await resolved.dispose();
    expect(await tempLeftovers(join(base, "tmp"))).toEqual([]);
  });

  it("reads from store.localPath when the driver has one", async () => {
    const local = join(base, "blob");
    await writeFile(local, bytes);
    const store = oneFileStore({ localPath: local });
    const resolved = await bridgeFor(store).resolve("stored://x", { scope: "s1" });
    expect((await resolved.bytes()).equals(bytes)).toBe(true);
    expect(resolved.path).not.toBe(local);
    expect(store.used).toEqual(["localPath"]);
    await resolved.dispose();
  });

  it("fails with NOT_FOUND when the bytes are gone", async () => {
    for (const store of [oneFileStore({ gone: true, localPath: "/nope" }), oneFileStore({ gone: true })]) {
      await expect(storedFileSource(store, file).open()).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
    await expect(
      storedFileSource(oneFileStore({ localPath: join(base, "missing") }), file).open(),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
