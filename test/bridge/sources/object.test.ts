import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parseSha256Digest } from "../../../src/bridge/sources/object.js";
import { codeOf, sha256 } from "../../support/helpers.js";
import { bridge, scope, tempEntries, useBridgeSandbox } from "../bridge-sandbox.js";

useBridgeSandbox();

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
    expect(await readFile(ok.path, "utf8")).toBe(body); // a private copy of docs/report.pdf
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

describe("parseSha256Digest", () => {
  it("reads hex and SRI forms", () => {
    const hex = sha256("x");
    expect(parseSha256Digest(`sha256:${hex.toUpperCase()}`)).toBe(hex);
    expect(parseSha256Digest(`sha256-${Buffer.from(hex, "hex").toString("base64")}`)).toBe(hex);
    expect(() => parseSha256Digest("sha512-abc")).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }));
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
