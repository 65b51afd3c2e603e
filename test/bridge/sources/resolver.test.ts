import { readFile } from "node:fs/promises";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { FileSourceResolver } from "../../../src/bridge/types.js";
import { codeOf, sha256 } from "../../support/helpers.js";
import { bridge, scope, tempEntries, useBridgeSandbox } from "../bridge-sandbox.js";

useBridgeSandbox();

describe("resolvers", () => {
  const bytes = Buffer.from("stored upload bytes");
  const uploads: FileSourceResolver = {
    name: "upload handle",
    matches: (input) => input.startsWith("upload://"),
    resolve: async (input, context) => {
      if (input !== "upload://sessions/session-1/abc" || context.scope !== "session-1") return null;
      return {
        name: "upload.txt",
        mimeType: "text/plain",
        size: bytes.length,
        sha256: sha256(bytes),
        open: async () => Readable.from([bytes]),
      };
    },
  };

  it("are tried first and their files are copied into a temp folder", async () => {
    const b = bridge({ resolvers: [uploads] });
    const file = await b.resolve("upload://sessions/session-1/abc", { scope });
    expect([file.name, file.mimeType, file.source.kind, file.source.detail]).toEqual([
      "upload.txt",
      "text/plain",
      "resolver",
      "upload handle",
    ]);
    expect((await readFile(file.path)).equals(bytes)).toBe(true);
    await file.dispose();
    expect(await tempEntries()).toEqual([]);
  });

  it("treat other scopes as missing (NOT_FOUND)", async () => {
    const b = bridge({ resolvers: [uploads] });
    expect(await codeOf(b.resolve("upload://sessions/session-1/abc", { scope: "other" }))).toBe("NOT_FOUND");
  });

  it("can claim a scheme the bridge would otherwise refuse, and be removed again", async () => {
    const b = bridge();
    expect(await codeOf(b.resolve("upload://sessions/session-1/abc", { scope }))).toBe("UNSUPPORTED_INPUT");
    const remove = b.addResolver(uploads);
    const file = await b.resolve("upload://sessions/session-1/abc", { scope });
    await file.dispose();
    remove();
    expect(await codeOf(b.resolve("upload://sessions/session-1/abc", { scope }))).toBe("UNSUPPORTED_INPUT");
  });

  it("verify the declared size and sha256 while copying", async () => {
    const lying: FileSourceResolver = {
      name: "liar",
      matches: (input) => input.startsWith("liar:"),
      resolve: async (input) => ({
        name: "x.bin",
        ...(input === "liar:size" ? { size: 3 } : { sha256: sha256("something else") }),
        open: async () => Readable.from([bytes]),
      }),
    };
    const b = bridge({ resolvers: [lying] });
    expect(await codeOf(b.resolve("liar:size", { scope }))).toBe("DIGEST_MISMATCH");
    expect(await codeOf(b.resolve("liar:hash", { scope }))).toBe("DIGEST_MISMATCH");
    expect(await tempEntries()).toEqual([]);
  });

  it("enforce the cap on declared and actual size", async () => {
    const big: FileSourceResolver = {
      name: "big",
      matches: (input) => input.startsWith("big:"),
      resolve: async (input) => ({
        name: "big.bin",
        ...(input === "big:declared" ? { size: 1000 } : {}),
        open: async () => Readable.from([Buffer.alloc(600), Buffer.alloc(600)]),
      }),
    };
    const b = bridge({ resolvers: [big], maxBytes: 1000 });
    expect(await codeOf(b.resolve("big:declared", { scope, maxBytes: 999 }))).toBe("FILE_TOO_LARGE");
    expect(await codeOf(b.resolve("big:actual", { scope }))).toBe("FILE_TOO_LARGE");
    expect(await tempEntries()).toEqual([]);
  });

  it("give FORM_DISABLED when the resolver form is off", async () => {
    const b = bridge({ resolvers: [uploads], forms: { resolver: false } });
    expect(await codeOf(b.resolve("upload://sessions/session-1/abc", { scope }))).toBe("FORM_DISABLED");
  });

  it("wrap a failing stream as STORAGE_ERROR and leave nothing", async () => {
    const broken: FileSourceResolver = {
      name: "broken",
      matches: (input) => input === "broken:",
      resolve: async () => ({
        name: "b.bin",
        open: async () =>
          Readable.from(
            (async function* () {
              yield Buffer.from("partial");
              throw new Error("disk fell off");
            })(),
          ),
      }),
    };
    expect(await codeOf(bridge({ resolvers: [broken] }).resolve("broken:", { scope }))).toBe("STORAGE_ERROR");
    expect(await tempEntries()).toEqual([]);
  });
});

describe("audit: resolver failures", () => {
  it("turns a resolver's own exception into STORAGE_ERROR (cause kept) and passes FileBridgeErrors", async () => {
    const boom = new Error("database down at /internal/path");
    const failing: FileSourceResolver = {
      name: "ticket",
      matches: (input) => input.startsWith("ticket:"),
      resolve: async (input) => {
        if (input === "ticket:forbidden") {
          const { FileBridgeError } = await import("../../../src/errors/file-bridge-error.js");
          throw new FileBridgeError("FORBIDDEN", "not yours");
        }
        throw boom;
      },
    };
    const b = bridge({ resolvers: [failing] });
    try {
      await b.resolve("ticket:1", { scope });
      expect.unreachable();
    } catch (error) {
      expect((error as { code?: string }).code).toBe("STORAGE_ERROR");
      expect((error as Error).cause).toBe(boom);
    }
    expect(await codeOf(b.resolve("ticket:forbidden", { scope }))).toBe("FORBIDDEN");
    const badMatcher = bridge({
      resolvers: [
        {
          name: "bad",
          matches: () => {
            throw new Error("regex blew up");
          },
          resolve: async () => null,
        },
      ],
    });
    expect(await codeOf(badMatcher.resolve("data:,x", { scope }))).toBe("STORAGE_ERROR");
    expect(await tempEntries()).toEqual([]);
  });
});
