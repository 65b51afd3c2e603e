import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { processGone, processSpaceId } from "../../src/internal/process-space.js";
import {
  ACTIVE_CALL_DIRS,
  createCallDir,
  LEFTOVER_SWEEP_EVERY_MS,
  privateDir,
  removeDir,
  sweepCallDirs,
  sweepOnTimer,
} from "../../src/internal/temp-dir.js";

let base: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "fb-tempdir-"));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

describe("temp dirs", () => {
  it("names call folders with the process id and its space (host, boot, pid namespace)", async () => {
    const dir = await createCallDir(join(base, "t"));
    expect(processSpaceId()).toMatch(/^[0-9a-f]{8}$/);
    expect(dir).toMatch(new RegExp(`call-${process.pid}\\.${processSpaceId()}-[A-Za-z0-9]+$`));
  });

  it("calls a process gone only when signalling it says there is none (ESRCH)", () => {
    expect(processGone(process.pid)).toBe(false);
    expect(processGone(process.ppid)).toBe(false);
    // Ids kill() refuses, or that are no process id at all, are not "gone".
    for (const pid of [0, -1, 1.5, 2 ** 31, Number.NaN]) expect(processGone(pid)).toBe(false);
    expect(processGone(2 ** 22 + 12_345)).toBe(true); // above Linux's pid_max (4194304): no such process
  });

  it("removes folders of dead processes and old ones, keeps the rest", async () => {
    const now = Date.now();
    const mine = await createCallDir(base);
    const active = await createCallDir(base);
    const old = await createCallDir(base);
    await utimes(old, new Date(now - 7_200_000), new Date(now - 7_200_000));
    const dead = join(base, `call-999999.${processSpaceId()}-abc123`);
    await mkdir(dead);
    await writeFile(join(dead, "leftover.bin"), "x");
    // The same dead id seen from another container or sandbox sharing the folder: kept (its owner
    // may be alive there) until it is old; and names of no known form are never touched.
    const otherSpace = processSpaceId() === "00000000" ? "11111111" : "00000000";
    const elsewhere = join(base, `call-999999.${otherSpace}-abc123`);
    await mkdir(elsewhere);
    await mkdir(join(base, "call-999999-abc123"));
    await mkdir(join(base, "not-a-call-dir"));
    const removed = await sweepCallDirs(base, {
      olderThanMs: 3_600_000,
      now,
      active: new Set([active]),
      isGone: (pid) => pid === 999999,
    });
    expect(removed).toBe(2);
    const left = await readdir(base);
    expect(left.sort()).toEqual(
      [mine, active, elsewhere]
        .map((d) => d.slice(base.length + 1))
        .concat("call-999999-abc123", "not-a-call-dir")
        .sort(),
    );
    await utimes(elsewhere, new Date(now - 7_200_000), new Date(now - 7_200_000));
    expect(await sweepCallDirs(base, { olderThanMs: 3_600_000, now, active: new Set([active]) })).toBe(1);
    expect(await readdir(base)).not.toContain(elsewhere.slice(base.length + 1));
  });

  it("removeDir with the one file it made removes file and folder; extra or missing files fall back to rm -r", async () => {
    for (const extra of ["none", "more", "gone"] as const) {
      const dir = await createCallDir(base);
      const file = join(dir, "a.txt");
      await writeFile(file, "a");
      if (extra === "more") await writeFile(join(dir, "b.txt"), "b");
      if (extra === "gone") await rm(file);
      await removeDir(dir, file);
      expect(ACTIVE_CALL_DIRS.has(dir)).toBe(false);
      expect(await readdir(base)).toEqual([]);
    }
    // A path outside the folder is never unlinked on its strength.
    const dir = await createCallDir(base);
    const outside = join(base, "outside.txt");
    await writeFile(outside, "x");
    await removeDir(dir, outside);
    expect(await readdir(base)).toEqual(["outside.txt"]);
  });

  it("returns 0 for a missing temp dir", async () => {
    expect(
      await sweepCallDirs(join(base, "missing"), { olderThanMs: 1, now: Date.now(), active: new Set() }),
    ).toBe(0);
  });

  it("makes a missing temp dir private (0700) and tracks call folders while they exist", async () => {
    const tmp = join(base, "fresh");
    const dir = await createCallDir(tmp);
    expect((await stat(tmp)).mode & 0o777).toBe(0o700);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(ACTIVE_CALL_DIRS.has(dir)).toBe(true);
    await removeDir(dir);
    expect(ACTIVE_CALL_DIRS.has(dir)).toBe(false);
    expect(await readdir(tmp)).toEqual([]);
  });

  it.skipIf(typeof process.getuid !== "function")(
    "refuses a temp dir writable by anyone without the sticky bit; accepts it with the bit",
    async () => {
      const open = join(base, "open");
      await mkdir(open);
      await chmod(open, 0o777);
      await expect(createCallDir(open)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
      expect(await readdir(open)).toEqual([]);
      const sticky = join(base, "sticky");
      await mkdir(sticky);
      await chmod(sticky, 0o1777);
      const dir = await createCallDir(sticky);
      await removeDir(dir);
    },
  );

  it.skipIf(process.getuid?.() !== 0)("refuses a temp dir owned by another user (run as root)", async () => {
    const foreign = join(base, "foreign");
    await mkdir(foreign, { mode: 0o755 });
    await chown(foreign, 12345, 12345);
    await expect(createCallDir(foreign)).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    expect(await readdir(foreign)).toEqual([]);
  });

  it("runs the registered leftover sweeps every ten minutes, one per key", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const runs: string[] = [];
      sweepOnTimer("test:a", async () => void runs.push("first"));
      sweepOnTimer("test:a", async () => void runs.push("a")); // replaces the first
      sweepOnTimer("test:b", async () => {
        runs.push("b");
        throw new Error("a failing sweep is ignored");
      });
      await vi.advanceTimersByTimeAsync(LEFTOVER_SWEEP_EVERY_MS - 1);
      expect(runs).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(runs).toEqual(["a", "b"]);
      await vi.advanceTimersByTimeAsync(LEFTOVER_SWEEP_EVERY_MS);
      expect(runs).toEqual(["a", "b", "a", "b"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it.skipIf(typeof process.getuid !== "function")(
    "privateDir makes a missing folder (and its parents) 0700, and refuses one open to others",
    async () => {
      const dir = join(base, "a", "b");
      expect(await privateDir(dir, { what: "the test folder", option: "dir" })).toBe(dir);
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect((await stat(join(base, "a"))).mode & 0o777).toBe(0o700);
      await chmod(dir, 0o750);
      const error = await privateDir(dir, { what: "the test folder", option: "dir" }).catch((e) => e);
      expect(error).toMatchObject({ code: "STORAGE_ERROR", data: { option: "dir" } });
      // The message names the role and the option, never the path (the path is in `cause`).
      expect(error.message).not.toContain(base);
      expect(String(error.cause)).toContain(dir);
    },
  );
});
