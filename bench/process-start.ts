/**
 * Process start (issue 39): an SDK v1 server process that loads `FileBridge` from the built package
 * and registers a file tool, twice (`FileBridge` imported from the root, and from `/bridge`, which
 * loads only its closure), against two processes without it, in rounds of one run of each
 * (alternating the order): the SDK alone (a server and the stdio transport loaded, no tool), and
 * the same server without FileBridge (the same tool with a plain string argument, the baseline of
 * the bundle budget in test/package/weigh.ts: what FileBridge adds, not what a tool costs). All run
 * in a fresh project where `mcp-file-bridge` is installed as a user gets it (its
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
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
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
  for (const script of ["_start-sdk.mjs", "_start-tool.mjs", "_start-bridge.mjs"]) {
    await cp(join(here, script), join(dir, script));
  }
  // The same server, `FileBridge` imported from `/bridge`.
  const rootImport = 'import { FileBridge } from "mcp-file-bridge";';
  const server = await readFile(join(here, "_start-bridge.mjs"), "utf8");
  if (!server.includes(rootImport)) throw new Error(`_start-bridge.mjs has no line ${rootImport}`);
  await writeFile(
    join(dir, "_start-bridge-entry.mjs"),
    server.replace(rootImport, 'import { FileBridge } from "mcp-file-bridge/bridge";'),
  );
  return dir;
}

type Script = "_start-sdk.mjs" | "_start-tool.mjs" | "_start-bridge.mjs" | "_start-bridge-entry.mjs";
/** The servers with FileBridge: the same server, `FileBridge` imported from the root or from `/bridge`. */
const SERVERS: ReadonlyArray<{ script: Script; name: string }> = [
  { script: "_start-bridge.mjs", name: 'from "mcp-file-bridge"' },
  { script: "_start-bridge-entry.mjs", name: 'from "mcp-file-bridge/bridge"' },
];
/** What the server with FileBridge is weighed against. */
const BASELINES: ReadonlyArray<{ script: Script; name: string }> = [
  { script: "_start-sdk.mjs", name: "SDK v1 alone" },
  { script: "_start-tool.mjs", name: "the same server without FileBridge (the tool, a string argument)" },
];

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
  const runs: Record<Script, Start[]> = {
    "_start-sdk.mjs": [],
    "_start-tool.mjs": [],
    "_start-bridge.mjs": [],
    "_start-bridge-entry.mjs": [],
  };
  const scripts = Object.keys(runs) as Script[];
  // Warm the page cache for each.
  for (let i = 0; i < 3; i++) for (const script of scripts) await start(script);
  for (let round = 0; round < ROUNDS; round++) {
    for (const script of round % 2 === 0 ? scripts : [...scripts].reverse())
      runs[script].push(await start(script));
  }
  console.log(
    `process start, SDK v1 + FileBridge, ${ROUNDS} rounds (min / median / max), package ${packageDir}`,
  );
  const rows = SERVERS.flatMap(({ script: ours, name: oursName }) => {
    const bridged = runs[ours];
    console.log(`  FileBridge ${oursName}:`);
    const compared = BASELINES.map(({ script, name }) => {
      const base = runs[script];
      const pair = (f: (b: Start, a: Start) => number) =>
        spread(bridged.map((b, i) => f(b, base[i] as Start)));
      const slowdown = pair((b, a) => b.seconds / a.seconds);
      const slowdownInterval = medianInterval(bridged.map((b, i) => b.seconds / (base[i] as Start).seconds));
      console.log(`    vs ${name}:`);
      console.log(
        `      wall ×${fmt(slowdown)}${fmtInterval(slowdownInterval)} (goal ≤ 1.05×: ${verdict(slowdown.median, 1.05, slowdownInterval, false)})` +
          ` · peak RSS +${fmt(
            pair((b, a) => b.rssMiB - a.rssMiB),
            1,
          )} MiB (goal ≤ +3 MiB)`,
      );
      console.log(
        `      busy CPU ×${fmt(pair((b, a) => b.cpuMs / a.cpuMs))}, +${fmt(
          pair((b, a) => b.cpuMs - a.cpuMs),
          0,
        )} ms`,
      );
      return {
        name: `process start: SDK v1 + FileBridge ${oursName}`,
        baseline: name,
        ratio: pair((b, a) => a.seconds / b.seconds),
        oursSeconds: spread(bridged.map((b) => b.seconds)),
        baselineSeconds: spread(base.map((a) => a.seconds)),
        oursPeakRssMiB: spread(bridged.map((b) => b.rssMiB)).median,
        baselinePeakRssMiB: spread(base.map((a) => a.rssMiB)).median,
        oursCpuSeconds: spread(bridged.map((b) => b.cpuMs / 1000)),
        baselineCpuSeconds: spread(base.map((a) => a.cpuMs / 1000)),
        cpuRatio: pair((b, a) => a.cpuMs / b.cpuMs),
        baselineSwing: spread(base.map((a) => a.seconds)).max / spread(base.map((a) => a.seconds)).min,
        rounds: ROUNDS,
      };
    });
    console.log(
      `    the server: wall ${fmt(spread(bridged.map((b) => b.seconds * 1000)), 0)} ms, peak RSS ${fmt(spread(bridged.map((b) => b.rssMiB)), 1)} MiB, CPU ${fmt(spread(bridged.map((b) => b.cpuMs)), 0)} ms`,
    );
    return compared;
  });
  for (const { script, name } of BASELINES) {
    const base = runs[script];
    console.log(
      `  ${name}: wall ${fmt(spread(base.map((a) => a.seconds * 1000)), 0)} ms, peak RSS ${fmt(spread(base.map((a) => a.rssMiB)), 1)} MiB, CPU ${fmt(spread(base.map((a) => a.cpuMs)), 0)} ms`,
    );
  }
  report("process-start", rows, { rounds: ROUNDS });
} finally {
  await rm(dir, { recursive: true, force: true });
}
