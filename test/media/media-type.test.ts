import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  chooseMediaType,
  isTextualMediaType,
  normalizeMediaType,
  OCTET_STREAM,
  parseMediaType,
  sniffMediaType,
} from "../../src/media/media-type.js";

describe("parseMediaType", () => {
  it("parses essence and parameters, case-insensitively for names", () => {
    expect(parseMediaType('Text/Plain; Charset="UTF-8"; format=flowed')).toEqual({
      essence: "text/plain",
      type: "text",
      subtype: "plain",
      parameters: { charset: "UTF-8", format: "flowed" },
    });
  });

  it("refuses what is not type/subtype", () => {
    for (const bad of ["", "text", "text/", "/plain", "te xt/plain", "text/pl ain", 42, null]) {
      expect(parseMediaType(bad)).toBeNull();
    }
  });
});

describe("normalizeMediaType", () => {
  it("lower-cases the essence and keeps parameters, quoting values that need it", () => {
    expect(normalizeMediaType("Text/HTML;Charset=utf-8")).toBe("text/html; charset=utf-8");
    expect(normalizeMediaType('multipart/mixed; boundary="a b;c"')).toBe('multipart/mixed; boundary="a b;c"');
    expect(normalizeMediaType("nonsense")).toBe(OCTET_STREAM);
  });

  it("round-trips any printable parameter value through parse and normalize", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[ -~]{0,30}$/), (value) => {
        const quoted = `"${value.replace(/["\\]/g, "\\$&")}"`;
        const normalized = normalizeMediaType(`Text/Plain; X=${quoted}; other=1`);
        expect(parseMediaType(normalized)?.parameters).toEqual({ x: value, other: "1" });
      }),
    );
  });
});

describe("sniffMediaType", () => {
  it.each([
    ["application/pdf", [0x25, 0x50, 0x44, 0x46, 0x2d, 0x31]],
    ["image/png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
    ["image/jpeg", [0xff, 0xd8, 0xff, 0xe0]],
    ["image/gif", [0x47, 0x49, 0x46, 0x38, 0x39, 0x61]],
    ["application/zip", [0x50, 0x4b, 0x03, 0x04]],
    ["application/gzip", [0x1f, 0x8b, 0x08]],
  ])("recognises %s", (type, bytes) => {
    expect(sniffMediaType(Uint8Array.from(bytes))).toBe(type);
  });

  it("returns null for unknown or too-short content", () => {
    expect(sniffMediaType(Buffer.from("hello"))).toBeNull();
    expect(sniffMediaType(Uint8Array.from([0x89, 0x50]))).toBeNull();
  });
});

describe("chooseMediaType", () => {
  const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  it("prefers a declared type, then the name, then the bytes", () => {
    expect(chooseMediaType("image/webp", "a.png", png)).toBe("image/webp");
    expect(chooseMediaType(undefined, "a.csv", png)).toBe("text/csv");
    expect(chooseMediaType("application/octet-stream", "scan", png)).toBe("image/png");
    expect(chooseMediaType("not a type", "scan", Buffer.from("?"))).toBe(OCTET_STREAM);
  });
});

describe("isTextualMediaType", () => {
  it("knows text, structured suffixes and the allow-list, and nothing else", () => {
    for (const yes of [
      "text/csv",
      "application/json",
      "application/ld+json",
      "image/svg+xml",
      "application/x-sh",
    ]) {
      expect(isTextualMediaType(yes)).toBe(true);
    }
    for (const no of [
      "image/png",
      "application/pdf",
      "application/octet-stream",
      "application/jsonx",
      "garbage",
    ]) {
      expect(isTextualMediaType(no)).toBe(false);
    }
  });
});
