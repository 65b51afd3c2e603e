import { describe, expect, it } from "vitest";
import { firstUse } from "../../src/internal/first-use.js";

describe("firstUse: code loaded on its first use (issue 39)", () => {
  it("loads once for callers that ask at the same time and after", async () => {
    let loads = 0;
    const load = firstUse(async () => {
      loads += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { loaded: loads };
    });
    const [a, b, c] = await Promise.all([load(), load(), load()]);
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(await load()).toBe(a);
    expect(loads).toBe(1);
  });

  it("does not load before the first call", () => {
    let loads = 0;
    firstUse(async () => {
      loads += 1;
    });
    expect(loads).toBe(0);
  });

  it("fails every caller of a failed load with its error, and the next call loads again", async () => {
    let loads = 0;
    const failure = Object.assign(new Error("the module could not be loaded"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    const load = firstUse(async () => {
      loads += 1;
      if (loads === 1) throw failure;
      return "second";
    });
    const results = await Promise.allSettled([load(), load()]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(results.map((result) => (result as PromiseRejectedResult).reason)).toEqual([failure, failure]);
    expect(loads).toBe(1);
    await expect(load()).resolves.toBe("second");
    expect(loads).toBe(2);
  });
});
