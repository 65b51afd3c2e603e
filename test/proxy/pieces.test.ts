import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitCommandLine } from "../../src/cli/command-line.js";
import { confinedFolders, openConfined } from "../../src/proxy/confined-file.js";
import { localPathOf, saveDownload } from "../../src/proxy/local-files.js";
import { jsonPointer, locateOutputs } from "../../src/proxy/locators.js";
import { markedFileArgs, replaceSchemaAt, schemaAt } from "../../src/proxy/schema-paths.js";
import { codeOf } from "../support/helpers.js";
import { removeDirs, tempDir } from "./support.js";

describe("openConfined", () => {
  let root: string;
  let outside: string;
  beforeAll(async () => {
    root = await tempDir("confined-root-");
    outside = await tempDir("confined-outside-");
    await writeFile(join(root, "ok.txt"), "inside");
    await writeFile(join(outside, "secret.txt"), "secret");
    await symlink(join(outside, "secret.txt"), join(root, "file-link.txt"));
    await symlink(outside, join(root, "dir-link"));
    await mkdir(join(root, "fifo-dir"));
  });
  afterAll(async () => {
    await removeDirs(root, outside);
  });

  it("reads a file inside through its descriptor", async () => {
    const file = await openConfined(join(root, "ok.txt"), await confinedFolders([root]));
    try {
      expect((await file.handle.readFile()).toString()).toBe("inside");
      expect(file).toMatchObject({ name: "ok.txt", size: 6 });
    } finally {
      await file.close();
    }
    const relative = await openConfined("ok.txt", await confinedFolders([root]));
    await relative.close();
  });

  it("refuses outside paths, .. escapes, symlinks out (file or folder), folders and missing files", async () => {
    const folders = await confinedFolders([root]);
    expect(await codeOf(openConfined(join(outside, "secret.txt"), folders))).toBe("PATH_NOT_ALLOWED");
    expect(
      await codeOf(openConfined(join(root, "..", outside.split("/").pop() as string, "secret.txt"), folders)),
    ).toBe("PATH_NOT_ALLOWED");
    expect(await codeOf(openConfined(join(root, "file-link.txt"), folders))).toBe("PATH_NOT_ALLOWED");
    expect(await codeOf(openConfined(join(root, "dir-link", "secret.txt"), folders))).toBe(
      "PATH_NOT_ALLOWED",
    );
    expect(await codeOf(openConfined(join(root, "fifo-dir"), folders))).toBe("INVALID_INPUT");
    expect(await codeOf(openConfined(join(root, "missing.txt"), folders))).toBe("NOT_FOUND");
    expect(await codeOf(openConfined(`${root}/ok.txt\0`, folders))).toBe("INVALID_INPUT");
    expect(await codeOf(openConfined(join(root, "ok.txt"), folders, { maxBytes: 3 }))).toBe("FILE_TOO_LARGE");
    expect(await codeOf(openConfined(join(root, "ok.txt"), await confinedFolders([])))).toBe(
      "PATH_NOT_ALLOWED",
    );
  });
});

describe("saveDownload", () => {
  it("never overwrites, caps the size and leaves nothing on failure", async () => {
    const dir = await tempDir("save-");
    try {
      expect(await saveDownload(dir, "a.txt", Buffer.from("one"), 10)).toBe(join(dir, "a.txt"));
      expect(await saveDownload(dir, "a.txt", Buffer.from("two"), 10)).toBe(join(dir, "a (1).txt"));
      expect(await saveDownload(dir, "../../etc/evil", Buffer.from("x"), 10)).toBe(join(dir, "evil"));
      async function* big() {
        yield Buffer.alloc(8);
        yield Buffer.alloc(8);
      }
      expect(await codeOf(saveDownload(dir, "big.bin", big(), 10))).toBe("FILE_TOO_LARGE");
      const { readdir } = await import("node:fs/promises");
      expect((await readdir(dir)).sort()).toEqual(["a (1).txt", "a.txt", "evil"]);
    } finally {
      await removeDirs(dir);
    }
  });
});

describe("locators and schema paths", () => {
  it("resolves JSON pointers with escapes and finds regex paths", () => {
    const value = { "a/b": { "c~d": ["x", "y"] } };
    expect(jsonPointer(value, "/a~1b/c~0d/1")).toBe("y");
    expect(jsonPointer(value, "/missing")).toBeUndefined();
    const result = {
      content: [
        { type: "text", text: "Saved to /out/a.png\nSaved to /out/b.png" },
        { type: "text", text: "Saved to /out/a.png" },
      ],
      structuredContent: { files: ["/out/c.txt", "/out/d.txt"] },
    };
    expect(locateOutputs(result, { locator: "regex", pattern: "Saved to (?<path>\\S+)" })).toEqual([
      "/out/a.png",
      "/out/b.png",
    ]);
    expect(locateOutputs(result, { locator: "regex", pattern: "to (\\S+)" })).toEqual([
      "/out/a.png",
      "/out/b.png",
    ]);
    expect(locateOutputs(result, { locator: "structured", pointer: "/files" })).toEqual([
      "/out/c.txt",
      "/out/d.txt",
    ]);
  });

  it("finds, checks and replaces argument schemas", () => {
    const schema = {
      type: "object",
      properties: {
        file: { type: "string", "x-mcp-file": {} },
        files: { type: "array", items: { anyOf: [{ type: "string" }], "x-mcp-file": {} } },
        job: {
          type: "object",
          properties: { input: { type: "string", "x-mcp-file": {} }, n: { type: "number" } },
        },
        plain: { type: "string" },
      },
    };
    expect(markedFileArgs(schema)).toEqual(["file", "files[]", "job.input"]);
    expect(schemaAt(schema, "job.n")).toHaveLength(1);
    expect(schemaAt(schema, "job.missing")).toEqual([]);
    expect(schemaAt(schema, "plain[]")).toEqual([]);
    const copy = structuredClone(schema);
    expect(replaceSchemaAt(copy, "files[]", () => ({ type: "boolean" }))).toBe(1);
    expect(copy.properties.files.items).toEqual({ type: "boolean" });
  });

  it("tells local paths from other strings", () => {
    expect(localPathOf("/a/b.pdf", "/base")).toEqual({ path: "/a/b.pdf", explicit: true });
    expect(localPathOf("file:///a/b%20c.pdf", "/base")).toEqual({ path: "/a/b c.pdf", explicit: true });
    expect(localPathOf("./x.txt", "/base")).toEqual({ path: "/base/x.txt", explicit: true });
    expect(localPathOf("x y.txt", "/base")).toEqual({ path: "/base/x y.txt", explicit: false });
    for (const other of ["data:,hi", "upload://sessions/s/01j", "https://x/y", "artifact://sessions/a/b/c"]) {
      expect(localPathOf(other, "/base")).toBeUndefined();
    }
  });

  it("splits command lines like a shell", () => {
    expect(splitCommandLine(`npx -y "@scope/pkg" '/a b' c\\ d "e \\"f\\""`)).toEqual([
      "npx",
      "-y",
      "@scope/pkg",
      "/a b",
      "c d",
      'e "f"',
    ]);
    expect(() => splitCommandLine(`a "b`)).toThrow();
  });
});
