import fc from "fast-check";
import { describe, it } from "vitest";
import { newId } from "../../../src/internal/ids.js";
import { decodeCursor, encodeCursor, upperBound } from "../../../src/storage/kit/list-page.js";
import { codeOfSync } from "../../support/helpers.js";

describe("list page", () => {
  it("cursors round-trip every id; any other string is INVALID_CURSOR, never another error (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), (time) => {
        const id = newId(time);
        return decodeCursor(encodeCursor(id)) === id;
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (input) => {
        const code = codeOfSync(() => decodeCursor(input));
        if (code === "OK") return encodeCursor(decodeCursor(input)) === input;
        return code === "INVALID_CURSOR";
      }),
      { numRuns: 2000 },
    );
  });

  it("upperBound finds the first id greater than the given one (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 50 }), fc.string(), (values, probe) => {
        const sorted = [...values].sort();
        const at = upperBound(sorted, probe);
        return sorted.slice(0, at).every((v) => v <= probe) && sorted.slice(at).every((v) => v > probe);
      }),
    );
  });
});
