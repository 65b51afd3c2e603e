import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCallDir, isProcessAlive, sweepCallDirs } from "../../src/internal/temp-dir.js";

let base: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "fb-tempdir-"));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("temp dirs", () => {
  it("names call folders with the process id", async () => {
    const dir = await createCallDir(join(base, "t"));
    expect(dir).toMatch(new RegExp(`call-${process.pid}-[A-Za-z0-9]+$`));
  });

  it("knows whether a process is alive", () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(0)).toBe(false);
    expect(isProcessAlive(2 ** 30)).toBe(false);
  });

  it("removes folders of dead processes and old ones, keeps the rest", async () => {
    const now = Date.now();
    const mine = await createCallDir(base);
    const active = await createCallDir(base);
    const old = await createCallDir(base);
    await utimes(old, new Date(now - 7_200_000), new Date(now - 7_200_000));
    const dead = join(base, "call-999999-abc123");
    await mkdir(dead);
    await writeFile(join(dead, "leftover.bin"), "x");
    await mkdir(join(base, "not-a-call-dir"));
    const removed = await sweepCallDirs(base, {
      olderThanMs: 3_600_000,
      now,
      active: new Set([active]),
      isAlive: (pid) => pid !== 999999,
    });
    expect(removed).toBe(2);
    const left = await readdir(base);
    expect(left.sort()).toEqual(
      [mine, active]
        .map((d) => d.slice(base.length + 1))
        .concat("not-a-call-dir")
        .sort(),
    );
  });

  it("returns 0 for a missing temp dir", async () => {
    expect(
      await sweepCallDirs(join(base, "missing"), { olderThanMs: 1, now: Date.now(), active: new Set() }),
    ).toBe(0);
  });
});
