/**
 * Stopping the suite at any moment leaves nothing behind: a child vitest runs one services test
 * file (its global setup starts radosgw, ceph-mon, ceph-osd and redis-server) and is sent SIGTERM
 * while the services start, or SIGINT once the tests run; afterwards no process names the services
 * folder and the folder is gone. TMPDIR is private to each run, so what is looked for is only ours.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDirs, tempDir } from "../proxy/support.js";
import { repoRoot } from "../support/helpers.js";

const VITEST = join(repoRoot, "node_modules", "vitest", "vitest.mjs");

let root: string;

beforeAll(async () => {
  root = await tempDir("interrupted-suite-");
});

afterAll(async () => {
  await removeDirs(root);
});

/**
 * Processes whose command line names `dir` or whose working folder is in it (redis-server rewrites
 * its command line to `redis-server host:port` and works in its `--dir`).
 */
function processesNaming(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const cwd = readlinkSync(`/proc/${name}/cwd`).replace(/ \(deleted\)$/, "");
      if (cmdline.includes(dir) || cwd.startsWith(`${dir}/`)) {
        found.push(`${name} ${cmdline.replaceAll("\0", " ")} (in ${cwd})`);
      }
    } catch {
      // gone
    }
  }
  return found;
}

async function interrupted(
  tmp: string,
  signal: NodeJS.Signals,
  when: (output: string, tmp: string) => Promise<boolean>,
): Promise<{ output: string; code: number | null; signalled: boolean }> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("MFB_") && !key.startsWith("VITEST")) env[key] = value;
  }
  const child = spawn(
    process.execPath,
    [VITEST, "run", "--project", "services", "test/redis/redis-state.test.ts"],
    { cwd: repoRoot, env: { ...env, TMPDIR: tmp, CI: "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let signalled = false;
  for (let i = 0; i < 1800 && child.exitCode === null; i++) {
    if (await when(output, tmp)) {
      child.kill(signal);
      signalled = true;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const code = await exited;
  return { output, code, signalled };
}

describe("an interrupted services run", () => {
  it("SIGTERM while the services start: no daemon left, no folder", { timeout: 300_000 }, async () => {
    const tmp = join(root, "term");
    await import("node:fs/promises").then((fs) => fs.mkdir(tmp));
    // Once the Ceph folder exists, start-rgw.sh is under way (mon, osd, radosgw start one by one).
    const starting = async (_: string, dir: string) => {
      const services = (await readdir(dir)).find((name) => name.startsWith("mfb-services-"));
      return services !== undefined && processesNaming(join(dir, services)).length > 0;
    };
    const run = await interrupted(tmp, "SIGTERM", starting);
    expect(run.signalled, run.output).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(processesNaming(tmp)).toEqual([]);
    expect((await readdir(tmp)).filter((name) => name.startsWith("mfb-services-"))).toEqual([]);
  });

  it("SIGINT while the tests run: no daemon left, no folder", { timeout: 300_000 }, async () => {
    const tmp = join(root, "int");
    await import("node:fs/promises").then((fs) => fs.mkdir(tmp));
    const run = await interrupted(tmp, "SIGINT", async (output) =>
      /\[services\] radosgw .* in /.test(output),
    );
    expect(run.signalled, run.output).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(processesNaming(tmp)).toEqual([]);
    expect((await readdir(tmp)).filter((name) => name.startsWith("mfb-services-"))).toEqual([]);
  });
});
