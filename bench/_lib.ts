/**
 * What every bench shares: alternating rounds of "ours" against a named baseline measured in the same
 * run, ratios reported as min / median / max, the machine load printed with the figures, exact peak
 * RSS from `/proc/<pid>/status` (VmHWM, reset between rounds through `/proc/<pid>/clear_refs`), and
 * helpers that run a server or a client in a process of its own.
 *
 * Knobs: `BENCH_ROUNDS` (default 5) rounds per row; benches whose rounds are short ask for more
 * through {@link roundsAtLeast}.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const here = dirname(fileURLToPath(import.meta.url));
export const MiB = 1024 * 1024;
export const KiB = 1024;
/** The signing secret the bench server and client share (the client mints upload tickets). */
export const BENCH_SECRET = "bench-secret-bench-secret-bench-secret-0123";

/**
 * Rounds per row (`BENCH_ROUNDS`, default 5): the median of three rounds moved with one disturbed
 * round on the shared machine.
 */
export const ROUNDS = positiveInt("BENCH_ROUNDS", 5);

/** `BENCH_VERBOSE=1`: print every round of every row as it ends (seconds and the server's CPU). */
const VERBOSE = process.env.BENCH_VERBOSE === "1";

/** `n` rounds for a bench whose rounds take under a second, unless `BENCH_ROUNDS` says otherwise. */
export function roundsAtLeast(n: number): number {
  return process.env.BENCH_ROUNDS ? ROUNDS : Math.max(n, ROUNDS);
}

/** A positive integer from the environment, or `fallback`. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** Min, median and max of some numbers. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number };
}

/** A range of values, lowest first. */
export interface Interval {
  low: number;
  high: number;
}

/**
 * A distribution-free confidence interval for the median of `values` (default 95 %): the k-th
 * smallest and the k-th largest value, k the largest rank for which the chance that the true median
 * lies outside them, 2 · P(Binomial(n, ½) < k), is at most 1 − `confidence`. It assumes nothing about
 * how round times are distributed, only that rounds are independent. `undefined` below 6 values,
 * where even the smallest and largest do not reach 95 %. A row whose interval straddles its goal can
 * read either way in another run: the median alone does not settle it.
 *
 * @example
 * ```ts
 * medianInterval([0.81, 0.9, 0.77, 0.95, 0.88, 0.86, 0.92, 0.84]); // { low: 0.77, high: 0.95 }
 * ```
 */
export function medianInterval(values: readonly number[], confidence = 0.95): Interval | undefined {
  const n = values.length;
  const tail = (1 - confidence) / 2;
  // P(B ≤ j) for B ~ Binomial(n, ½), its terms built in log space (2^-n underflows past n ≈ 1,070).
  let logTerm = -n * Math.LN2;
  let below = 0;
  let k = 0;
  for (let j = 0; j < n; j++) {
    below += Math.exp(logTerm);
    if (below > tail) break;
    k = j + 1;
    logTerm += Math.log((n - j) / (j + 1));
  }
  if (k < 1) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return { low: sorted[k - 1] as number, high: sorted[n - k] as number };
}

/**
 * The verdict on a goal from a median and its {@link medianInterval}: `met` / `NOT met` by the
 * median (what the issues' goals are stated on), and when the interval straddles the goal, that
 * another run may read the other way. `atLeast`: the goal is a floor (ratios); else a ceiling.
 */
export function verdict(
  median: number,
  goal: number,
  interval: Interval | undefined,
  atLeast = true,
): string {
  const met = atLeast ? median >= goal : median <= goal;
  const straddles = interval !== undefined && interval.low < goal && goal < interval.high;
  return `${met ? "met" : "NOT met"}${straddles ? "; its 95 % interval straddles the goal" : ""}`;
}

/** "95 % interval of the median low–high" with `digits` decimals, or "" when there is none. */
export function fmtInterval(interval: Interval | undefined, digits = 2): string {
  return interval
    ? `; median's 95 % interval ${interval.low.toFixed(digits)}–${interval.high.toFixed(digits)}`
    : "";
}

