import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startWatchdog, type TimeoutKind } from "../../src/http/timeouts.js";

// The upload watchdog runs idle, total and minimum-rate limits on one timer: progress only moves
// deadlines. Fake timers (and a fake `performance.now`) drive it; no wall-clock time passes.

let fired: TimeoutKind[];
const minRate = { bytesPerSecond: 100, windowMs: 1000 };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  fired = [];
});
afterEach(() => {
  vi.useRealTimers();
});

function watch(idleMs: number, totalMs: number, rate = minRate) {
  return startWatchdog({ idleMs, totalMs, minRate: rate, onTimeout: (kind) => fired.push(kind) });
}

describe("startWatchdog", () => {
  it("holds one timer for all three limits, however many chunks arrive", () => {
    const dog = watch(500, 10_000);
    expect(vi.getTimerCount()).toBe(1);
    for (let i = 0; i < 50; i++) {
      vi.advanceTimersByTime(20);
      dog.touch({ length: 10 });
      expect(vi.getTimerCount()).toBe(1);
    }
    dog.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(fired).toEqual([]);
  });

  it("fires idle after idleMs without progress, once", () => {
    const dog = watch(500, 10_000);
    vi.advanceTimersByTime(300);
    dog.touch({ length: 200 });
    vi.advanceTimersByTime(499);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(2);
    expect(fired).toEqual(["idle"]);
    vi.advanceTimersByTime(20_000);
    expect(fired).toEqual(["idle"]);
  });

  it("fires rate when a whole window brings too few bytes, and not while paused", () => {
    const dog = watch(5_000, 60_000);
    for (let i = 0; i < 9; i++) {
      vi.advanceTimersByTime(200);
      dog.touch({ length: 30 }); // 150 bytes per second: fast enough
    }
    expect(fired).toEqual([]);
    dog.pause();
    vi.advanceTimersByTime(10_000); // the server holds the transfer up: neither idle nor rate
    expect(fired).toEqual([]);
    dog.resume();
    vi.advanceTimersByTime(900);
    dog.touch({ length: 50 }); // 50 bytes in the first window after resume: too slow
    vi.advanceTimersByTime(101);
    expect(fired).toEqual(["rate"]);
  });

  it("fires total even when progress never stops; a touch without a length turns the rate check off", () => {
    const dog = watch(500, 3_000);
    dog.touch();
    for (let i = 0; i < 40; i++) {
      vi.advanceTimersByTime(100);
      dog.touch(); // no length: the rate cannot be measured, so it never fires
    }
    expect(fired).toEqual(["total"]);
  });
});
