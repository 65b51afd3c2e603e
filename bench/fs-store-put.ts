/**
 * `fsStore.put` of one large stream (sha256, size cap, commit) vs a raw `stream.pipeline` to a file,
 * in the same process, alternating rounds, ours ÷ baseline, min / median / max, with this process's
 * exact peak RSS (VmHWM, reset before each round): the store level under the transfer bench's HTTP
 * rows, where the digest's cost shows without a network in the way (target ≥ 0.85×, flat memory).
 *
 *   npm run bench -- fs-store-put                  # 1 GiB
 *   BENCH_SIZE_MB=256 npm run bench -- fs-store-put
 */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { built } from "./_built.js";
import {
  compare,
  cpuSeconds,
  fmt,
  KiB,
  loadLine,
  MiB,
  peakRssMiB,
  positiveInt,
  report,
  resetPeakRss,
  type Sample,
  spread,
} from "./_lib.js";

// Our code as its published build (bench/_built.ts).
const { fsStore } = await built<typeof import("../src/index.js")>("index");

const sizeMiB = positiveInt("BENCH_SIZE_MB", 1024);
const total = sizeMiB * MiB;
const CHUNK = 64 * KiB;
const block = randomBytes(CHUNK);

/** `total` bytes from one reused 64 KiB block, as a socket would hand them over (never held whole). */
function generated(): Readable {
  let left = total;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const size = Math.min(CHUNK, left);
      left -= size;
      this.push(Buffer.from(block.subarray(0, size)));
    },
  });
}

/** Busy CPU seconds per round: the main thread's, and the whole process's (the hash worker too). */
const cpu = {
  ours: { main: [] as number[], all: [] as number[] },
  raw: { main: [] as number[], all: [] as number[] },
};

/** Times `run` with this process's peak RSS reset before and read after, and its CPU time. */
async function timed(side: "ours" | "raw", run: () => Promise<void>): Promise<Sample> {
  (globalThis as { gc?: () => void }).gc?.();
  resetPeakRss(process.pid);
  const main = cpuSeconds(process.pid, process.pid);
  const all = cpuSeconds(process.pid);
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  cpu[side].main.push(cpuSeconds(process.pid, process.pid) - main);
  cpu[side].all.push(cpuSeconds(process.pid) - all);
  return { seconds, peakRssMiB: peakRssMiB(process.pid) };
}

console.log(`fsStore.put of ${sizeMiB} MiB · ${loadLine()}`);
const dir = await mkdtemp(join(tmpdir(), "mfb-bench-fs-put-"));
try {
  const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const target = join(dir, "raw.bin");
  const put = () =>
    timed("ours", async () => {
      const file = await store.put(generated(), { scope: "bench", name: "big.bin", maxBytes: total });
      if (file.size !== total) throw new Error(`stored ${file.size} bytes, expected ${total}`);
      await store.delete("bench", file.id);
    });
  const raw = () =>
    timed("raw", async () => {
      await pipeline(generated(), createWriteStream(target));
      await rm(target);
    });
  const row = await compare(
    `fsStore.put of ${sizeMiB} MiB (sha256 while streaming, cap, commit)`,
    put,
    { name: "stream.pipeline to a file", run: raw },
    { goal: 0.85 },
  );
  await store.close?.();
  const line = (side: "ours" | "raw") =>
    `main thread ${fmt(spread(cpu[side].main))} s, process ${fmt(spread(cpu[side].all))} s`;
  console.log(`    busy CPU per round (min/median/max): ours ${line("ours")} · baseline ${line("raw")}`);
  report("fs-store-put", [row], { sizeMiB, cpuSeconds: cpu });
} finally {
  await rm(dir, { recursive: true, force: true });
}
