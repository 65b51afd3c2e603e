import { describe, expect, it } from "vitest";
import { isId, newId } from "../../src/internal/ids.js";

describe("newId", () => {
  it("makes ids of the documented shape", () => {
    const id = newId();
    expect(id).toHaveLength(26);
    expect(isId(id)).toBe(true);
    expect(isId("../etc/passwd")).toBe(false);
    expect(isId(id.toUpperCase())).toBe(false);
  });

  it("is strictly increasing within one millisecond and when the clock steps back", () => {
    const fixed = 1_760_000_000_000;
    const ids = [
      ...Array.from({ length: 500 }, () => newId(fixed)),
      ...Array.from({ length: 10 }, () => newId(fixed - 5_000)),
    ];
    const sorted = [...ids].sort();
    expect(ids).toEqual(sorted);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sorts later times after earlier ones", () => {
    const a = newId(2_000_000_000_000);
    const b = newId(2_000_000_000_001);
    expect(a < b).toBe(true);
  });
});
