import fc from "fast-check";
import { describe, it } from "vitest";
import { resolveRange } from "../../../src/storage/kit/byte-range.js";
import { codeOfSync } from "../../support/helpers.js";

describe("byte range", () => {
  it("ranges are inside the file or RANGE_NOT_SATISFIABLE (property)", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 1000 }),
        fc.integer({ min: -5, max: 1200 }),
        fc.option(fc.integer({ min: -5, max: 1200 }), { nil: undefined }),
        (size, start, end) => {
          const range = end === undefined ? { start } : { start, end };
          const code = codeOfSync(() => resolveRange(range, size));
          const valid = start >= 0 && start < size && (end === undefined || end >= start);
          if (!valid) return code === "RANGE_NOT_SATISFIABLE";
          const resolved = resolveRange(range, size)!;
          return resolved.start === start && resolved.end === Math.min(end ?? size - 1, size - 1);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
