import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StateStore } from "../storage/types.js";
import { codeOf, type MakeStateStore, makeClock, type TestClock } from "./support.js";

/**
 * The shared {@link StateStore} conformance suite. Every driver runs it in a Vitest test file.
 *
 * @example
 * ```ts
 * import { runStateStoreSuite } from "mcp-file-bridge/testing";
 * runStateStoreSuite("myState", (now) => myState({ now }));
 * ```
 */
export function runStateStoreSuite(label: string, makeState: MakeStateStore): void {
  describe(`StateStore conformance: ${label}`, () => {
    let state: StateStore;
    let clock: TestClock;

    beforeEach(async () => {
      clock = makeClock();
      state = await makeState(clock.now);
    });

    afterEach(async () => {
      await state.close?.();
    });

    it("get / set / delete", async () => {
      expect(await state.get("k")).toBeNull();
      await state.set("k", { a: 1, list: [1, "two", null], nested: { ok: true } });
      expect(await state.get("k")).toEqual({ a: 1, list: [1, "two", null], nested: { ok: true } });
      await state.set("k", "replaced");
      expect(await state.get("k")).toBe("replaced");
      await state.set("n", 0);
      expect(await state.get("n")).toBe(0);
      await state.set("f", false);
      expect(await state.get("f")).toBe(false);
      expect(await state.delete("k")).toBe(true);
      expect(await state.delete("k")).toBe(false);
      expect(await state.get("k")).toBeNull();
    });

    it("values are deep copies on the way in and out", async () => {
      const value = { inner: { count: 1 }, list: [1] };
      await state.set("k", value);
      value.inner.count = 99;
      value.list.push(2);
      const read = await state.get<typeof value>("k");
      expect(read).toEqual({ inner: { count: 1 }, list: [1] });
      read!.inner.count = 42;
      expect(await state.get("k")).toEqual({ inner: { count: 1 }, list: [1] });
    });

    it("ttl: expired keys are missing, and free for setIfAbsent", async () => {
      await state.set("k", "v", { ttl: 10 });
      await state.set("forever", "v");
      clock.advance(9_999);
      expect(await state.get("k")).toBe("v");
      clock.advance(1);
      expect(await state.get("k")).toBeNull();
      expect(await state.delete("k")).toBe(false);
      await state.set("k2", "v", { ttl: "1m" });
      clock.advance(60_000);
      expect(await state.setIfAbsent("k2", "new")).toBe(true);
      expect(await state.get("k2")).toBe("new");
      clock.advance(365 * 86_400_000);
      expect(await state.get("forever")).toBe("v");
    });

    it("set replaces the ttl", async () => {
      await state.set("k", 1, { ttl: 1 });
      await state.set("k", 2);
      clock.advance(5_000);
      expect(await state.get("k")).toBe(2);
    });

    it("setIfAbsent sets once", async () => {
      expect(await state.setIfAbsent("nonce", { by: "first" }, { ttl: "5m" })).toBe(true);
      expect(await state.setIfAbsent("nonce", { by: "second" })).toBe(false);
      expect(await state.get("nonce")).toEqual({ by: "first" });
    });

    it("setIfAbsent is atomic: 100 concurrent calls, exactly one wins", async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 100 }, (_, i) => state.setIfAbsent("ticket", { winner: i })),
      );
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const winner = outcomes.indexOf(true);
      expect(await state.get("ticket")).toEqual({ winner });
    });

    it("refuses values that are not JSON with INVALID_INPUT, keeping the old value", async () => {
      await state.set("k", "old");
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      for (const bad of [undefined, () => 1, 10n, circular, Symbol("s")]) {
        expect(await codeOf(state.set("k", bad))).toBe("INVALID_INPUT");
        expect(await codeOf(state.setIfAbsent("absent", bad))).toBe("INVALID_INPUT");
      }
      expect(await state.get("k")).toBe("old");
      expect(await state.get("absent")).toBeNull();
    });

    it("refuses bad keys with INVALID_INPUT and bad ttls with INVALID_OPTION", async () => {
      for (const key of ["", 42, null, "x".repeat(2000)]) {
        expect(await codeOf(state.get(key as never))).toBe("INVALID_INPUT");
        expect(await codeOf(state.set(key as never, 1))).toBe("INVALID_INPUT");
        expect(await codeOf(state.setIfAbsent(key as never, 1))).toBe("INVALID_INPUT");
        expect(await codeOf(state.delete(key as never))).toBe("INVALID_INPUT");
      }
      expect(await codeOf(state.set("k", 1, { ttl: -1 }))).toBe("INVALID_OPTION");
      expect(await codeOf(state.setIfAbsent("k", 1, { ttl: "forever" as never }))).toBe("INVALID_OPTION");
      expect(await state.get("k")).toBeNull();
    });

    it("keys are exact strings", async () => {
      await state.set("a:b", 1);
      await state.set("A:B", 2);
      await state.set("a:b ", 3);
      expect([await state.get("a:b"), await state.get("A:B"), await state.get("a:b ")]).toEqual([1, 2, 3]);
    });
  });
}
