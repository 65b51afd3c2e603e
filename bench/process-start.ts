/**
 * Process start (issue 39): an SDK v1 server process that loads `FileBridge` from the built package
 * (`dist/`, through the package's own name) against the same process without it, in paired runs
 * (one of each per round, alternating which goes first). Wall time from spawn to exit, and peak RSS.
 * Goal: at most 1.05× the wall time and +3 MiB.
 *
 *   npm run build && npx tsx bench/process-start.ts
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { fmt, here, positiveInt, report, spread } from "./_lib.js";

const run = promisify(execFile);
const ROUNDS = positiveInt("BENCH_START_ROUNDS", 30);

async function start(script: string): Promise<{ seconds: number; rssMiB: number }> {
  const started = performance.now();
  const { stdout } = await run(process.execPath, [join(here, script)], { cwd: join(here, "..") });
  return { seconds: (performance.now() - started) / 1000, rssMiB: Number(stdout.trim()) / 1024 };
}

const alone: Array<{ seconds: number; rssMiB: number }> = [];
const bridged: Array<{ seconds: number; rssMiB: number }> = [];
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
const slowdown = spread(bridged.map((b, i) => b.seconds / (alone[i] as { seconds: number }).seconds));
const rssAdded = spread(bridged.map((b, i) => b.rssMiB - (alone[i] as { rssMiB: number }).rssMiB));
console.log(`process start, SDK v1 + FileBridge vs SDK v1 alone, ${ROUNDS} paired runs (min / median / max)`);
console.log(`    wall ×${fmt(slowdown)} (goal ≤ 1.05×) · peak RSS +${fmt(rssAdded, 1)} MiB (goal ≤ +3 MiB)`);
report("process-start", [
  {
    name: "process start: SDK v1 + FileBridge",
    baseline: "SDK v1 alone",
    ratio: spread(bridged.map((b, i) => (alone[i] as { seconds: number }).seconds / b.seconds)),
    oursSeconds: spread(bridged.map((b) => b.seconds)),
    baselineSeconds: spread(alone.map((a) => a.seconds)),
    oursPeakRssMiB: spread(bridged.map((b) => b.rssMiB)).median,
    baselinePeakRssMiB: spread(alone.map((a) => a.rssMiB)).median,
    baselineSwing: spread(alone.map((a) => a.seconds)).max / spread(alone.map((a) => a.seconds)).min,
    rounds: ROUNDS,
  },
]);
