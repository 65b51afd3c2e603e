import { describe, expect, it } from "vitest";
import { settleLimited } from "../../src/bridge/settle-limited.js";

describe("settleLimited", () => {
  it("runs at most `concurrency` tasks at once, starts them in order, and settles each in place", async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const results = await settleLimited([5, 1, 4, 2, 3, 0], 2, async (n) => {
      started.push(n);
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, n * 2));
      running--;
      if (n === 4) throw new Error("four");
      return n * 10;
    });
    expect(most).toBe(2);
    expect(started).toEqual([5, 1, 4, 2, 3, 0]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([
      50,
      10,
      "four",
      20,
      30,
      0,
    ]);
  });

  it("settles an empty list, and never starts more workers than items", async () => {
    expect(await settleLimited([], 4, async () => 1)).toEqual([]);
    let calls = 0;
    const results = await settleLimited(["a"], 8, async (s) => {
      calls++;
      return s;
    });
    expect(calls).toBe(1);
    expect(results).toEqual([{ status: "fulfilled", value: "a" }]);
  });
});
