import { createHash } from "node:crypto";
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { FileBridgeOptions } from "../../src/bridge/options.js";
import { parseSha256Digest } from "../../src/bridge/sources/object.js";
import type { FileSourceResolver } from "../../src/bridge/types.js";
import { codeOf, sha256 } from "../support/helpers.js";

const scope = "session-1";
let base: string;
let root: string;
let tmp: string;

function bridge(options: FileBridgeOptions = {}): FileBridge {
  return new FileBridge({ tmpDir: tmp, roots: [root], ...options });
}

async function tempEntries(): Promise<string[]> {
  try {
    return await readdir(tmp);
  } catch {
    return [];
  }
}

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-bridge-")));
  root = join(base, "root");
  tmp = join(base, "tmp");
  await mkdir(join(root, "docs"), { recursive: true });
  await writeFile(join(root, "docs", "report.pdf"), "%PDF-1.7 fake pdf body");
  await writeFile(join(root, "empty.txt"), "");
  await writeFile(join(base, "secret.txt"), "top secret");
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("FileBridge options", () => {
  it.each<[string, FileBridgeOptions]>([
    ["maxBytes", { maxBytes: 0 }],
    ["maxBytes", { maxBytes: 1.5 }],
    ["concurrency", { concurrency: -1 }],
    ["forms.path", { roots: [], forms: { path: true } }],
    ["forms.https", { forms: { https: true } }],
    ["forms.nope", { forms: { nope: true } as never }],
    ["https.allowHosts", { https: { allowHosts: [] } }],
    ["https.timeout", { https: { allowHosts: ["a.example"], timeout: "soon" as never } }],
    ["https.maxRedirects", { https: { allowHosts: ["a.example"], maxRedirects: -1 } }],
    ["roots", { roots: [""] }],
    ["tmpDir", { tmpDir: "" }],
  ])("refuses a bad %s with INVALID_OPTION", (_name, options) => {
    expect(() => new FileBridge(options)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("refuses roots that do not exist when a path is first resolved", async () => {
    const b = new FileBridge({ tmpDir: tmp, roots: [join(base, "missing")] });
    expect(await codeOf(b.resolve("x.txt", { scope }))).toBe("INVALID_OPTION");
  });

  it("validates the call options", async () => {
    const b = bridge();
    expect(await codeOf(b.resolve("data:,x", { scope: "" }))).toBe("INVALID_INPUT");
    expect(await codeOf(b.resolve("data:,x", { scope, maxBytes: 0 }))).toBe("INVALID_INPUT");
  });
});

describe("data: URLs", () => {
  it("materializes a base64 data URL with its name and type into a temp folder", async () => {
    const content = Buffer.from("hello, bridge");
    const file = await bridge().resolve(
      `data:text/plain;name=greeting.txt;base64,${content.toString("base64")}`,
      {
        scope,
      },
    );
    expect(file.name).toBe("greeting.txt");
    expect(file.mimeType).toBe("text/plain");
    expect(file.size).toBe(content.length);
    expect(file.sha256).toBe(sha256(content));
    expect(file.source.kind).toBe("data-url");
    expect(file.path.startsWith(tmp)).toBe(true);
    expect((await readFile(file.path)).equals(content)).toBe(true);
    expect((await file.bytes()).equals(content)).toBe(true);
    const streamed: Buffer[] = [];
    for await (const chunk of file.stream()) streamed.push(chunk as Buffer);
    expect(Buffer.concat(streamed).equals(content)).toBe(true);
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
    await file.dispose();
    await file.dispose();
    expect(await tempEntries()).toEqual([]);
  });

  it("decodes percent-encoded plain data and sniffs a type for unnamed content", async () => {
    const b = bridge();
    const text = await b.resolve("data:,caf%C3%A9%20ol%C3%A9", { scope });
    expect((await text.bytes()).toString()).toBe("café olé");
    expect(text.name).toBe("file");
    await text.dispose();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const image = await b.resolve(`data:;base64,${png.toString("base64")}`, { scope });
    expect(image.mimeType).toBe("image/png");
    expect(image.name).toBe("file.png");
    await image.dispose();
  });

  it("tolerates whitespace and %3D padding in base64 payloads (decoded again from the start)", async () => {
    const b = bridge();
    for (const input of [
      "data:text/plain;base64,aGVs\nbG8gd29ybGQ",
      "data:text/plain;base64,aGVs bG8g\r\nd29y bGQ=",
      "data:text/plain;base64,aGVsbG8gd29ybGQ%3D",
    ]) {
      const file = await b.resolve(input, { scope });
      expect((await file.bytes()).toString()).toBe("hello world");
      expect(file.size).toBe(11);
      expect(file.sha256).toBe(sha256("hello world"));
      await file.dispose();
    }
    expect(await tempEntries()).toEqual([]);
  });

  it("uses the call's fallback name when the URL has none", async () => {
    const file = await bridge().resolve("data:application/pdf;base64,JVBERi0x", { scope, name: "scan.pdf" });
    expect(file.name).toBe("scan.pdf");
    await file.dispose();
  });

  it("sanitizes a hostile name= parameter", async () => {
    const file = await bridge().resolve("data:text/plain;name=..%2F..%2Fetc%2Fpasswd;base64,aGk=", { scope });
    expect(file.name).toBe("passwd");
    expect(file.path.startsWith(tmp)).toBe(true);
    await file.dispose();
  });

  it.each([
    ["invalid base64", "data:text/plain;base64,aGk*", "INVALID_BASE64"],
    ["impossible base64 length", "data:text/plain;base64,aGVsb", "INVALID_BASE64"],
    ["no comma", "data:text/plain;base64", "INVALID_DATA_URL"],
    ["empty", "data:text/plain;base64,", "EMPTY_FILE"],
  ])("refuses %s (%s)", async (_label, input, code) => {
    expect(await codeOf(bridge().resolve(input, { scope }))).toBe(code);
    expect(await tempEntries()).toEqual([]);
  });

  it("checks the declared size before decoding and the actual size while writing", async () => {
    const b = bridge({ maxBytes: 10 });
    expect(await codeOf(b.resolve(`data:;base64,${Buffer.alloc(11).toString("base64")}`, { scope }))).toBe(
      "FILE_TOO_LARGE",
    );
    expect(await codeOf(b.resolve(`data:,${"x".repeat(11)}`, { scope }))).toBe("FILE_TOO_LARGE");
    expect(await codeOf(b.resolve(`data:,${"%41".repeat(11)}`, { scope }))).toBe("FILE_TOO_LARGE");
    const ok = await b.resolve(`data:,${"%41".repeat(10)}`, { scope });
    expect((await ok.bytes()).toString()).toBe("A".repeat(10));
    await ok.dispose();
    expect(
      await codeOf(
        bridge().resolve(`data:;base64,${Buffer.alloc(11).toString("base64")}`, { scope, maxBytes: 5 }),
      ),
    ).toBe("FILE_TOO_LARGE");
    expect(await tempEntries()).toEqual([]);
  });

  it("accepts empty files when allowEmpty is set", async () => {
    const file = await bridge({ allowEmpty: true }).resolve("data:text/plain;base64,", { scope });
    expect(file.size).toBe(0);
    expect(file.sha256).toBe(sha256(""));
    await file.dispose();
  });

  it("can be switched off (FORM_DISABLED)", async () => {
    expect(await codeOf(bridge({ forms: { dataUrl: false } }).resolve("data:,x", { scope }))).toBe(
      "FORM_DISABLED",
    );
  });
});

describe("local paths", () => {
  it("hands over files inside a root without copying, and never deletes them", async () => {
    const b = bridge();
    for (const input of [
      "docs/report.pdf",
      join(root, "docs", "report.pdf"),
      `file://${join(root, "docs", "report.pdf")}`,
    ]) {
      const file = await b.resolve(input, { scope });
      expect(file.path).toBe(join(root, "docs", "report.pdf"));
      expect(file.name).toBe("report.pdf");
      expect(file.mimeType).toBe("application/pdf");
      expect(file.source.kind).toBe("path");
      expect(file.sha256).toBe(sha256("%PDF-1.7 fake pdf body"));
      await file.dispose();
      expect((await readFile(join(root, "docs", "report.pdf"))).toString()).toBe("%PDF-1.7 fake pdf body");
    }
    expect(await tempEntries()).toEqual([]);
  });

  it.each([
    ["../ traversal", () => "../secret.txt", "PATH_NOT_ALLOWED"],
    ["encoded traversal in a file URI", () => `file://${root}/%2e%2e/secret.txt`, "PATH_NOT_ALLOWED"],
    ["absolute path outside the roots", () => join(base, "secret.txt"), "PATH_NOT_ALLOWED"],
    ["NUL byte", () => "docs/report.pdf\0.txt", "PATH_NOT_ALLOWED"],
    ["a folder", () => "docs", "INVALID_INPUT"],
    ["a missing file", () => "docs/missing.pdf", "NOT_FOUND"],
    ["an empty file", () => "empty.txt", "EMPTY_FILE"],
    ["a remote file URI", () => "file://server/share/x.txt", "PATH_NOT_ALLOWED"],
  ])("refuses %s", async (_label, input, code) => {
    expect(await codeOf(bridge().resolve(input(), { scope }))).toBe(code);
  });

  it("refuses a symlink that leaves the root", async () => {
    await symlink(join(base, "secret.txt"), join(root, "link.txt"));
    expect(await codeOf(bridge().resolve("link.txt", { scope }))).toBe("PATH_NOT_ALLOWED");
  });

  it("refuses a file over the cap", async () => {
    expect(await codeOf(bridge({ maxBytes: 5 }).resolve("docs/report.pdf", { scope }))).toBe(
      "FILE_TOO_LARGE",
    );
  });

  it("refuses paths when no roots are configured, or the form is off", async () => {
    const noRoots = new FileBridge({ tmpDir: tmp });
    expect(await codeOf(noRoots.resolve(join(root, "docs", "report.pdf"), { scope }))).toBe("FORM_DISABLED");
    expect(await codeOf(noRoots.resolve(`file://${join(root, "docs", "report.pdf")}`, { scope }))).toBe(
      "FORM_DISABLED",
    );
    expect(await codeOf(bridge({ forms: { path: false } }).resolve("docs/report.pdf", { scope }))).toBe(
      "FORM_DISABLED",
    );
  });
});

describe("object forms", () => {
  it("accepts {filename, content, mimeType} with base64 content", async () => {
    const content = Buffer.from([0, 1, 2, 250, 251]);
    const file = await bridge().resolve(
      { filename: "blob.bin", content: content.toString("base64"), mimeType: "application/x-thing" },
      { scope },
    );
    expect(file.name).toBe("blob.bin");
    expect(file.mimeType).toBe("application/x-thing");
    expect(file.source.kind).toBe("object");
    expect((await file.bytes()).equals(content)).toBe(true);
    await file.dispose();
  });

  it("accepts {name, content_base64, mime_type}, {name, data} and utf8 content", async () => {
    const b = bridge();
    const a = await b.resolve(
      { name: "a.csv", content_base64: Buffer.from("x,y").toString("base64"), mime_type: "text/csv" },
      { scope },
    );
    expect([a.name, a.mimeType, (await a.bytes()).toString()]).toEqual(["a.csv", "text/csv", "x,y"]);
    const c = await b.resolve({ name: "c.md", data: Buffer.from("# hi").toString("base64url") }, { scope });
    expect([c.name, c.mimeType, (await c.bytes()).toString()]).toEqual(["c.md", "text/markdown", "# hi"]);
    const d = await b.resolve({ name: "d.txt", content: "plain text ✓", encoding: "utf8" }, { scope });
    expect((await d.bytes()).toString()).toBe("plain text ✓");
    await Promise.all([a.dispose(), c.dispose(), d.dispose()]);
  });

  it("accepts a data URL as content and lets the object's name win", async () => {
    const file = await bridge().resolve(
      { name: "real.txt", content: "data:text/plain;name=other.txt,hello" },
      { scope },
    );
    expect(file.name).toBe("real.txt");
    expect((await file.bytes()).toString()).toBe("hello");
    await file.dispose();
  });

  it("accepts SEP-2631 {uri, name, mimeType, size, digest} and verifies size and digest", async () => {
    const b = bridge();
    const body = "%PDF-1.7 fake pdf body";
    const ok = await b.resolve(
      {
        uri: "docs/report.pdf",
        name: "Quarterly.pdf",
        mimeType: "application/pdf",
        size: body.length,
        digest: `sha256:${sha256(body)}`,
      },
      { scope },
    );
    expect(ok.name).toBe("Quarterly.pdf");
    expect(ok.path).toBe(join(root, "docs", "report.pdf"));
    await ok.dispose();
    const sri = `sha256-${createHash("sha256").update(body).digest("base64")}`;
    const viaSri = await b.resolve(
      { uri: `data:;base64,${Buffer.from(body).toString("base64")}`, name: "x.pdf", digest: sri },
      { scope },
    );
    expect(viaSri.sha256).toBe(sha256(body));
    await viaSri.dispose();
    expect(
      await codeOf(
        b.resolve({ uri: "docs/report.pdf", name: "r.pdf", digest: `sha256:${sha256("other")}` }, { scope }),
      ),
    ).toBe("DIGEST_MISMATCH");
    expect(await codeOf(b.resolve({ uri: "data:,abc", name: "r.txt", size: 4 }, { scope }))).toBe(
      "DIGEST_MISMATCH",
    );
    expect(await codeOf(b.resolve({ uri: "data:,abc", name: "r.txt", digest: "md5:abc" }, { scope }))).toBe(
      "INVALID_INPUT",
    );
    expect(await codeOf(b.resolve({ uri: "data:,abc", name: "r.txt", size: -1 }, { scope }))).toBe(
      "INVALID_INPUT",
    );
    expect(await tempEntries()).toEqual([]);
  });

  it("refuses a declared size over the cap before fetching anything", async () => {
    const b = bridge({ maxBytes: 100 });
    expect(await codeOf(b.resolve({ uri: "docs/missing.pdf", name: "x", size: 101 }, { scope }))).toBe(
      "FILE_TOO_LARGE",
    );
  });

  it("accepts the {download_url, file_id, file_name, mime_type} form", async () => {
    const file = await bridge().resolve(
      {
        download_url: "data:;base64,aGVsbG8=",
        file_id: "file_123",
        file_name: "hello.txt",
        mime_type: "text/plain",
      },
      { scope },
    );
    expect([file.name, file.mimeType, (await file.bytes()).toString()]).toEqual([
      "hello.txt",
      "text/plain",
      "hello",
    ]);
    await file.dispose();
  });

  it.each([
    ["no content or uri", { name: "x.txt" }, "INVALID_INPUT"],
    ["content not a string", { name: "x.txt", content: 42 }, "INVALID_INPUT"],
    ["bad encoding", { name: "x.txt", content: "aGk=", encoding: "hex" }, "INVALID_INPUT"],
    ["invalid base64 content", { name: "x.txt", content: "not base64!" }, "INVALID_BASE64"],
    ["empty content", { name: "x.txt", content: "" }, "EMPTY_FILE"],
  ])("refuses %s", async (_label, input, code) => {
    expect(await codeOf(bridge().resolve(input, { scope }))).toBe(code);
    expect(await tempEntries()).toEqual([]);
  });

  it("refuses oversized inline content from its length", async () => {
    const b = bridge({ maxBytes: 4 });
    expect(
      await codeOf(b.resolve({ name: "x", content: Buffer.alloc(5).toString("base64") }, { scope })),
    ).toBe("FILE_TOO_LARGE");
    expect(await codeOf(b.resolve({ name: "x", content: "12345", encoding: "utf8" }, { scope }))).toBe(
      "FILE_TOO_LARGE",
    );
  });

  it("can be switched off (FORM_DISABLED)", async () => {
    expect(
      await codeOf(bridge({ forms: { object: false } }).resolve({ name: "a", content: "aGk=" }, { scope })),
    ).toBe("FORM_DISABLED");
  });
});

describe("other strings and values", () => {
  it.each(["ftp://example.com/x.pdf", "s3://bucket/key", "gopher://x"])(
    "refuses %s with UNSUPPORTED_INPUT naming the forms",
    async (input) => {
      try {
        await bridge().resolve(input, { scope });
        expect.unreachable();
      } catch (error) {
        expect((error as { code?: string }).code).toBe("UNSUPPORTED_INPUT");
        expect((error as { data?: { forms?: string[] } }).data?.forms).toContain("data: URL");
      }
    },
  );

  it("refuses http:// with FORM_DISABLED and https:// without allowHosts with FORM_DISABLED", async () => {
    expect(await codeOf(bridge().resolve("http://example.com/a.pdf", { scope }))).toBe("FORM_DISABLED");
    expect(await codeOf(bridge().resolve("https://example.com/a.pdf", { scope }))).toBe("FORM_DISABLED");
  });

  it("refuses lists, numbers, null and empty strings with INVALID_INPUT", async () => {
    const b = bridge();
    for (const input of [["data:,a"], 42, null, undefined, ""]) {
      expect(await codeOf(b.resolve(input, { scope }))).toBe("INVALID_INPUT");
    }
  });

  it("decodes bare base64 only when enabled, strictly", async () => {
    const off = bridge();
    expect(await codeOf(off.resolve("aGVsbG8gd29ybGQ=", { scope }))).toBe("NOT_FOUND");
    const noPaths = new FileBridge({ tmpDir: tmp });
    expect(await codeOf(noPaths.resolve("aGVsbG8gd29ybGQ=", { scope }))).toBe("UNSUPPORTED_INPUT");
    const on = new FileBridge({ tmpDir: tmp, forms: { base64: true } });
    const file = await on.resolve("aGVsbG8gd29ybGQ=", { scope, name: "hello.txt" });
    expect([file.name, (await file.bytes()).toString(), file.source.kind]).toEqual([
      "hello.txt",
      "hello world",
      "base64",
    ]);
    await file.dispose();
    expect(await codeOf(on.resolve("aGVsbG8gd29ybGR=", { scope }))).toBe("INVALID_BASE64");
    expect(await codeOf(on.resolve("aGVsbG8gd29ybGQ==", { scope }))).toBe("INVALID_BASE64");
    expect(await codeOf(on.resolve("not base64 at all!", { scope }))).toBe("INVALID_BASE64");
    // With paths on too, an existing file wins and a missing one falls through to base64.
    const both = bridge({ forms: { base64: true } });
    const asPath = await both.resolve("docs/report.pdf", { scope });
    expect(asPath.source.kind).toBe("path");
    const asBase64 = await both.resolve("aGVsbG8gd29ybGQ=", { scope });
    expect(asBase64.source.kind).toBe("base64");
    await Promise.all([asPath.dispose(), asBase64.dispose()]);
  });

  it("refuses an already aborted call with ABORTED and leaves nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await codeOf(bridge().resolve("data:,x", { scope, signal: controller.signal }))).toBe("ABORTED");
    expect(await tempEntries()).toEqual([]);
  });
});

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

describe("resolveAll", () => {
  it("refuses more than maxFiles inputs with TOO_MANY_FILES before reading any", async () => {
    const b = bridge({ maxFiles: 3 });
    const four = ["data:,1", "data:,2", "data:,3", "data:,4"];
    expect(await codeOf(b.resolveAll(four, { scope }))).toBe("TOO_MANY_FILES");
    expect(await tempEntries()).toEqual([]);
    const three = await b.resolveAll(four.slice(0, 3), { scope });
    expect(three).toHaveLength(3);
    await Promise.all(three.map((f) => f.dispose()));
    expect(
      await codeOf(
        bridge().resolveAll(
          Array.from({ length: 33 }, () => "data:,x"),
          { scope },
        ),
      ),
    ).toBe("TOO_MANY_FILES");
    for (const maxFiles of [0, -1, 1.5, "3"]) {
      expect(() => bridge({ maxFiles: maxFiles as number })).toThrowError(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
    }
  });

  it("resolves a mixed list in order", async () => {
    const files = await bridge({ concurrency: 2 }).resolveAll(
      ["docs/report.pdf", "data:text/plain;name=a.txt,A", { name: "b.txt", content: "Qg==" }, "data:,C"],
      { scope },
    );
    expect(await Promise.all(files.map(async (f) => (await f.bytes()).toString()))).toEqual([
      "%PDF-1.7 fake pdf body",
      "A",
      "B",
      "C",
    ]);
    await Promise.all(files.map((f) => f.dispose()));
    expect(await tempEntries()).toEqual([]);
  });

  it("is all-or-nothing: one failure disposes the others and throws its code", async () => {
    const b = bridge({ concurrency: 1 });
    const inputs = ["data:,one", "data:,two", "../secret.txt", "data:,four"];
    expect(await codeOf(b.resolveAll(inputs, { scope }))).toBe("PATH_NOT_ALLOWED");
    expect(await tempEntries()).toEqual([]);
    expect(await codeOf(b.resolveAll("data:,x" as never, { scope }))).toBe("INVALID_INPUT");
  });
});

describe("sweep", () => {
  it("removes folders of dead processes and old folders, keeps live ones", async () => {
    let now = Date.now();
    const b = bridge({ now: () => now });
    const live = await b.resolve("data:,keep", { scope });
    await mkdir(join(tmp, "call-999999-deadbeef"));
    await writeFile(join(tmp, "call-999999-deadbeef", "x.bin"), "left by a crash");
    expect(await b.sweep()).toBe(1);
    now += 3 * 3_600_000;
    expect(await b.sweep({ olderThan: "1h" })).toBe(0); // the live file's folder is in use
    expect((await live.bytes()).toString()).toBe("keep");
    await live.dispose();
    expect(await tempEntries()).toEqual([]);
  });
});

describe("parseSha256Digest", () => {
  it("reads hex and SRI forms", () => {
    const hex = sha256("x");
    expect(parseSha256Digest(`sha256:${hex.toUpperCase()}`)).toBe(hex);
    expect(parseSha256Digest(`sha256-${Buffer.from(hex, "hex").toString("base64")}`)).toBe(hex);
    expect(() => parseSha256Digest("sha512-abc")).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
  });
});

describe("audit: media types", () => {
  const magic: Array<[string, number[], string, string]> = [
    ["PDF", [0x25, 0x50, 0x44, 0x46, 0x2d, 0x31, 0x2e, 0x37], "application/pdf", "file.pdf"],
    ["PNG", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0], "image/png", "file.png"],
    ["JPEG", [0xff, 0xd8, 0xff, 0xe0, 0, 0x10], "image/jpeg", "file.jpg"],
    ["GIF", [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0], "image/gif", "file.gif"],
    ["ZIP / DOCX", [0x50, 0x4b, 0x03, 0x04, 0x14, 0], "application/zip", "file.zip"],
    ["GZIP", [0x1f, 0x8b, 0x08, 0, 0, 0], "application/gzip", "file.gz"],
    ["unknown bytes", [0x00, 0x01, 0x02, 0x03], "application/octet-stream", "file"],
  ];

  it.each(magic)("sniffs %s when neither a type nor a name is given", async (_label, bytes, type, name) => {
    const file = await bridge().resolve(`data:;base64,${Buffer.from(bytes).toString("base64")}`, { scope });
    expect([file.mimeType, file.name]).toEqual([type, name]);
    expect((await file.bytes()).equals(Buffer.from(bytes))).toBe(true);
    await file.dispose();
  });

  it("prefers a valid declared type, then the name, then the bytes", async () => {
    const pdf = Buffer.from("%PDF-1.7 body").toString("base64");
    const b = bridge();
    const cases: Array<[unknown, string]> = [
      [`data:image/png;name=a.txt;base64,${pdf}`, "image/png"], // declared wins over name and bytes
      [`data:;name=a.txt;base64,${pdf}`, "text/plain"], // name wins over bytes
      [{ name: "a.csv", content: pdf, mimeType: "not a type" }, "text/csv"], // invalid declared: name
      [{ name: "noext", content: pdf, mimeType: "application/octet-stream" }, "application/pdf"],
    ];
    for (const [input, type] of cases) {
      const file = await b.resolve(input, { scope });
      expect(file.mimeType).toBe(type);
      await file.dispose();
    }
  });

  it("sniffs local files without a known extension", async () => {
    await writeFile(join(root, "scan"), Buffer.from([0xff, 0xd8, 0xff, 0xdb, 1, 2]));
    const file = await bridge().resolve("scan", { scope });
    expect(file.mimeType).toBe("image/jpeg");
    await file.dispose();
  });
});

describe("audit: object content", () => {
  it("takes utf8 content literally even when it starts with data:", async () => {
    const text = "data: first event, second field";
    const file = await bridge().resolve({ name: "events.log", content: text, encoding: "utf8" }, { scope });
    expect((await file.bytes()).toString("utf8")).toBe(text);
    expect(file.size).toBe(Buffer.byteLength(text));
    await file.dispose();
    expect(await tempEntries()).toEqual([]);
  });
});

describe("audit: bare base64 next to paths", () => {
  it("decodes base64 that looks like an absolute path outside the roots (JPEG is /9j/…)", async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]);
    const b = bridge({ forms: { base64: true } });
    const file = await b.resolve(jpeg.toString("base64"), { scope });
    expect(jpeg.toString("base64").startsWith("/9j/")).toBe(true);
    expect([file.source.kind, file.mimeType]).toEqual(["base64", "image/jpeg"]);
    expect((await file.bytes()).equals(jpeg)).toBe(true);
    await file.dispose();
  });

  it("keeps PATH_NOT_ALLOWED for an outside path that is not valid base64", async () => {
    const b = bridge({ forms: { base64: true } });
    expect(await codeOf(b.resolve("/etc/passwd", { scope }))).toBe("PATH_NOT_ALLOWED");
    expect(await codeOf(b.resolve(join(base, "secret.txt"), { scope }))).toBe("PATH_NOT_ALLOWED");
    // Without the base64 form the absolute path is refused as before.
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]).toString("base64");
    expect(await codeOf(bridge().resolve(jpeg, { scope }))).toBe("PATH_NOT_ALLOWED");
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
          const { FileBridgeError } = await import("../../src/errors/file-bridge-error.js");
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

describe("audit: resolveAll concurrency and disposal", () => {
  it("never runs more than `concurrency` resolutions at once", async () => {
    let inFlight = 0;
    let most = 0;
    const slow: FileSourceResolver = {
      name: "slow",
      matches: (input) => input.startsWith("slow:"),
      resolve: async (input) => {
        inFlight++;
        most = Math.max(most, inFlight);
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        return {
          name: "s.txt",
          open: async () => {
            inFlight--;
            return Readable.from([Buffer.from(input)]);
          },
        };
      },
    };
    const files = await bridge({ resolvers: [slow], concurrency: 3 }).resolveAll(
      Array.from({ length: 10 }, (_, i) => `slow:${i}`),
      { scope },
    );
    expect(most).toBe(3);
    expect(await Promise.all(files.map(async (f) => (await f.bytes()).toString()))).toEqual(
      Array.from({ length: 10 }, (_, i) => `slow:${i}`),
    );
    await Promise.all(files.map((f) => f.dispose()));
    expect(await tempEntries()).toEqual([]);
  });

  it("Symbol.asyncDispose removes the temp folder like dispose()", async () => {
    const file = await bridge().resolve("data:text/plain;name=a.txt,hello", { scope });
    expect(await tempEntries()).toHaveLength(1);
    await file[Symbol.asyncDispose]();
    expect(await tempEntries()).toEqual([]);
    {
      await using scoped = await bridge().resolve("data:,bye", { scope });
      expect((await readFile(scoped.path)).toString()).toBe("bye");
    }
    expect(await tempEntries()).toEqual([]);
  });
});

describe("audit: temp folders", () => {
  it("one bridge's sweep keeps a folder another bridge is still using", async () => {
    const user = bridge();
    const sweeper = bridge();
    const file = await user.resolve("data:,in use", { scope });
    const old = new Date(Date.now() - 5 * 3_600_000);
    await utimes(dirname(file.path), old, old);
    expect(await sweeper.sweep({ olderThan: "1h" })).toBe(0);
    expect((await readFile(file.path)).toString()).toBe("in use");
    await file.dispose();
  });

  it("refuses a temp dir anyone can write to (no sticky bit) with STORAGE_ERROR", async () => {
    await mkdir(tmp, { recursive: true });
    await chmod(tmp, 0o777);
    expect(await codeOf(bridge().resolve("data:,x", { scope }))).toBe("STORAGE_ERROR");
    expect(await tempEntries()).toEqual([]);
  });
});
