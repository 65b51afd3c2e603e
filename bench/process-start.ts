/**
 * Process start (issue 39): an SDK v1 server process that loads `FileBridge` from the built package
 * against the same process without it, in paired runs (one of each per round, alternating which goes
 * first). Both run in a fresh project where `mcp-file-bridge` is installed as a user gets it (its
 * `package.json` and `dist/` copied into `node_modules`; the SDK and zod linked from this checkout),
 * so the import resolves through the package's `exports` exactly as a user's does.
 *
 * Per run: wall time from spawn to exit, peak RSS and busy CPU (user + system) of the child up to its
 * exit (work that runs after the script's last line, such as a deferred sweep, counts). Printed
 * as min / median / max of the per-round differences and ratios, with the machine load before and
 * after (RSS and CPU barely move with the load; wall time does). Goal: at most 1.05× the wall time
 * and +3 MiB.
 *
 *   npm run build && npx tsx bench/process-start.ts
 *
 * Knobs: `BENCH_START_ROUNDS` (default 40) paired rounds; `BENCH_START_PACKAGE=<dir>` weighs another
 * build (a folder with that build's `package.json` and `dist/`, e.g. a copy taken before a change).
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import {
  fmt,
  fmtInterval,
  here,
  loadLine,
  medianInterval,
  positiveInt,
  report,
  spread,
  verdict,
} from "./_lib.js";

const run = promisify(execFile);
const ROUNDS = positiveInt("BENCH_START_ROUNDS", 40);
const repo = join(here, "..");
const packageDir = resolve(process.env.BENCH_START_PACKAGE ?? repo);

interface Start {
  seconds: number;
  rssMiB: number;
  cpuMs: number;
}

/** A fresh project with the package installed from `packageDir`, and the two start scripts. */
async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-start-"));
  const own = join(dir, "node_modules", "mcp-file-bridge");
  await mkdir(join(dir, "node_modules", "@modelcontextprotocol"), { recursive: true });
  await cp(join(packageDir, "package.json"), join(own, "package.json"));
  await cp(join(packageDir, "dist"), join(own, "dist"), { recursive: true });
  for (const name of ["@modelcontextprotocol/sdk", "zod"]) {
    await symlink(join(repo, "node_modules", name), join(dir, "node_modules", name), "dir");
  }
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  for (const script of ["_start-sdk.mjs", "_start-bridge.mjs"]) {
    await cp(join(here, script), join(dir, script));
  }
  return dir;
}

const dir = await project();
async function start(script: string): Promise<Start> {
  const started = performance.now();
  const { stdout } = await run(process.execPath, [join(dir, script)], { cwd: dir });
  const seconds = (performance.now() - started) / 1000;
  const { maxRSS, cpu } = JSON.parse(stdout) as { maxRSS: number; cpu: number };
  return { seconds, rssMiB: maxRSS / 1024, cpuMs: cpu / 1000 };
}

try {
  console.log(`${loadLine()} (before)`);
  const alone: Start[] = [];
  const bridged: Start[] = [];
  // Warm the page cache for both.
  for (let i = 0; i < 3; i++) {
    await start("_start-sdk.mjs");
    await start("_start-bridge.mjs");
  }
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      alone.push(await start("_start-sdk.mjs"));
      bridged.push(await start("_start-bridge.mjs"));
    } else {
      bridged.push(await start("_start-bridge.mjs"));
      alone.push(await start("_start-sdk.mjs"));
    }
  }
  const pair = (f: (b: Start, a: Start) => number) => spread(bridged.map((b, i) => f(b, alone[i] as Start)));
  const slowdown = pair((b, a) => b.seconds / a.seconds);
  const slowdownInterval = medianInterval(bridged.map((b, i) => b.seconds / (alone[i] as Start).seconds));
  const rssAdded = pair((b, a) => b.rssMiB - a.rssMiB);
  const cpuAdded = pair((b, a) => b.cpuMs - a.cpuMs);
  const cpuRatio = pair((b, a) => b.cpuMs / a.cpuMs);
  console.log(
    `process start, SDK v1 + FileBridge vs SDK v1 alone, ${ROUNDS} paired runs (min / median / max), package ${packageDir}`,
  );
  console.log(
    `    wall ×${fmt(slowdown)}${fmtInterval(slowdownInterval)} (goal ≤ 1.05×: ${verdict(slowdown.median, 1.05, slowdownInterval, false)})` +
      ` · peak RSS +${fmt(rssAdded, 1)} MiB (goal ≤ +3 MiB)`,
  );
  console.log(`    busy CPU ×${fmt(cpuRatio)}, +${fmt(cpuAdded, 0)} ms`);
  console.log(
    `    SDK alone: wall ${fmt(spread(alone.map((a) => a.seconds * 1000)), 0)} ms, peak RSS ${fmt(spread(alone.map((a) => a.rssMiB)), 1)} MiB, CPU ${fmt(spread(alone.map((a) => a.cpuMs)), 0)} ms`,
  );
  console.log(
    `    with FileBridge: wall ${fmt(spread(bridged.map((b) => b.seconds * 1000)), 0)} ms, peak RSS ${fmt(spread(bridged.map((b) => b.rssMiB)), 1)} MiB, CPU ${fmt(spread(bridged.map((b) => b.cpuMs)), 0)} ms`,
  );
  report("process-start", [
    {
      name: "process start: SDK v1 + FileBridge",
      baseline: "SDK v1 alone",
      ratio: pair((b, a) => a.seconds / b.seconds),
      oursSeconds: spread(bridged.map((b) => b.seconds)),
      baselineSeconds: spread(alone.map((a) => a.seconds)),
      oursPeakRssMiB: spread(bridged.map((b) => b.rssMiB)).median,
      baselinePeakRssMiB: spread(alone.map((a) => a.rssMiB)).median,
      oursCpuSeconds: spread(bridged.map((b) => b.cpuMs / 1000)),
      baselineCpuSeconds: spread(alone.map((a) => a.cpuMs / 1000)),
      cpuRatio: pair((b, a) => a.cpuMs / b.cpuMs),
      baselineSwing: spread(alone.map((a) => a.seconds)).max / spread(alone.map((a) => a.seconds)).min,
      rounds: ROUNDS,
    },
  ]);
} finally {
  await rm(dir, { recursive: true, force: true });
}
