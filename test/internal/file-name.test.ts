import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  baseName,
  MAX_NAME_LENGTH,
  MAX_RELATIVE_PATH_LENGTH,
  sanitizeFileName,
  sanitizeFileNameSteps,
  sanitizeRelativePath,
} from "../../src/internal/file-name.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: checking that control characters are gone
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069<>:"|?*]/;

describe("sanitizeFileName", () => {
  it("keeps only the last segment and strips dangerous characters", () => {
    expect(sanitizeFileName("../../etc/passwd")).toBe("passwd");
    expect(sanitizeFileName("C:\\Users\\me\\report.pdf")).toBe("report.pdf");
    expect(sanitizeFileName("a\u0000b\u202ec.txt")).toBe("abc.txt");
    expect(sanitizeFileName("..")).toBe("file");
    expect(sanitizeFileName("  .env  ")).toBe("env");
    expect(sanitizeFileName("")).toBe("file");
    expect(sanitizeFileName(42)).toBe("file");
    expect(sanitizeFileName('a<b>:"c|?*.txt')).toBe("a_b___c___.txt");
  });

  it("keeps the extension when shortening", () => {
    const name = sanitizeFileName(`${"x".repeat(500)}.pdf`);
    expect(name.length).toBe(MAX_NAME_LENGTH);
    expect(name.endsWith(".pdf")).toBe(true);
  });

  it("always yields a short, non-empty, single-segment, clean name (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 400 }), (input) => {
        const name = sanitizeFileName(input);
        expect(name.length).toBeGreaterThan(0);
        expect(name.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
        expect(name).not.toMatch(/[/\\]/);
        expect(name).not.toMatch(FORBIDDEN);
        expect(name.startsWith(".")).toBe(false);
        expect(name).not.toBe("..");
        expect(sanitizeFileName(name)).toBe(name);
      }),
      { numRuns: 400 },
    );
  });
});

describe("sanitizeFileName plain-name shortcut", () => {
  it("gives what the full steps give, for names near the plain ones (property)", () => {
    const char = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(..."aZ09_-. ") },
      { weight: 1, arbitrary: fc.constantFrom(..."/\\\t\u0000<:*\u00e9\u202e") },
    );
    const name = fc.oneof(
      fc.string({ unit: char, maxLength: 12 }),
      fc.constantFrom("con", "NUL.txt", "com1 .log", "Lpt9", "aux-1", "a".repeat(MAX_NAME_LENGTH + 1)),
      fc.string({ unit: char, minLength: MAX_NAME_LENGTH - 2, maxLength: MAX_NAME_LENGTH + 2 }),
    );
    fc.assert(
      fc.property(name, (input) => {
        expect(sanitizeFileName(input)).toBe(sanitizeFileNameSteps(input));
        if (!/[/\\]/.test(input)) expect(sanitizeRelativePath(input)).toBe(sanitizeFileNameSteps(input));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps plain names as they are, and still fixes device names", () => {
    expect(sanitizeFileName("report 2024.v2.pdf")).toBe("report 2024.v2.pdf");
    expect(sanitizeFileName("-x_")).toBe("-x_");
    expect(sanitizeFileName("nul.txt")).toBe("_nul.txt");
    expect(sanitizeRelativePath("COM1")).toBe("_COM1");
  });
});

describe("sanitizeRelativePath", () => {
  it("keeps folders and drops dot segments", () => {
    expect(sanitizeRelativePath("a/b/c.txt")).toBe("a/b/c.txt");
    expect(sanitizeRelativePath("../a/./b\\..\\c.txt")).toBe("a/b/c.txt");
    expect(sanitizeRelativePath("/abs/x")).toBe("abs/x");
    expect(sanitizeRelativePath("../..")).toBe("file");
    expect(baseName("a/b/c.txt")).toBe("c.txt");
  });

  it("never yields a path that climbs out or is absolute (property)", () => {
    const segment = fc.oneof(
      fc.constantFrom("..", ".", "", "a", " b ", "c.txt", "\u0000"),
      fc.string({ maxLength: 20 }),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 10 }), fc.constantFrom("/", "\\"), (segments, sep) => {
        const path = sanitizeRelativePath(segments.join(sep));
        expect(path.length).toBeGreaterThan(0);
        expect(path.length).toBeLessThanOrEqual(MAX_RELATIVE_PATH_LENGTH);
        expect(path.startsWith("/")).toBe(false);
        for (const part of path.split("/")) {
          expect(part).not.toBe("");
          expect(part).not.toBe(".");
          expect(part).not.toBe("..");
          expect(part).not.toMatch(FORBIDDEN);
          expect(part).not.toContain("\\");
        }
      }),
      { numRuns: 400 },
    );
  });
});
