/**
 * Runs every benchmark in bench/ in its own process (so memory figures do not mix) and prints a
 * summary; exits 1 if any bench failed. `npm run bench` runs all; `npm run bench -- registry` runs
 * those whose name contains it; `--short` (or `BENCH_SHORT=1`, `npm run bench:short`) runs every
 * bench on small sizes and few repetitions, to check that the suite works, not to quote figures.
 * Before each bench the disk writes back what the last one left (`sync`), and the benches that start
 * services run last. See bench/README.md for the harness and the knobs.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const short = args.includes("--short") || process.env.BENCH_SHORT === "1";
const filter = args.find((arg) => !arg.startsWith("--"));
/** Short mode's sizes; a knob already set in the environment wins. */
const SHORT_KNOBS: Record<string, string> = {
  BENCH_ROUNDS: "3",
  BENCH_SMALL_COUNT: "200",
  BENCH_TRANSFER_MB: "16,64",
  BENCH_SIZE_MB: "16",
  BENCH_CALLS: "100",
  BENCH_OPS: "2000",
  BENCH_LIST_FILES: "2000",
};
const env = short ? { ...SHORT_KNOBS, ...process.env } : process.env;
/**
 * Benches that start services (radosgw, redis-server) run last: those leave gigabytes for the disk to
 * write back after they end, which the next bench would otherwise pay for.
 */
const SERVICE_BENCHES = new Set(["s3-redis.ts", "tus-s3.ts"]);
const benches = readdirSync(here)
  .filter((name) => name.endsWith(".ts") && name !== "run.ts" && !name.startsWith("_"))
  .filter((name) => !filter || name.includes(filter))
  .sort((a, b) => Number(SERVICE_BENCHES.has(a)) - Number(SERVICE_BENCHES.has(b)) || a.localeCompare(b));

/** Dirty page-cache MiB waiting to be written back (`/proc/meminfo`), or `undefined` off Linux. */
function dirtyMiB(): number | undefined {
  try {
    const match = /^Dirty:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes back what the last bench left dirty (`sync`) before the next one starts, so no bench
 * measures the disk still busy with another's files.
 */
function settleDisk(): void {
  const dirty = dirtyMiB();
  const started = performance.now();
  spawnSync("sync", { stdio: "ignore" });
  if (dirty !== undefined && dirty >= 1) {
    const took = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`(disk: ${dirty.toFixed(0)} MiB written back in ${took} s before the next bench)`);
  }
}

const results: Record<string, unknown> = {};
const seconds: Record<string, number> = {};
let failed = 0;
const suiteStarted = performance.now();
for (const name of benches) {
  settleDisk();
  console.log(`\n### ${name}`);
  const started = performance.now();
  const run = spawnSync(process.execPath, ["--import", "tsx", "--expose-gc", join(here, name)], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env,
  });
  const lines = run.stdout.split("\n");
  for (const line of lines) if (!line.startsWith("BENCH_JSON ")) console.log(line);
  const json = lines.find((line) => line.startsWith("BENCH_JSON "));
  seconds[name] = Math.round((performance.now() - started) / 1000);
  console.log(`(${name}: ${seconds[name]} s, exit ${run.status})`);
  if (run.status !== 0) failed++;
  results[name] = json ? JSON.parse(json.slice("BENCH_JSON ".length)) : { exitCode: run.status };
}
console.log("\n### summary");
console.log(JSON.stringify(results, null, 2));
const total = Math.round((performance.now() - suiteStarted) / 1000);
console.log(
  `\nsuite: ${benches.length} benches in ${total} s (${JSON.stringify(seconds)}); ${failed} failed`,
);
process.exit(failed === 0 ? 0 : 1);
