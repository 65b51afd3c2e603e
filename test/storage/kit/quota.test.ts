import { describe, expect, it } from "vitest";
import { checkScopeQuota, KeyedLock, quotaExceeded, quotaViolation } from "../../../src/storage/kit/index.js";

describe("checkScopeQuota", () => {
  it("returns a frozen copy of the limits that are set, or undefined when none is", () => {
    const quota = checkScopeQuota({ maxBytesPerScope: 10, maxFilesPerScope: 0 });
    expect(quota).toEqual({ maxBytesPerScope: 10, maxFilesPerScope: 0 });
    expect(Object.isFrozen(quota)).toBe(true);
    expect(checkScopeQuota(undefined)).toBeUndefined();
    expect(checkScopeQuota({})).toBeUndefined();
  });

  it("names the bad field with INVALID_OPTION", () => {
    for (const [input, option] of [
      [null, "q"],
      [[], "q"],
      [5, "q"],
      [{ maxBytesPerScope: -1 }, "q.maxBytesPerScope"],
      [{ maxBytesPerScope: 1.5 }, "q.maxBytesPerScope"],
      [{ maxFilesPerScope: "3" }, "q.maxFilesPerScope"],
      [{ maxFilesPerScope: Number.POSITIVE_INFINITY }, "q.maxFilesPerScope"],
    ] as const) {
      expect(() => checkScopeQuota(input, "q")).toThrowError(
        expect.objectContaining({ code: "INVALID_OPTION", data: { option } }),
      );
    }
  });
});

describe("quotaViolation", () => {
  it("checks the file count first, then the bytes, with exactly-at-the-limit allowed", () => {
    const quota = { maxBytesPerScope: 100, maxFilesPerScope: 2 };
    expect(quotaViolation(quota, { bytes: 60, files: 1 }, 40)).toBeNull();
    expect(quotaViolation(quota, { bytes: 60, files: 1 }, 41)).toMatchObject({
      code: "QUOTA_EXCEEDED",
      status: 413,
      data: { quota: "bytes", limit: 100 },
    });
    expect(quotaViolation(quota, { bytes: 0, files: 2 }, 0)).toMatchObject({
      data: { quota: "files", limit: 2 },
    });
    expect(quotaViolation(undefined, { bytes: 1e12, files: 1e9 }, 1e12)).toBeNull();
    expect(quotaExceeded("files", 7).data).toEqual({ quota: "files", limit: 7 });
  });
});

describe("KeyedLock", () => {
  it("runs the tasks of one key one at a time, in order, and other keys alongside", async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const task = (key: string, i: number) =>
      lock.run(key, async () => {
        running++;
        most = Math.max(most, running);
        log.push(`${key}${i}+`);
        await new Promise((resolve) => setTimeout(resolve, 2));
        log.push(`${key}${i}-`);
        running--;
        return i;
      });
    const results = await Promise.all([task("a", 1), task("a", 2), task("b", 1), task("a", 3)]);
    expect(results).toEqual([1, 2, 1, 3]);
    const a = log.filter((entry) => entry.startsWith("a"));
    expect(a).toEqual(["a1+", "a1-", "a2+", "a2-", "a3+", "a3-"]);
    expect(most).toBe(2); // "b" ran beside "a"
    expect(lock.size).toBe(0); // nothing is kept once idle
  });

  it("a failing task passes its error on and does not block the next one", async () => {
    const lock = new KeyedLock();
    const failing = lock.run("k", async () => {
      throw new Error("boom");
    });
    const next = lock.run("k", async () => "ok");
    await expect(failing).rejects.toThrow("boom");
    expect(await next).toBe("ok");
    expect(lock.size).toBe(0);
  });
});
