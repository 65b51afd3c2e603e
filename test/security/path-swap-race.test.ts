import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, open, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPathInside } from "../../src/bridge/sources/path-containment.js";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import { openContainedFile } from "../../src/internal/safe-open.js";

// Attack: a local user with write access to an allowed folder swaps a path between a real file and a
// symlink to a secret outside, as fast as it can, while the server reads. A check-then-open reader
// leaks the secret; a reader that opens once and checks the descriptor must never return it.

const SWAPPER = `
const fs = require("node:fs");
const [mode, root, outside, seconds] = process.argv.slice(1);
const until = Date.now() + Number(seconds) * 1000;
let n = 0;
while (Date.now() < until) {
  n++;
  try {
    if (mode === "leaf") {
      const link = root + "/.l" + n, file = root + "/.f" + n;
      fs.symlinkSync(outside + "/secret.txt", link);
      fs.renameSync(link, root + "/target.txt");
      fs.writeFileSync(file, "INSIDE");
      fs.renameSync(file, root + "/target.txt");
    } else {
      const link = root + "/.l" + n, dir = root + "/.d" + n;
      fs.symlinkSync(outside, link);
      fs.rmSync(root + "/dir", { recursive: true, force: true, maxRetries: 3 });
      fs.renameSync(link, root + "/dir");
      fs.mkdirSync(dir); fs.writeFileSync(dir + "/secret.txt", "INSIDE");
      fs.rmSync(root + "/dir", { force: true });
      fs.renameSync(dir, root + "/dir");
    }
  } catch {}
  if (n === 1) process.stdout.write("swapping");
}
`;

async function readVia(handleOpen: () => Promise<string>): Promise<string | "refused"> {
  try {
    return await handleOpen();
  } catch (error) {
    if (error instanceof FileBridgeError || (error as NodeJS.ErrnoException).code) return "refused";
    throw error;
  }
}

describe.skipIf(process.platform === "win32")("attack: symlink swapped between check and open", () => {
  let base: string;
  let root: string;
  let outside: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "swap-race-")));
    root = join(base, "root");
    outside = join(base, "outside");
    await mkdir(root);
    await mkdir(outside);
    await writeFile(join(outside, "secret.txt"), "SECRET");
    await writeFile(join(root, "target.txt"), "INSIDE");
    await mkdir(join(root, "dir"));
    await writeFile(join(root, "dir", "secret.txt"), "INSIDE");
  });

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await rm(base, { recursive: true, force: true, maxRetries: 3 });
  });

  const allowed = (path: string) => isPathInside(path, root);

  /** Starts the swapping child and resolves once it has swapped once (a loaded machine starts it late). */
  async function swapper(mode: "leaf" | "dir", seconds: number): Promise<ChildProcess> {
    const child = spawn(process.execPath, ["-e", SWAPPER, mode, root, outside, String(seconds)], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once("data", () => resolve());
      child.once("exit", (code) => reject(new Error(`the swapper exited (${code}) before it swapped`)));
    });
    return child;
  }

  /** A naive check-then-open reader (what the library must not do): realpath, check, then read by path. */
  async function naive(path: string): Promise<string> {
    const real = await realpath(path);
    if (!allowed(real)) throw new FileBridgeError("PATH_NOT_ALLOWED", "outside");
    await new Promise((r) => setImmediate(r));
    return readFile(path, "utf8");
  }

  async function safe(path: string): Promise<string> {
    const file = await openContainedFile(path, allowed);
    try {
      return (await file.handle.readFile("utf8")) as string;
    } finally {
      await file.handle.close();
    }
  }

  for (const mode of ["leaf", "dir"] as const) {
    const target = () => (mode === "leaf" ? join(root, "target.txt") : join(root, "dir", "secret.txt"));

    it(`the race is real: a check-then-open reader leaks (${mode} swap)`, async () => {
      // Bounded in time, stops at the first leak: a few reads on an idle machine, longer under load.
      const child = await swapper(mode, 20);
      let leaks = 0;
      const until = Date.now() + 15_000;
      while (leaks === 0 && Date.now() < until) {
        if ((await readVia(() => naive(target()))) === "SECRET") leaks++;
      }
      child.kill("SIGKILL");
      expect(leaks).toBeGreaterThan(0);
    }, 30_000);

    it(`openContainedFile never returns the secret (${mode} swap, 20,000 reads or 8 s)`, async () => {
      const child = await swapper(mode, 10);
      const seen = { INSIDE: 0, SECRET: 0, refused: 0 } as Record<string, number>;
      const until = Date.now() + 8000;
      for (let i = 0; i < 20_000 && Date.now() < until; i++) {
        const got = await readVia(() => safe(target()));
        seen[got] = (seen[got] ?? 0) + 1;
      }
      child.kill("SIGKILL");
      expect(seen.SECRET).toBe(0);
      expect(seen.INSIDE).toBeGreaterThan(0); // it did read through the race, not refuse everything
    }, 30_000);
  }

  it("FileBridge.resolve() of a path under the same attack hands the handler only inside bytes", async () => {
    const { FileBridge } = await import("../../src/bridge/file-bridge.js");
    const tmp = join(base, "tmp");
    await mkdir(tmp, { recursive: true });
    const bridge = new FileBridge({ roots: [root], tmpDir: tmp });
    const child = await swapper("dir", 10);
    const seen: Record<string, number> = {};
    // Bounded in time (8 s); stops early once it has read through the race for a while. Refusals
    // (the swap caught) are fast, so an iteration cap alone could end before any inside read.
    const started = Date.now();
    for (;;) {
      const elapsed = Date.now() - started;
      if (elapsed > 8000 || (elapsed > 1500 && (seen.INSIDE ?? 0) >= 50)) break;
      try {
        const file = await bridge.resolve(join(root, "dir", "secret.txt"), { scope: "s" });
        const bytes = await readFile(file.path, "utf8");
        seen[bytes] = (seen[bytes] ?? 0) + 1;
        // The copy is what was hashed: a swap after the call cannot change what the handler reads.
        expect(file.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
        await file.dispose();
      } catch (error) {
        if (!(error instanceof FileBridgeError)) throw error;
        seen[error.code] = (seen[error.code] ?? 0) + 1;
      }
    }
    child.kill("SIGKILL");
    expect(seen.SECRET ?? 0).toBe(0);
    expect(seen.INSIDE).toBeGreaterThan(0);
  }, 30_000);

  it("refuses a symlink at the last component that points outside, and a FIFO", async () => {
    const { symlink } = await import("node:fs/promises");
    await symlink(join(outside, "secret.txt"), join(root, "plain-link.txt"));
    await expect(openContainedFile(join(root, "plain-link.txt"), allowed)).rejects.toMatchObject({
      code: "PATH_NOT_ALLOWED",
    });
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [join(root, "pipe")]);
    await expect(openContainedFile(join(root, "pipe"), allowed)).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(openContainedFile(join(root, "missing.txt"), allowed)).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    const ok = await openContainedFile(join(root, "dir"), allowed).catch((e: FileBridgeError) => e.code);
    expect(["INVALID_INPUT", "NOT_FOUND", "PATH_NOT_ALLOWED"]).toContain(ok);
    const handle = await open(join(root, "target.txt"), "r");
    await handle.close();
  });
});
