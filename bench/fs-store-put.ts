/**
 * fsStore put of a generated stream vs a raw `stream.pipeline` to a file, in the same run.
 * Targets: throughput ratio >= 0.85, peak RSS growth < 64 MiB (the put must stream).
 *
 *   npx tsx bench/fs-store-put.ts            # 1 GiB
 *   BENCH_SIZE_MB=256 npx tsx bench/fs-store-put.ts
 */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fsStore } from "../src/storage/fs-store.js";

const MIB = 1024 * 1024;
const CHUNK = 64 * 1024;
const sizeMb = Number(process.env.BENCH_SIZE_MB ?? 1024);
if (!Number.isFinite(sizeMb) || sizeMb <= 0) throw new Error("BENCH_SIZE_MB must be a positive number");
const totalBytes = Math.floor(sizeMb * MIB);
const ROUNDS = 3;

/** A byte stream of `totalBytes` made from one reused 64 KiB buffer (never held whole). */
function generated(): Readable {
  const chunk = randomBytes(CHUNK);
  let left = totalBytes;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const size = Math.min(CHUNK, left);
      left -= size;
      this.push(size === CHUNK ? chunk : chunk.subarray(0, size));
    },
  });
}

interface Measure {
  seconds: number;
  mibPerSecond: number;
  peakRssGrowthMib: number;
}

async function measure(run: () => Promise<unknown>): Promise<Measure> {
  (globalThis as { gc?: () => void }).gc?.();
  const baseRss = process.memoryUsage().rss;
  let peakRss = baseRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
  const start = performance.now();
  try {
    await run();
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - start) / 1000;
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  return {
    seconds,
    mibPerSecond: totalBytes / MIB / seconds,
    peakRssGrowthMib: (peakRss - baseRss) / MIB,
  };
}

const dir = await mkdtemp(join(tmpdir(), "mfb-bench-fs-put-"));
try {
  const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const raw: Measure[] = [];
  const put: Measure[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const target = join(dir, "raw.bin");
    raw.push(await measure(() => pipeline(generated(), createWriteStream(target))));
    await rm(target);
    let id = "";
    put.push(
      await measure(async () => {
        const file = await store.put(generated(), { scope: "bench", name: "big.bin", maxBytes: totalBytes });
        if (file.size !== totalBytes) throw new Error(`stored ${file.size} bytes, expected ${totalBytes}`);
        id = file.id;
      }),
    );
    await store.delete("bench", id);
  }
  await store.close?.();

  const best = (list: Measure[]) => list.reduce((a, b) => (b.mibPerSecond > a.mibPerSecond ? b : a));
  const bestRaw = best(raw);
  const bestPut = best(put);
  const ratio = bestPut.mibPerSecond / bestRaw.mibPerSecond;
  const peakGrowth = Math.max(...put.map((m) => m.peakRssGrowthMib));
  const rawPeakGrowth = Math.max(...raw.map((m) => m.peakRssGrowthMib));

  const row = (label: string, m: Measure, peak: number) =>
    `${label.padEnd(26)} ${m.mibPerSecond.toFixed(0).padStart(8)} ${m.seconds.toFixed(2).padStart(8)} ${peak.toFixed(1).padStart(14)}`;
  console.log(`fsStore put vs raw pipeline, ${sizeMb} MiB, best of ${ROUNDS} rounds`);
  console.log(
    `${"".padEnd(26)} ${"MiB/s".padStart(8)} ${"seconds".padStart(8)} ${"peak RSS +MiB".padStart(14)}`,
  );
  console.log(row("raw stream.pipeline", bestRaw, rawPeakGrowth));
  console.log(row("fsStore.put (sha256, cap)", bestPut, peakGrowth));
  console.log(
    `ratio ${ratio.toFixed(3)} (target >= 0.85)   peak RSS growth ${peakGrowth.toFixed(1)} MiB (target < 64)`,
  );
  console.log(
    `BENCH_JSON ${JSON.stringify({
      sizeMiB: sizeMb,
      rounds: ROUNDS,
      rawMiBps: Number(bestRaw.mibPerSecond.toFixed(1)),
      putMiBps: Number(bestPut.mibPerSecond.toFixed(1)),
      ratio: Number(ratio.toFixed(3)),
      peakRssGrowthMiB: Number(peakGrowth.toFixed(1)),
      rawPeakRssGrowthMiB: Number(rawPeakGrowth.toFixed(1)),
      ratioTargetMet: ratio >= 0.85,
      rssTargetMet: peakGrowth < 64,
    })}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
