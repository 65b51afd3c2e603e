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

/** The hand-written reader the `content-disposition` package replaced, kept as the reference. */
function previousFileName(header: string): string | null {
  const params: { key: string; value: string }[] = [];
  let i = header.indexOf(";");
  while (i >= 0 && i < header.length) {
    i++;
    while (header[i] === " " || header[i] === "\t") i++;
    const eq = header.indexOf("=", i);
    if (eq < 0) break;
    const key = header.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (header[i] === " " || header[i] === "\t") i++;
    let value = "";
    if (header[i] === '"') {
      i++;
      while (i < header.length && header[i] !== '"') {
        if (header[i] === "\\" && i + 1 < header.length) i++;
        value += header[i];
        i++;
      }
      const next = header.indexOf(";", i + 1);
      i = next < 0 ? header.length : next;
    } else {
      const next = header.indexOf(";", i);
      const end = next < 0 ? header.length : next;
      value = header.slice(i, end).trim();
      i = end;
    }
    if (key) params.push({ key, value });
  }
  const ext = /^([A-Za-z0-9!#$%&+\-^_`{}~]+)'[A-Za-z0-9-]*'(.*)$/.exec(
    params.find((p) => p.key === "filename*")?.value ?? "",
  );
  if (ext && /^(?:[^%]|%[0-9A-Fa-f]{2})*$/.test(ext[2] as string)) {
    const bytes = Uint8Array.from((ext[2] as string).match(/%..|[^%]/g) ?? [], (t) =>
      t.length === 3 ? Number.parseInt(t.slice(1), 16) : t.charCodeAt(0) & 0xff,
    );
    const charset = (ext[1] as string).toLowerCase();
    let decoded: string | null = null;
    try {
      if (charset === "utf-8") decoded = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {}
    if (charset === "iso-8859-1") decoded = String.fromCharCode(...bytes);
    if (decoded) return decoded;
  }
  const plain = params.find((p) => p.key === "filename")?.value;
  return plain ? plain : null;
}

describe("Content-Disposition on the content-disposition package, against the code it replaced", () => {
  const token = fc.stringMatching(/^[A-Za-z0-9!#$&+.^_`|~-]{1,12}$/);
  const quoted = fc.string({ maxLength: 16 }).filter((s) => /^[\x20-\x7e]*$/.test(s));
  const quote = (s: string) => `"${s.replace(/["\\]/g, "\\$&")}"`;
  const name = fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" });

  it("reads every well-formed header exactly as before (property)", () => {
    const param = fc.oneof(
      fc.tuple(fc.constantFrom("filename", "FileName", "name", "size"), fc.oneof(token, quoted.map(quote))),
      fc.tuple(
        fc.constantFrom("filename*", "FILENAME*"),
        fc.oneof(
          name.map((n) => formatContentDisposition("inline", n).split("filename*=")[1] as string),
          fc.constantFrom("UTF-8''%FF", "iso-8859-1'en'%E9t%E9", "utf-8''", "UTF-8'x'%2"),
        ),
      ),
    );
    fc.assert(
      fc.property(
        fc.constantFrom("attachment", "inline", "form-data"),
        fc.array(param, { maxLength: 4 }),
        (type, params) => {
          const header = [type, ...params.map(([k, v]) => `${k}=${v}`)].join("; ");
          expect(parseContentDispositionFileName(header)).toBe(previousFileName(header));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("is stricter where the old reader guessed", () => {
    // An unterminated quoted string: the old reader returned its truncated contents.
    expect(previousFileName('attachment; filename="evil.txt')).toBe("evil.txt");
    expect(parseContentDispositionFileName('attachment; filename="evil.txt')).toBeNull();
    // An ext-value with characters RFC 8187 does not allow unencoded: fall back to filename.
    const raw = `attachment; filename="plain.txt"; filename*=UTF-8''two words.txt`;
    expect(previousFileName(raw)).toBe("two words.txt");
    expect(parseContentDispositionFileName(raw)).toBe("plain.txt");
  });

  it("writes a header that reads back as the same name, also for lone surrogates", () => {
    expect(formatContentDisposition("attachment", "a#b&c+d.txt")).toBe(
      `attachment; filename="a#b&c+d.txt"; filename*=UTF-8''a%23b%26c%2Bd.txt`,
    );
    const broken = formatContentDisposition("attachment", "x\ud800y.txt");
    expect(broken).toBe(`attachment; filename="x_y.txt"; filename*=UTF-8''x%EF%BF%BDy.txt`);
    expect(parseContentDispositionFileName(broken)).toBe("x\ufffdy.txt");
  });
});
