import { describe, expect, it } from "vitest";
import { Mutex } from "../../src/internal/mutex.js";

describe("Mutex", () => {
  it("runs tasks one at a time in call order, and a failing task frees it for the next", async () => {
    const mutex = new Mutex();
    const log: string[] = [];
    const task = (name: string, ms: number, fail = false) =>
      mutex.runExclusive(async () => {
        log.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([task("a", 20), task("b", 1, true), task("c", 5)]);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  });

  it("is locked while a task runs or waits, and unlocked once all settled", async () => {
    const mutex = new Mutex();
    expect(mutex.isLocked()).toBe(false);
    let open!: () => void;
    const first = mutex.runExclusive(() => new Promise<void>((resolve) => (open = resolve)));
    const second = mutex.runExclusive(() => "second");
    expect(mutex.isLocked()).toBe(true);
    await Promise.resolve();
    open();
    await first;
    expect(await second).toBe("second");
    expect(mutex.isLocked()).toBe(false);
  });
});
