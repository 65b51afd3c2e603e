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

  it("answers the same for a declared type it has seen before, also past its cache's size", () => {
    for (let round = 0; round < 2; round++) {
      expect(chooseMediaType("Text/Plain;Charset=UTF-8", "a.bin")).toBe("text/plain; charset=UTF-8");
      expect(chooseMediaType("application/octet-stream", "a.csv")).toBe("text/csv");
      expect(chooseMediaType("application/octet-stream", "scan", png)).toBe("image/png");
      expect(chooseMediaType("not a type", "a.csv")).toBe("text/csv");
      for (let i = 0; i < 100; i++) {
        expect(chooseMediaType(`application/x-t${i}; v="a b"`, "a.csv")).toBe(`application/x-t${i}; v="a b"`);
      }
      const long = `text/plain; note="${"a ".repeat(150)}b"`;
      expect(chooseMediaType(long, "a.bin")).toBe(long);
      expect(chooseMediaType(`text/plain; note="${"x".repeat(1100)}"`, "a.csv")).toBe("text/csv");
    }
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

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The hand-written parser the `content-type` package replaced, kept as the reference. */
function previousParseMediaType(value: string) {
  const semicolon = value.indexOf(";");
  const head = semicolon < 0 ? value : value.slice(0, semicolon);
  const slash = head.indexOf("/");
  if (slash < 0) return null;
  const type = head.slice(0, slash).trim().toLowerCase();
  const subtype = head
    .slice(slash + 1)
    .trim()
    .toLowerCase();
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return null;
  const parameters: Record<string, string> = {};
  let i = semicolon < 0 ? value.length : semicolon;
  while (i < value.length) {
    i++;
    while (value[i] === " " || value[i] === "\t") i++;
    const eq = value.indexOf("=", i);
    const next = value.indexOf(";", i);
    if (eq < 0 || (next >= 0 && next < eq)) {
      i = next < 0 ? value.length : next;
      continue;
    }
    const name = value.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    let val = "";
    if (value[i] === '"') {
      i++;
      while (i < value.length && value[i] !== '"') {
        if (value[i] === "\\" && i + 1 < value.length) i++;
        val += value[i];
        i++;
      }
      const rest = value.indexOf(";", i + 1);
      i = rest < 0 ? value.length : rest;
    } else {
      const end = value.indexOf(";", i);
      val = value.slice(i, end < 0 ? value.length : end).trim();
      i = end < 0 ? value.length : end;
    }
    if (TOKEN.test(name) && !(name in parameters)) parameters[name] = val;
  }
  return { essence: `${type}/${subtype}`, type, subtype, parameters };
}

describe("parseMediaType on content-type, against the parser it replaced", () => {
  const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,10}$/);
  const quoted = fc
    .string({ maxLength: 12 })
    .filter((s) => /^[\x20-\x7e]*$/.test(s))
    .map((s) => `"${s.replace(/["\\]/g, "\\$&")}"`);
  const ows = fc.constantFrom("", " ", "\t", "  ");

  it("reads every well-formed media type exactly as before (property)", () => {
    const param = fc
      .tuple(ows, token, fc.oneof(token, quoted), ows)
      .map(([a, k, v, b]) => `${a}${k}=${v}${b}`);
    fc.assert(
      fc.property(
        ows,
        token,
        token,
        ows,
        fc.array(param, { maxLength: 4 }),
        (lead, type, subtype, trail, params) => {
          const value = [`${lead}${type}/${subtype}${trail}`, ...params].join(";");
          expect(parseMediaType(value)).toEqual(previousParseMediaType(value));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("never accepts what the old parser refused, and agrees on the essence it accepts (property)", () => {
    const noise = fc.constantFrom("text", "/", "plain", " ", ";", "=", '"', "\\", "a", "X+json", ",");
    const value = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.array(noise, { maxLength: 12 }).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(value, (text) => {
        const parsed = parseMediaType(text);
        if (parsed) expect(parsed.essence).toBe(previousParseMediaType(text)?.essence);
      }),
      { numRuns: 5000 },
    );
  });

  it("is stricter where the old parser guessed", () => {
    expect(previousParseMediaType("text / plain")?.essence).toBe("text/plain");
    expect(parseMediaType("text / plain")).toBeNull();
    expect(previousParseMediaType('text/plain; charset="utf-8')?.parameters).toEqual({ charset: "utf-8" });
    expect(parseMediaType('text/plain; charset="utf-8')?.parameters).toEqual({});
  });
});
