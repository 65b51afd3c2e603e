import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatContentDisposition,
  parseContentDispositionFileName,
} from "../../src/internal/content-disposition.js";

describe("formatContentDisposition", () => {
  it("writes an ASCII fallback and an RFC 8187 filename*", () => {
    expect(formatContentDisposition("attachment", "résumé 2024.pdf")).toBe(
      `attachment; filename="resume 2024.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%202024.pdf`,
    );
    expect(formatContentDisposition("inline", 'a"b%.txt')).toBe(
      `inline; filename="a_b_.txt"; filename*=UTF-8''a%22b%25.txt`,
    );
    expect(formatContentDisposition("inline", "dir\\x.txt")).toBe(
      `inline; filename="x.txt"; filename*=UTF-8''x.txt`,
    );
    expect(formatContentDisposition("attachment", "dir/日本.txt")).toBe(
      `attachment; filename="__.txt"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt`,
    );
  });

  it("round-trips any name through the parser (property)", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 80, unit: "grapheme" }), (name) => {
        fc.pre(!name.includes("/") && !name.includes("\\"));
        const header = formatContentDisposition("attachment", name);
        expect(header).toMatch(/^[\x20-\x7e]+$/);
        expect(parseContentDispositionFileName(header)).toBe(name);
      }),
    );
  });
});

describe("parseContentDispositionFileName", () => {
  it.each([
    ['attachment; filename="a b.txt"', "a b.txt"],
    ["attachment; filename=plain.txt", "plain.txt"],
    ['form-data; name="f"; filename="x\\"y.txt"', 'x"y.txt'],
    ["attachment; filename*=iso-8859-1'en'%E9t%E9.txt", "été.txt"],
    [`attachment; filename="fallback.txt"; filename*=UTF-8''%FF%FE`, "fallback.txt"],
    ["attachment", null],
    ["", null],
  ])("reads %s", (header, expected) => {
    expect(parseContentDispositionFileName(header)).toBe(expected);
  });

  it("never throws on arbitrary input (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (header) => {
        const result = parseContentDispositionFileName(header);
        expect(result === null || typeof result === "string").toBe(true);
      }),
    );
  });
});
