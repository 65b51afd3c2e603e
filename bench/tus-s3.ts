/**
 * Resumable uploads on S3 (issue 25): 1 GiB through tus into `s3Store` with `s3TusStaging` on a real
 * radosgw (started here, as `bench/s3-redis.ts` does), unchunked (create + one PATCH), in 8 MiB
 * PATCHes, and as 4 partial uploads sent at once and concatenated (`tus-js-client`'s
 * `parallelUploads`), server and client each in a process of their own, with the server's exact
 * peak RSS growth (VmHWM after a reset, minus RSS before; goal < 64 MiB), the commit's own time and
 * its own peak RSS growth (the same, from the commit's start to its end). Two commit paths
 * alternate in each row: the store adopting the staged objects by server-side copy (what ships)
 * against streaming them back through the put pipeline (what the commit did before, and what a
 * store without `adopt` still takes). Before the measured rounds, one untimed {@link WARM_MB} MiB
 * upload per path and row warms the new server process (its first upload loads and compiles the
 * SDK's code and grows the heap once: 52–57 MiB measured, printed as the cold start), so each row's
 * growth is an upload's, not the process's start-up.
 * Skips (exit 0, one line saying why) only when radosgw cannot be installed or started.
 *
 *   npm run bench -- tus-s3
 *   BENCH_TUS_MB=256 BENCH_TUS_S3_ROUNDS=2 npm run bench -- tus-s3
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type ServiceEndpoints, startServices, stopServices } from "../scripts/services/services.js";
import {
  compare,
  loadLine,
  MiB,
  type Peer,
  peakRssMiB,
  positiveInt,
  type Row,
  report,
  resetPeakRss,
  rssMiB,
  sourceFile,
  startPeer,
} from "./_lib.js";

const SIZE_MB = positiveInt("BENCH_TUS_MB", 1024);
/** Rounds per commit path and row: each round stores SIZE_MB (twice when re-streamed) in radosgw's RAM. */
const ROUNDS = positiveInt("BENCH_TUS_S3_ROUNDS", 1);
const GOAL_MIB = 64;
/** The untimed warm-up upload per commit path and row (MiB; its parallel parts are whole staged objects). */
const WARM_MB = 32;
console.log(`tus on S3 · ${SIZE_MB} MiB · ${loadLine()}`);

// radosgw's memstore holds every object in RAM and frees deleted ones in its garbage collection
// (run between rounds below): room for the largest round, plus slack.
process.env.MEMSTORE_BYTES ??= String((SIZE_MB * 3 + 1024) * MiB);
let services: ServiceEndpoints;
try {
  services = await startServices({ s3: true });
  if (!services.s3) throw new Error("no S3 endpoint");
} catch (error) {
  console.log(`tus-s3: skipped: radosgw could not be installed or started (${(error as Error).message})`);
  process.exit(0);
}
const s3 = services.s3;
process.env.BENCH_S3 = JSON.stringify(s3);
const dir = await mkdtemp(join(tmpdir(), "mfb-bench-tus-s3-"));

/** Frees deleted objects' RAM now rather than hours later (best effort). */
async function collectGarbage(): Promise<void> {
  await promisify(execFile)("radosgw-admin", ["-c", s3.cephConf, "gc", "process", "--include-all"], {
    timeout: 120_000,
  }).catch(() => undefined);
}

const growth: Record<string, number> = {};
/** Peak RSS growth from the commit's start to its end (staging complete to file visible). */
const commitGrowth: Record<string, number> = {};
const commitSeconds: Record<string, number[]> = {};

