import { describe, expect, it } from "vitest";
import { memoryState } from "../../src/storage/memory-state.js";
import { runStateStoreSuite } from "../../src/testing/index.js";

runStateStoreSuite("memoryState", (now) => memoryState({ now }));

describe("memoryState", () => {
  it("validates its options with INVALID_OPTION", () => {
    for (const bad of [{ now: "yesterday" }, { sweepInterval: -1 }, { sweepInterval: "often" }]) {
      expect(() => memoryState(bad as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    }
    expect(() => memoryState(null as never)).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
  });

  it("stores null like any value but reads it as missing", async () => {
    const state = memoryState();
    await state.set("k", null);
    expect(await state.get("k")).toBeNull();
    expect(await state.setIfAbsent("k", 1)).toBe(false);
    await state.close?.();
  });
});
