/**
 * Where the CPU of one upload goes, thread by thread, and how much of the machine's cores it leaves
 * idle (not part of `npm run bench`): the bench's raw server and ours (`_server.ts raw` / `ours-fs`)
 * and its client (`_client.ts`), each in its own process as in `transfer.ts`, rounds alternating.
 * Per round it reads, from `/proc`, the busy CPU (user + system) of the client, of each server's
 * main thread, of the threads the server had when it was ready (libuv's pool, V8's helpers) and of
 * the threads it started later (ours: the sha-256 worker, started on the first upload past 1 MiB),
 * and the machine's idle time over the round (`/proc/stat`). Prints the medians per side and the
 * least wall time the round's CPU allows on the machine's cores ((client + server CPU) ÷ cores):
 * what the 64 MiB upload row can reach when ours has more work than the raw pipe (Session 25).
 *
 *   npm run build && npx tsx bench/_upload-cores.ts
 *   BENCH_UPLOAD_MB=256 BENCH_ROUNDS=9 npx tsx bench/_upload-cores.ts
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, loadLine, type Peer, positiveInt, sourceFile, startPeer } from "./_lib.js";

const MB = positiveInt("BENCH_UPLOAD_MB", 64);
const ROUNDS = positiveInt("BENCH_ROUNDS", 16);
const CORES = availableParallelism();
/** Clock ticks per second of `/proc` times (USER_HZ; 100 on Linux). */
const HZ = 100;

/** Busy seconds (user + system) of each thread of `pid`, by thread id. */
function threadSeconds(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / HZ);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** Idle seconds of the whole machine so far, all cores (`/proc/stat`: idle + iowait). */
function machineIdleSeconds(): number {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] as string)
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return ((fields[3] as number) + (fields[4] as number)) / HZ;
}

interface Round {
  wall: number;
  client: number;
  main: number;
  early: number;
  later: number;
  idle: number;
}

/** One upload to `server`, with the CPU each part of it took. */
async function round(
  client: Peer,
  server: Peer,
  early: Set<number>,
  file: string,
  mode: string,
): Promise<Round> {
  const client0 = cpuSeconds(client.pid);
  const threads0 = threadSeconds(server.pid);
  const idle0 = machineIdleSeconds();
  const wall = Number((await client.ask({ cmd: "upload", url: server.ready.url, file, mode })).seconds);
  const idle = machineIdleSeconds() - idle0;
  const threads1 = threadSeconds(server.pid);
  const sample: Round = { wall, client: cpuSeconds(client.pid) - client0, main: 0, early: 0, later: 0, idle };
  for (const [tid, seconds] of threads1) {
    const spent = seconds - (threads0.get(tid) ?? 0);
    if (tid === server.pid) sample.main += spent;
    else if (early.has(tid)) sample.early += spent;
    else sample.later += spent;
  }
  await server.ask({ cmd: "clean" });
  return sample;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const dir = await mkdtemp(join(tmpdir(), "mfb-upload-cores-"));
console.log(`upload cores · ${MB} MiB · ${ROUNDS} rounds · ${CORES} cores · ${loadLine()}`);
try {
  const client = await startPeer("_client.ts");
  const raw = await startPeer("_server.ts", ["raw", join(dir, "raw")]);
  const ours = await startPeer("_server.ts", ["ours-fs", join(dir, "ours")]);
  const file = await sourceFile(dir, MB);
  const side = (name: string, server: Peer) => ({
    name,
    server,
    mode: name,
    early: new Set(threadSeconds(server.pid).keys()),
    rounds: [] as Round[],
  });
  const rawSide = side("raw", raw);
  const oursSide = side("ours", ours);
  const sides = [rawSide, oursSide];
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const one of order) one.rounds.push(await round(client, one.server, one.early, file, one.mode));
  }
  for (const one of sides) {
    const m = (pick: (r: Round) => number) => median(one.rounds.map(pick));
    const cpu = m((r) => r.client + r.main + r.early + r.later);
    console.log(
      `${one.name.padEnd(4)} wall ${m((r) => r.wall).toFixed(3)} s · CPU s: client ${m((r) => r.client).toFixed(3)}, ` +
        `server main ${m((r) => r.main).toFixed(3)}, server threads from the start ${m((r) => r.early).toFixed(3)}, ` +
        `started later ${m((r) => r.later).toFixed(3)} · all ${cpu.toFixed(3)} → least wall on ${CORES} cores ` +
        `${(cpu / CORES).toFixed(3)} s · machine idle ${m((r) => r.idle).toFixed(3)} core-s`,
    );
  }
  const ratios = rawSide.rounds.map((r, i) => r.wall / (oursSide.rounds[i] as Round).wall);
  console.log(
    `ratio raw ÷ ours per round, median ${median(ratios).toFixed(2)} (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)})`,
  );
  for (const peer of [client, raw, ours]) await peer.stop();
} finally {
  await rm(dir, { recursive: true, force: true });
}