/** "min / median / max" with `digits` decimals. */
export function fmt(s: Spread, digits = 2): string {
  return `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;
}

/**
 * The machine load, printed before and after each bench, with the memory the page cache can use
 * (files in tmpfs, `/dev/shm`, count as shared memory: 6.5 GiB of them left there made the 1 GiB
 * upload rounds of both sides up to twice as slow, and unsteady; docs/performance.md, Session 12) and
 * the peers' Node options.
 */
export function loadLine(): string {
  const [one, five, fifteen] = loadavg().map((n) => n.toFixed(2));
  const peers = PEER_NODE_ARGS.length > 0 ? PEER_NODE_ARGS.join(" ") : "no options";
  return `load average ${one} ${five} ${fifteen} on ${cpus().length} cpus${memoryPart()} · node ${process.version} (peers: ${peers})`;
}

/** `· memory available A of T GiB, tmpfs and shared S GiB` from /proc/meminfo; empty where it is missing. */
function memoryPart(): string {
  let text: string;
  try {
    text = readFileSync("/proc/meminfo", "utf8");
  } catch {
    return "";
  }
  const gib = (field: string) => {
    const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1]);
    return Number.isFinite(kib) ? (kib / 1024 ** 2).toFixed(1) : "?";
  };
  return ` · memory available ${gib("MemAvailable")} of ${gib("MemTotal")} GiB, tmpfs and shared ${gib("Shmem")} GiB`;
}

/**
 * One timed run: seconds, and, when known, the peak RSS (MiB) and the busy CPU seconds (user +
 * system, all threads; and the main thread's alone) of the process that did the work.
 */
export interface Sample {
  seconds: number;
  peakRssMiB?: number;
  cpuSeconds?: number;
  mainCpuSeconds?: number;
  /** Full (mark-compact) garbage collections of the server during the round, when it counts them. */
  majorGcs?: number;
  /**
   * The server's V8 old generation after the round (old, code and large-object spaces, MiB), when it
   * says: above V8's 8 MiB activation threshold a process can fall into back-to-back full GCs
   * while it receives a big body, below it never (docs/performance.md, Session 21).
   */
  oldGenerationMiB?: number;
}

/** What {@link compare} measured for one row. */
export interface Row {
  name: string;
  baseline: string;
  /** ours ÷ baseline in speed (baseline seconds ÷ our seconds), per round. */
  ratio: Spread;
  /** The 95 % confidence interval of {@link ratio}'s median ({@link medianInterval}). */
  ratioMedianInterval?: Interval;
  oursSeconds: Spread;
  baselineSeconds: Spread;
  oursPeakRssMiB?: number;
  baselinePeakRssMiB?: number;
  /** Busy CPU seconds of the process that did the work, per round (all threads, main thread). */
  oursCpuSeconds?: Spread;
  baselineCpuSeconds?: Spread;
  oursMainCpuSeconds?: Spread;
  baselineMainCpuSeconds?: Spread;
  /** Full garbage collections of each side's server per round (servers of `_server.ts`). */
  oursMajorGcs?: Spread;
  baselineMajorGcs?: Spread;
  /** Each side's server's old generation after each round, MiB (see {@link Sample.oldGenerationMiB}). */
  oursOldGenerationMiB?: Spread;
  baselineOldGenerationMiB?: Spread;
  /** Baseline busy CPU ÷ ours, per round (above 1: ours spent less CPU on the same work). */
  cpuRatio?: Spread;
  /**
   * How much the baseline's own seconds varied between rounds (max ÷ min): above
   * {@link UNSTEADY_SWING} the machine changed under the run, and the ratio says more about when a
   * round ran than about the code.
   */
  baselineSwing: number;
  /** Rounds this row ran (benches give short rows more than `BENCH_ROUNDS`). */
  rounds: number;
  goal?: number;
}

/** A baseline whose slowest round took this many times its fastest marks the row unsteady. */
export const UNSTEADY_SWING = 1.5;

/**
 * Runs `ours` and `baseline` in alternating order for `rounds` rounds (ours first on odd rounds) and
 * reports the speed ratio per round. `goal` is only printed: targets live in bench output.
 */
export async function compare(
  name: string,
  ours: () => Promise<Sample>,
  baseline: { name: string; run: () => Promise<Sample> },
  options: { rounds?: number; goal?: number } = {},
): Promise<Row> {
  const rounds = options.rounds ?? ROUNDS;
  const mine: Sample[] = [];
  const theirs: Sample[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      theirs.push(await baseline.run());
      mine.push(await ours());
    } else {
      mine.push(await ours());
      theirs.push(await baseline.run());
    }
    if (VERBOSE) {
      const one = (s: Sample) =>
        `${s.seconds.toFixed(3)} s${s.cpuSeconds === undefined ? "" : ` (server CPU ${s.cpuSeconds.toFixed(2)} s)`}`;
      const first = round % 2 === 0 ? "baseline first" : "ours first";
      console.log(
        `    round ${round + 1} (${first}): ours ${one(mine[round] as Sample)} · baseline ${one(theirs[round] as Sample)}`,
      );
    }
  }
  const ratios = mine.map((m, i) => (theirs[i] as Sample).seconds / m.seconds);
  const peak = (list: Sample[]) => {
    const known = list.map((s) => s.peakRssMiB).filter((n): n is number => n !== undefined);
    return known.length ? Math.max(...known) : undefined;
  };
  const row: Row = {
    name,
    baseline: baseline.name,
    ratio: spread(ratios),
    oursSeconds: spread(mine.map((s) => s.seconds)),
    baselineSeconds: spread(theirs.map((s) => s.seconds)),
    baselineSwing: Math.max(...theirs.map((s) => s.seconds)) / Math.min(...theirs.map((s) => s.seconds)),
    rounds: ratios.length,
  };
  const interval = medianInterval(ratios);
  if (interval) row.ratioMedianInterval = interval;
  const oursPeak = peak(mine);
  const baselinePeak = peak(theirs);
  if (oursPeak !== undefined) row.oursPeakRssMiB = oursPeak;
  if (baselinePeak !== undefined) row.baselinePeakRssMiB = baselinePeak;
  const cpu = (list: Sample[], key: "cpuSeconds" | "mainCpuSeconds") =>
    list.every((s) => s[key] !== undefined) ? spread(list.map((s) => s[key] as number)) : undefined;
  const cpus = {
    oursCpuSeconds: cpu(mine, "cpuSeconds"),
    baselineCpuSeconds: cpu(theirs, "cpuSeconds"),
    oursMainCpuSeconds: cpu(mine, "mainCpuSeconds"),
    baselineMainCpuSeconds: cpu(theirs, "mainCpuSeconds"),
  };
  for (const [key, value] of Object.entries(cpus)) if (value) row[key as keyof typeof cpus] = value;
  if (mine.every((s) => s.majorGcs !== undefined) && theirs.every((s) => s.majorGcs !== undefined)) {
    row.oursMajorGcs = spread(mine.map((s) => s.majorGcs as number));
    row.baselineMajorGcs = spread(theirs.map((s) => s.majorGcs as number));
  }
  if (
    mine.every((s) => s.oldGenerationMiB !== undefined) &&
    theirs.every((s) => s.oldGenerationMiB !== undefined)
  ) {
    row.oursOldGenerationMiB = spread(mine.map((s) => s.oldGenerationMiB as number));
    row.baselineOldGenerationMiB = spread(theirs.map((s) => s.oldGenerationMiB as number));
  }
  if (mine.every((s) => s.cpuSeconds) && theirs.every((s) => s.cpuSeconds !== undefined)) {
    row.cpuRatio = spread(mine.map((m, i) => (theirs[i]?.cpuSeconds as number) / (m.cpuSeconds as number)));
  }
  if (options.goal !== undefined) row.goal = options.goal;
  printRow(row);
  return row;
}

function printRow(row: Row): void {
  const goal =
    row.goal === undefined
      ? ""
      : `  goal ≥ ${row.goal}× ${verdict(row.ratio.median, row.goal, row.ratioMedianInterval)}`;
  const rss =
    row.oursPeakRssMiB === undefined
      ? ""
      : `  peak RSS ${row.oursPeakRssMiB.toFixed(0)} MiB (baseline ${row.baselinePeakRssMiB?.toFixed(0) ?? "?"} MiB)`;
  const { oursCpuSeconds: ours, baselineCpuSeconds: base } = row;
  const main = (s: Spread | undefined) => (s ? ` (main thread ${s.median.toFixed(3)})` : "");
  const cpu =
    ours && base
      ? `\n    server busy CPU s, median: ours ${ours.median.toFixed(3)}${main(row.oursMainCpuSeconds)}` +
        ` · baseline ${base.median.toFixed(3)}${main(row.baselineMainCpuSeconds)}` +
        (row.cpuRatio ? ` · CPU ratio ${fmt(row.cpuRatio)}` : "")
      : "";
  const gcs =
    row.oursMajorGcs && row.baselineMajorGcs
      ? `\n    full GCs per round (min/median/max): ours ${fmt(row.oursMajorGcs, 0)} · baseline ${fmt(row.baselineMajorGcs, 0)}` +
        (row.oursOldGenerationMiB && row.baselineOldGenerationMiB
          ? ` · V8 old generation, median: ours ${row.oursOldGenerationMiB.median.toFixed(1)} MiB` +
            ` · baseline ${row.baselineOldGenerationMiB.median.toFixed(1)} MiB (above 8 MiB V8 can mark at every scavenge)`
          : "")
      : "";
  const unsteady =
    row.baselineSwing > UNSTEADY_SWING
      ? `\n    unsteady: the baseline's own time varied ${row.baselineSwing.toFixed(1)}× between rounds` +
        " (the machine changed under the run); read the CPU and a second run before the ratio"
      : "";
  console.log(
    `${row.name}\n    vs ${row.baseline}: ratio ${fmt(row.ratio)} (min/median/max${fmtInterval(row.ratioMedianInterval)})${goal}\n` +
      `    seconds ours ${fmt(row.oursSeconds, 3)} · baseline ${fmt(row.baselineSeconds, 3)}${rss}${cpu}${gcs}${unsteady}`,
  );
}