async function round(client: Peer, server: Peer, name: string, command: Record<string, unknown>) {
  // From a collected heap: otherwise the last round's garbage, still resident or just returned,
  // moves this round's starting point by tens of MiB either way.
  await server.ask({ cmd: "collect" });
  resetPeakRss(server.pid);
  const before = rssMiB(server.pid);
  const { seconds } = await client.ask(command);
  const commit = await server.ask({ cmd: "commit-seconds" });
  // The server resets its peak when the commit starts: the round's is the larger of the two.
  const peak = Math.max(peakRssMiB(server.pid), Number(commit.peakBeforeMiB));
  growth[name] = Math.max(growth[name] ?? 0, Number((peak - before).toFixed(1)));
  commitGrowth[name] = Math.max(commitGrowth[name] ?? 0, Number(Number(commit.rssGrowthMiB).toFixed(1)));
  commitSeconds[name] = [...(commitSeconds[name] ?? []), Number(Number(commit.seconds).toFixed(3))];
  await server.ask({ cmd: "clean" });
  await collectGarbage();
  return { seconds: Number(seconds), peakRssMiB: peak };
}

/** How the client sends: PATCH size (0: one PATCH), or partial uploads sent at once and concatenated. */
interface Way {
  label: string;
  chunk: number;
  parallel?: number;
}
const WAYS: Way[] = [
  { label: "unchunked", chunk: 0 },
  { label: "8 MiB chunks", chunk: 8 * MiB },
  { label: "4 parallel partial uploads", chunk: 0, parallel: 4 },
];

const rows: Row[] = [];
let coldStart: number | undefined;
try {
  const file = await sourceFile(dir, SIZE_MB);
  const warmFile = await sourceFile(dir, WARM_MB);
  const client = await startPeer("_client.ts");
  const server = await startPeer("_server.ts", ["ours-s3", join(dir, "server")]);
  const upload = (mode: "copy" | "restream", name: string, source: string, way: Way) => async () => {
    await server.ask({ cmd: "commit-mode", mode });
    return round(client, server, name, {
      cmd: "tus-upload",
      url: server.ready.url,
      file: source,
      chunk: way.chunk,
      parallel: way.parallel,
      ours: true,
    });
  };
  // Untimed: the new process's first uploads (each path, each way of sending), kept out of the rows.
  for (const way of WAYS) {
    for (const mode of ["restream", "copy"] as const) await upload(mode, "warm-up", warmFile, way)();
  }
  coldStart = growth["warm-up"];
  delete growth["warm-up"];
  delete commitGrowth["warm-up"];
  delete commitSeconds["warm-up"];
  console.log(
    `server peak RSS growth over its first ${WARM_MB} MiB uploads (cold start, untimed): ${coldStart} MiB`,
  );
  for (const way of WAYS) {
    const run = (mode: "copy" | "restream") => upload(mode, `${mode} ${way.label}`, file, way);
    rows.push(
      await compare(
        `tus upload to s3Store ${SIZE_MB} MiB, ${way.label} (s3TusStaging, commit by server-side copy)`,
        run("copy"),
        { name: "the same, commit re-streamed through the put pipeline", run: run("restream") },
        { rounds: ROUNDS },
      ),
    );
  }
  for (const [name, value] of Object.entries(growth)) {
    console.log(
      `server peak RSS growth ${name}: ${value} MiB (goal < ${GOAL_MIB} MiB: ${value < GOAL_MIB ? "met" : "NOT met"})`,
    );
  }
  for (const [name, value] of Object.entries(commitGrowth)) {
    console.log(`commit's own peak RSS growth ${name}: ${value} MiB`);
  }
  console.log(`commit seconds: ${JSON.stringify(commitSeconds)}`);
  for (const peer of [client, server]) await peer.stop();
} finally {
  await rm(dir, { recursive: true, force: true });
  await stopServices(services);
}
report("tus-s3", rows, {
  sizeMiB: SIZE_MB,
  roundsPerPath: ROUNDS,
  warmUpMiB: WARM_MB,
  coldStartPeakRssGrowthMiB: coldStart,
  peakRssGrowthMiB: growth,
  commitPeakRssGrowthMiB: commitGrowth,
  commitSeconds,
});
