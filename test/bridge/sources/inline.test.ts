import { readFile, stat } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { codeOf, sha256 } from "../../support/helpers.js";
import { bridge, scope, tempEntries, tmp, useBridgeSandbox } from "../bridge-sandbox.js";

useBridgeSandbox();

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
