import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRange } from "../../src/http/range.js";

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
