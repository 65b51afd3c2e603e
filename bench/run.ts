/**
 * Runs every benchmark in bench/ in its own process (so memory figures do not mix) and prints a
 * summary; exits 1 if any bench failed. `npm run bench` runs all; `npm run bench -- registry` runs
 * those whose name contains it; `--short` (or `BENCH_SHORT=1`, `npm run bench:short`) runs every
 * bench on small sizes and few repetitions, to check that the suite works, not to quote figures.
 * See bench/README.md for the harness and the knobs.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
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
const benches = readdirSync(here)
  .filter((name) => name.endsWith(".ts") && name !== "run.ts" && !name.startsWith("_"))
  .filter((name) => !filter || name.includes(filter))
  .sort();

const results: Record<string, unknown> = {};
const seconds: Record<string, number> = {};
let failed = 0;
const suiteStarted = performance.now();
for (const name of benches) {
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
