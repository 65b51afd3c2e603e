/**
 * The benches' confidence interval for a median (`bench/_lib.ts`): the ranks it picks are the exact
 * binomial ones, it holds the true median as often as it says on samples of a known distribution
 * (a seeded generator, so the run is the same every time), and the verdict it feeds says when a
 * goal is within reach of another run.
 */
import { describe, expect, it } from "vitest";
import { medianInterval, verdict } from "../../bench/_lib.js";

/** A seeded uniform generator on [0, 1) (mulberry32). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 1..n in a shuffled order, so the interval cannot lean on the order it is given. */
function shuffled(n: number, random: () => number): number[] {
  const values = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [values[i], values[j]] = [values[j] as number, values[i] as number];
  }
  return values;
}

describe("medianInterval", () => {
  it("has no interval below 6 values, where even min and max hold the median less than 95 % of the time", () => {
    expect(medianInterval([])).toBeUndefined();
    expect(medianInterval([1, 2, 3, 4, 5])).toBeUndefined();
    // 6 values: 1 − 2 · 2⁻⁶ = 96.9 %, so min and max.
    expect(medianInterval([6, 1, 5, 2, 4, 3])).toEqual({ low: 1, high: 6 });
  });

  it("picks the exact binomial ranks: the k-th smallest and largest, whatever the order", () => {
    const random = seeded(7);
    // k for 95 %, from 2 · P(Binomial(n, ½) ≤ k − 1) ≤ 0.05: n = 8 → 1, 15 → 4, 40 → 14, 100 → 40.
    for (const [n, k] of [
      [8, 1],
      [15, 4],
      [40, 14],
      [100, 40],
    ] as const) {
      expect(medianInterval(shuffled(n, random))).toEqual({ low: k, high: n - k + 1 });
    }
    // A wider confidence takes ranks further out.
    expect(medianInterval(shuffled(40, random), 0.99)).toEqual({ low: 12, high: 29 });
  });

  it("holds the true median of a known distribution in about 95 % of samples (at least 95 %, by construction)", () => {
    const random = seeded(2026);
    for (const n of [15, 40]) {
      let held = 0;
      const trials = 4000;
      for (let t = 0; t < trials; t++) {
        // Uniform on [0, 1): the true median is 0.5.
        const interval = medianInterval(Array.from({ length: n }, random));
        if (interval && interval.low <= 0.5 && 0.5 <= interval.high) held++;
      }
      // Exact coverage: 96.5 % for n = 15, 96.2 % for n = 40; 4,000 trials put the count within ±1 %.
      expect(held / trials).toBeGreaterThan(0.95);
      expect(held / trials).toBeLessThan(0.98);
    }
  });
});

describe("verdict", () => {
  it("judges by the median and says when the interval straddles the goal", () => {
    expect(verdict(0.96, 0.95, { low: 0.97, high: 1.1 })).toBe("met");
    expect(verdict(0.96, 0.95, { low: 0.9, high: 1.0 })).toMatch(
      /^met; its 95 % interval straddles the goal$/,
    );
    expect(verdict(0.88, 0.95, { low: 0.84, high: 0.91 })).toBe("NOT met");
    expect(verdict(0.88, 0.95, undefined)).toBe("NOT met");
    // A ceiling (process start ≤ 1.05×, the proxy's ≤ +0.5 ms).
    expect(verdict(1.06, 1.05, { low: 1.04, high: 1.08 }, false)).toMatch(
      /^NOT met; its 95 % interval straddles the goal$/,
    );
    expect(verdict(1.03, 1.05, { low: 1.01, high: 1.045 }, false)).toBe("met");
  });
});
