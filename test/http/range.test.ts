import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRange, type RangeResult } from "../../src/http/range.js";

describe("parseRange", () => {
  it.each([
    [null, 100, { kind: "full" }],
    ["bytes=0-0", 100, { kind: "partial", start: 0, end: 0 }],
    ["bytes=0-", 100, { kind: "partial", start: 0, end: 99 }],
    ["bytes=-1", 100, { kind: "partial", start: 99, end: 99 }],
    ["bytes=-500", 100, { kind: "partial", start: 0, end: 99 }],
    ["bytes=50-1000", 100, { kind: "partial", start: 50, end: 99 }],
    ["bytes=100-", 100, { kind: "unsatisfiable" }],
    ["bytes=-0", 100, { kind: "unsatisfiable" }],
    ["bytes=0-0", 0, { kind: "unsatisfiable" }],
    ["bytes=5-1", 100, { kind: "full" }],
    ["bytes=0-1,3-4", 100, { kind: "full" }],
    ["lines=0-1", 100, { kind: "full" }],
    ["bytes=-", 100, { kind: "full" }],
    ["bytes=99999999999999999999-", 100, { kind: "full" }],
  ])("%s on %i bytes", (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it("only ever yields ranges inside the file (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.nat(10_000), (tail, size) => {
        const result = parseRange(`bytes=${tail}`, size);
        if (result.kind === "partial") {
          expect(result.start).toBeGreaterThanOrEqual(0);
          expect(result.end).toBeLessThan(size);
          expect(result.start).toBeLessThanOrEqual(result.end);
        }
      }),
    );
  });
});

/** The hand-written parser range-parser replaced, kept as the reference for equivalence. */
function previousParseRange(header: string | null | undefined, size: number): RangeResult {
  if (!header) return { kind: "full" };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return { kind: "full" };
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return { kind: "full" };
  if (first === "") {
    const suffix = Number(last);
    if (!Number.isSafeInteger(suffix)) return { kind: "full" };
    if (suffix === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "partial", start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? Number.POSITIVE_INFINITY : Number(last);
  if (!Number.isSafeInteger(start) || (last !== "" && !Number.isSafeInteger(end))) return { kind: "full" };
  if (end < start) return { kind: "full" };
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "partial", start, end: Math.min(end, size - 1) };
}

describe("parseRange on range-parser, against the parser it replaced", () => {
  const position = fc.oneof(
    fc.constant(""),
    fc.nat(20_000).map(String),
    fc.bigInt(0n, 10n ** 20n).map(String),
  );

  it("reads every well-formed single range exactly as before (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("bytes", "BYTES", "Bytes"),
        position,
        position,
        fc.nat(10_000),
        (unit, a, b, size) => {
          const header = `${unit}=${a}-${b}`;
          expect(parseRange(header, size)).toEqual(previousParseRange(header, size));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("is never more permissive: anything it does not ignore, the old parser read the same way (property)", () => {
    const noise = fc.constantFrom(" ", "\t", "=", "-", ",", "bytes", "0", "7", "12", "x", ";");
    const header = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.array(noise, { maxLength: 12 }).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(header, fc.nat(10_000), (text, size) => {
        const result = parseRange(text, size);
        if (result.kind !== "full") expect(result).toEqual(previousParseRange(text, size));
      }),
      { numRuns: 5000 },
    );
  });

  it("refuses what the old parser accepted only with stray whitespace (RFC 9110 has none there)", () => {
    expect(previousParseRange("bytes = 1 - 2", 100)).toEqual({ kind: "partial", start: 1, end: 2 });
    expect(parseRange("bytes = 1 - 2", 100)).toEqual({ kind: "full" });
    expect(parseRange("bytes=1-2", 100)).toEqual({ kind: "partial", start: 1, end: 2 });
  });
});
