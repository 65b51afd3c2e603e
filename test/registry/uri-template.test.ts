import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isFileBridgeError } from "../../src/errors/file-bridge-error.js";
import {
  encodePath,
  encodeStrict,
  expandTemplate,
  matchTemplate,
  parseTemplate,
} from "../../src/registry/uri-template.js";

function optionError(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFileBridgeError(error) ? error.code : "OTHER";
  }
  return undefined;
}

describe("parseTemplate", () => {
  it("parses simple and reserved expressions", () => {
    const t = parseTemplate("file://uploads/{scope}/{+path}", "t");
    expect(t.variables).toEqual(["scope", "path"]);
    expect([...t.reserved]).toEqual(["path"]);
  });

  it.each([
    "",
    "file://{a",
    "file://a}",
    "file://{?q}",
    "file://{#f}",
    "file://{a,b}",
    "file://{a:3}",
    "file://{a*}",
    "file://{a}{b}",
    "file://{a}/{a}",
    "file://{}",
  ])("refuses %j with INVALID_OPTION", (source) => {
    expect(optionError(() => parseTemplate(source, "t"))).toBe("INVALID_OPTION");
  });
});

describe("expand and match", () => {
  const t = parseTemplate("file://uploads/{scope}/{+path}", "t");

  it("percent-encodes spaces, %, #, ? and unicode, keeps / in reserved expressions", () => {
    const uri = expandTemplate(t, { scope: "s 1/x", path: "a dir/50% #1?.txt" });
    expect(uri).toBe("file://uploads/s%201%2Fx/a%20dir/50%25%20%231%3F.txt");
    expect(matchTemplate(t, uri)).toEqual({ scope: "s 1/x", path: "a dir/50% #1?.txt" });
  });

  it("encodes sub-delimiters like RFC 6570 simple expansion", () => {
    expect(encodeStrict("a!'()*b")).toBe("a%21%27%28%29%2Ab");
    expect(encodePath("a b/c")).toBe("a%20b/c");
  });

  it("decodes exactly once", () => {
    expect(matchTemplate(t, "file://uploads/s/a%2520b")).toEqual({ scope: "s", path: "a%20b" });
  });

  it("accepts a raw ? or # in a reserved expression", () => {
    expect(matchTemplate(t, "file://uploads/s/a?b#c")).toEqual({ scope: "s", path: "a?b#c" });
  });

  it("returns null for other URIs and malformed escapes", () => {
    expect(matchTemplate(t, "file://other/s/a")).toBeNull();
    expect(matchTemplate(t, "file://uploads/s")).toBeNull();
    expect(matchTemplate(t, "file://uploads/s/%E0%A4%A")).toBeNull();
    expect(matchTemplate(t, "file://uploads//a")).toBeNull();
  });

  it("round-trips any values (property)", () => {
    const w = parseTemplate("wire://container/{c}/file/{f}/{+p}", "w");
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 1 }),
        fc.string({ unit: "grapheme", minLength: 1 }),
        fc.string({ unit: "grapheme", minLength: 1 }),
        (c, f, p) => {
          const uri = expandTemplate(w, { c, f, p });
          expect(matchTemplate(w, uri)).toEqual({ c, f, p });
        },
      ),
    );
  });
});
