import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../../src/bridge/file-bridge.js";
import { looksLikeBareBase64 } from "../../../src/bridge/sources/stray-forms.js";
import { codeOf } from "../../support/helpers.js";
import { bridge, root, scope, tempEntries, tmp, useBridgeSandbox } from "../bridge-sandbox.js";

useBridgeSandbox();

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code?: string; message: string; data?: unknown }> {
  const error = await promise.then(
    () => expect.unreachable("the input was accepted"),
    (caught: unknown) => caught,
  );
  return error as { code?: string; message: string; data?: unknown };
}

describe("an object form sent as a JSON string", () => {
  it("is taken as that object: name, type and bytes round-trip", async () => {
    const content = Buffer.from([0, 1, 2, 250, 251]);
    const encoded = JSON.stringify({
      filename: "blob.bin",
      content: content.toString("base64"),
      mimeType: "text/csv",
    });
    const file = await bridge().resolve(` ${encoded}\n`, { scope });
    expect([file.name, file.mimeType, file.source.kind]).toEqual(["blob.bin", "text/csv", "object"]);
    expect((await file.bytes()).equals(content)).toBe(true);
    await file.dispose();
    expect(await tempEntries()).toEqual([]);
  });

  it("gets the object form's own errors, and FORM_DISABLED naming the accepted forms when objects are off", async () => {
    expect(await codeOf(bridge().resolve(JSON.stringify({ filename: "x.txt" }), { scope }))).toBe(
      "INVALID_INPUT",
    );
    const noObjects = bridge({ forms: { object: false } });
    const error = await refusal(
      noObjects.resolve(JSON.stringify({ name: "a.txt", content: "YWJj" }), { scope }),
    );
    expect(error.code).toBe("FORM_DISABLED");
    expect(error.message).toContain(
      "does not accept files as object; it accepts data: URL, file:// URI, local path",
    );
  });

  it("leaves a file whose name merely starts with a brace to the path form", async () => {
    await writeFile(join(root, "{draft}"), "braced");
    const file = await bridge().resolve("{draft}", { scope });
    expect((await file.bytes()).toString()).toBe("braced");
    await file.dispose();
    expect(await codeOf(bridge().resolve("{not json}", { scope }))).toBe("NOT_FOUND");
  });
});

describe("bare base64 on a server with that form off", () => {
  const png = Buffer.from("\x89PNG\r\n\x1a\n0123456789abcdef", "latin1").toString("base64");

  it("is FORM_DISABLED with the data: URL and object forms to send instead, not NOT_FOUND", async () => {
    for (const b of [bridge(), new FileBridge({ tmpDir: tmp })]) {
      const error = await refusal(b.resolve(png, { scope }));
      expect(error.code).toBe("FORM_DISABLED");
      expect(error.data).toMatchObject({ form: "bare base64" });
      expect(error.message).toContain(
        'send it as a data URL: "data:<media type>;name=<file name>;base64,<the same',
      );
      expect(error.message).toContain(
        'or as an object: {"name": "<file name>", "content": "<the same base64>"}',
      );
    }
    expect(await tempEntries()).toEqual([]);
  });

  it("names only the forms that are on", async () => {
    const error = await refusal(bridge({ forms: { object: false } }).resolve(png, { scope }));
    expect(error.message).toContain("data:<media type>");
    expect(error.message).not.toContain('{"name"');
    const neither = await refusal(
      bridge({ forms: { object: false, dataUrl: false } }).resolve(png, { scope }),
    );
    expect(neither.message).toContain("send it in an accepted form: file:// URI, local path");
  });

  it("tells names and paths from base64", () => {
    for (const name of [
      "report.pdf",
      "docs/report.pdf",
      "MyFile2024Report",
      "README",
      "/srv/shared/Notes2024",
    ]) {
      expect(looksLikeBareBase64(name), name).toBe(false);
    }
    for (const content of [
      png,
      "aGVsbG8gd29ybGQ=",
      "/9j/4AAQSkZJRgABAQEASABIAAD/",
      "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY",
    ]) {
      expect(looksLikeBareBase64(content), content).toBe(true);
    }
  });
});

describe("FORM_DISABLED names the forms the server accepts", () => {
  it("for http:// and for a path on a server without roots", async () => {
    const http = await refusal(bridge().resolve("http://example.com/a.pdf", { scope }));
    expect(http.message).toMatch(/it accepts data: URL, file:\/\/ URI, local path, object/);
    const noRoots = await refusal(new FileBridge({ tmpDir: tmp }).resolve("docs/report.pdf", { scope }));
    expect(noRoots.code).toBe("FORM_DISABLED");
    expect(noRoots.message).toContain("it accepts data: URL, object {name, content (base64)}");
  });
});

describe("bridge.fileInput()", () => {
  it("tells the model that a local path works when roots are set, and the bridge's size limit", () => {
    const withRoots = z.toJSONSchema(bridge({ maxBytes: 1024 }).fileInput({ description: "The notes." }));
    expect(withRoots.description).toContain("a file:// URI or a path inside the server's shared folders");
    expect(withRoots["x-mcp-file"]).toEqual({ maxSize: 1024 });
    const noRoots = z.toJSONSchema(new FileBridge({ tmpDir: tmp }).fileInput());
    expect(noRoots.description).not.toContain("path");
    const https = z.toJSONSchema(
      new FileBridge({ tmpDir: tmp, https: { allowHosts: ["x.example"] } }).fileInput(),
    );
    expect(https.description).toContain("an https:// URL");
    const explicit = z.toJSONSchema(bridge().fileInput({ paths: false, maxBytes: 10 }));
    expect(explicit.description).not.toContain("path");
    expect(explicit["x-mcp-file"]).toEqual({ maxSize: 10 });
  });
});
