/**
 * Runs every benchmark in bench/ in its own process (so memory figures do not mix) and prints a
 * summary. `npm run bench` runs all; `npm run bench -- registry` runs those whose name contains it.
 * Set BENCH_SIZE_MB to shrink the 1 GiB transfers on a small machine.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2];
const benches = readdirSync(here)
  .filter((name) => name.endsWith(".ts") && name !== "run.ts" && !name.startsWith("_"))
  .filter((name) => !filter || name.includes(filter))
  .sort();

const results: Record<string, unknown> = {};
let failed = 0;
for (const name of benches) {
  console.log(`\n### ${name}`);
  const run = spawnSync(process.execPath, ["--import", "tsx", "--expose-gc", join(here, name)], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const lines = run.stdout.split("\n");
  for (const line of lines) if (!line.startsWith("BENCH_JSON ")) console.log(line);
  const json = lines.find((line) => line.startsWith("BENCH_JSON "));
  if (run.status !== 0) failed++;
  results[name] = json ? JSON.parse(json.slice("BENCH_JSON ".length)) : { exitCode: run.status };
}
console.log("\n### summary");
console.log(JSON.stringify(results, null, 2));
process.exit(failed === 0 ? 0 : 1);