/** Prints the bench's machine-readable summary line (collected by `bench/run.ts`). */
export function report(bench: string, rows: Row[], extra: Record<string, unknown> = {}): void {
  console.log(loadLine());
  console.log(`BENCH_JSON ${JSON.stringify({ bench, rounds: ROUNDS, load: loadavg(), rows, ...extra })}`);
}

/** Exact peak RSS of a process (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  if (!match) throw new Error(`no VmHWM for process ${pid}`);
  return Number(match[1]) / 1024;
}

/**
 * CPU seconds (user + system) used so far by process `pid`, or by its thread `tid` only (the main
 * thread's id is the pid), from `/proc` (clock-tick resolution). Busy CPU time barely depends on the
 * machine's load, so it complements the ratios on a shared machine.
 */
export function cpuSeconds(pid: number, tid?: number): number {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const text = readFileSync(path, "utf8");
  // Fields after the ")" that closes the command name: state is field 3, utime 14, stime 15.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100;

/**
 * One round served by the peer `server`: its peak RSS is reset before `run` and read after, and its
 * busy CPU (all threads, and the main thread alone) is taken around `run`: the server's own work,
 * which depends far less on the machine's load than the seconds do.
 */
export async function serverRound(server: Peer, run: () => Promise<number>): Promise<Sample> {
  const gcs = (await gcState(server))?.major;
  resetPeakRss(server.pid);
  const cpu = cpuSeconds(server.pid);
  const main = cpuSeconds(server.pid, server.pid);
  const seconds = await run();
  const sample: Sample = {
    seconds,
    peakRssMiB: peakRssMiB(server.pid),
    cpuSeconds: cpuSeconds(server.pid) - cpu,
    mainCpuSeconds: cpuSeconds(server.pid, server.pid) - main,
  };
  const after = gcs === undefined ? undefined : await gcState(server);
  if (gcs !== undefined && after !== undefined) {
    sample.majorGcs = after.major - gcs;
    if (after.oldGeneration !== undefined) sample.oldGenerationMiB = after.oldGeneration / MiB;
  }
  return sample;
}

/**
 * The full GCs a peer counted so far and its V8 old generation in bytes (`{"cmd": "gc"}`);
 * `undefined` for a peer that does not count.
 */
async function gcState(peer: Peer): Promise<{ major: number; oldGeneration?: number } | undefined> {
  try {
    const { major, oldGeneration } = await peer.ask({ cmd: "gc" });
    if (typeof major !== "number") return undefined;
    return typeof oldGeneration === "number" ? { major, oldGeneration } : { major };
  } catch {
    return undefined;
  }
}

/** Resets a process's peak RSS to its current RSS (Linux `clear_refs` 5). */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** A bench helper script running in its own process, talking one JSON line per message. */
export interface Peer {
  readonly pid: number;
  /** The JSON the process printed as `READY <json>`. */
  readonly ready: Record<string, unknown>;
  /** Sends one command line and waits for its `DONE <json>` reply. */
  ask(command: Record<string, unknown>): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * What every peer (the servers of both sides and the client) runs with unless
 * `BENCH_PEER_NODE_ARGS` says otherwise: nothing, Node's defaults, as a user runs each of them
 * (issue 43). Earlier runs gave every peer `--initial-old-space-size=64`, which kept the servers out
 * of the back-to-back full GCs some fell into with the defaults (docs/performance.md, Session 12);
 * `BENCH_PEER_NODE_ARGS=--initial-old-space-size=64` gives it to every peer again, ours and the
 * baselines alike. The `full GCs per round` line shows when a server falls into them.
 */
const DEFAULT_PEER_NODE_ARGS = "";

/**
 * Node options for every peer process, from `BENCH_PEER_NODE_ARGS` (split on spaces; empty for
 * Node's defaults), else {@link DEFAULT_PEER_NODE_ARGS}: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
 * profiles the servers and the client (Node refuses `--cpu-prof` in `NODE_OPTIONS`).
 */
const PEER_NODE_ARGS = (process.env.BENCH_PEER_NODE_ARGS ?? DEFAULT_PEER_NODE_ARGS)
  .split(" ")
  .filter((arg) => arg !== "");

/**
 * A peer written in TypeScript as the plain JavaScript a user runs: `bench/<script>` and the bench's
 * own modules it imports bundled by esbuild (packages left to `node_modules`, no `keepNames`) into
 * `bench/.peer-<name>.mjs`, next to the sources so `here` stays this folder. Under tsx every peer
 * carried tsx's loader, about 3 MB of V8 old generation, and with it a server was nearer the 8 MB
 * above which V8 can fall into back-to-back full GCs (docs/performance.md, Session 21). Built once
 * per bench process; written whole and then renamed, so a peer never starts from half a file.
 */
const plainPeers = new Map<string, Promise<string>>();
function plainPeer(script: string): Promise<string> {
  let built = plainPeers.get(script);
  if (built === undefined) {
    built = (async () => {
      const { build } = await import("esbuild");
      const out = join(here, `.peer-${script.replace(/\.ts$/, "")}.mjs`);
      const partial = `${out}.${process.pid}.tmp`;
      await build({
        entryPoints: [join(here, script)],
        bundle: true,
        packages: "external",
        platform: "node",
        format: "esm",
        target: "node20",
        outfile: partial,
        logLevel: "error",
      });
      renameSync(partial, out);
      return out;
    })();
    plainPeers.set(script, built);
  }
  return built;
}

/**
 * Starts `bench/<script>` in a process of its own, as plain JavaScript with `node` as a user runs it
 * (a `.ts` peer through {@link plainPeer}; one outside this folder, as `_proxy-ab.ts` starts from
 * another checkout, under tsx) and waits for its `READY` line.
 */
export async function startPeer(script: string, args: string[] = []): Promise<Peer> {
  const inHere = !script.includes("/");
  const entry = script.endsWith(".mjs")
    ? [join(here, script)]
    : inHere
      ? [await plainPeer(script)]
      : ["--import", "tsx", join(here, script)];
  const child: ChildProcess = spawn(process.execPath, [...PEER_NODE_ARGS, ...entry, ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const waiting: Array<(line: string) => void> = [];
  const failed = new Promise<never>((_, reject) => {
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  failed.catch(() => {});
  lines.on("line", (line) => {
    if (line.startsWith("READY ") || line.startsWith("DONE ")) waiting.shift()?.(line);
    else console.log(`    [${script}] ${line}`);
  });
  const next = () =>
    Promise.race([new Promise<string>((resolve) => waiting.push(resolve)), failed]).then((line) => {
      const json = JSON.parse(line.slice(line.indexOf(" ") + 1)) as Record<string, unknown>;
      if (typeof json.error === "string") throw new Error(`${script}: ${json.error}`);
      return json;
    });
  const ready = await next();
  return {
    pid: child.pid as number,
    ready,
    ask(command) {
      const reply = next();
      child.stdin?.write(`${JSON.stringify(command)}\n`);
      return reply;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      // Closing stdin lets the peer run its own clean-up (servePeer's onClose); a peer that has not
      // exited within 5 s is killed.
      child.stdin?.end();
      const kill = setTimeout(() => child.kill(), 5000);
      await exited;
      clearTimeout(kill);
    },
  };
}

/**
 * The loop of a peer process: prints `READY <ready>`, then answers each JSON command line with
 * `DONE <json>` (or `DONE {"error": ...}`) until stdin closes.
 */
export async function servePeer(
  ready: Record<string, unknown>,
  handle: (command: Record<string, unknown>) => Promise<Record<string, unknown>>,
  onClose: () => Promise<void> = async () => {},
): Promise<void> {
  console.log(`READY ${JSON.stringify(ready)}`);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    try {
      console.log(`DONE ${JSON.stringify(await handle(JSON.parse(line)))}`);
    } catch (error) {
      console.log(`DONE ${JSON.stringify({ error: String((error as Error)?.stack ?? error) })}`);
    }
  }
  await onClose();
  process.exit(0);
}

/** Writes `<dir>/source-<mib>.bin`: `mib` MiB of incompressible bytes (one random MiB, varied per MiB). */
export async function sourceFile(dir: string, mib: number): Promise<string> {
  const path = join(dir, `source-${mib}.bin`);
  const block = randomBytes(MiB);
  const out = createWriteStream(path);
  for (let i = 0; i < mib; i++) {
    block[0] = i & 0xff;
    if (!out.write(Buffer.from(block)))
      await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  return path;
}

/** Current RSS of a process (VmRSS), in MiB; 0 when unknown. */
export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}
