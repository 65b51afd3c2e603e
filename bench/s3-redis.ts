/**
 * s3Store and the Redis drivers on real servers (radosgw + redis-server, started here):
 * - 1 GiB file into `s3Store.put` vs the AWS SDK's own `Upload` of the same file, same part size and
 *   queue (target: s3Store >= 0.85x the SDK's throughput; peak RSS growth < 128 MiB);
 * - single-use claims (`redisState.setIfAbsent`) per second;
 * - list page p50 at 100k files in one scope (`s3Store` + `redisCatalog`; target < 10 ms).
 *
 *   BENCH_SIZE_MB=256 npx tsx bench/s3-redis.ts
 */
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DeleteObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { startServices, stopServices } from "../scripts/services/services.js";
import { newId } from "../src/internal/ids.js";
import { built } from "./_built.js";

import { peakRssMiB, resetPeakRss } from "./_lib.js";

// Our code as its published build (bench/_built.ts).
const { redisCatalog, redisState } = await built<typeof import("../src/redis/index.js")>("redis");
const { s3Store } = await built<typeof import("../src/s3/index.js")>("s3");

const MIB = 1024 * 1024;
const sizeMb = Number(process.env.BENCH_SIZE_MB ?? 1024);
if (!Number.isFinite(sizeMb) || sizeMb <= 0) throw new Error("BENCH_SIZE_MB must be a positive number");
const totalBytes = Math.floor(sizeMb * MIB);
const PART = 8 * MIB;
const QUEUE = 4;
const ROUNDS = 2;
const LIST_FILES = Number(process.env.BENCH_LIST_FILES ?? 100_000);

interface Measure {
  seconds: number;
  mibPerSecond: number;
  peakRssGrowthMib: number;
}

/** Times `run`; peak RSS growth is exact: VmHWM (reset first) minus the RSS at the start. */
async function measure(run: () => Promise<unknown>): Promise<Measure> {
  (globalThis as { gc?: () => void }).gc?.();
  const baseRss = process.memoryUsage().rss;
  resetPeakRss(process.pid);
  const start = performance.now();
  await run();
  const seconds = (performance.now() - start) / 1000;
  const peakRss = peakRssMiB(process.pid) * MIB;
  return { seconds, mibPerSecond: totalBytes / MIB / seconds, peakRssGrowthMib: (peakRss - baseRss) / MIB };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;

// The object store lives in RAM (memstore). radosgw frees deleted objects' data only in its garbage
// collection (hours later), so make room for every upload of every round, plus slack.
process.env.MEMSTORE_BYTES ??= String(totalBytes * ROUNDS * 2 + 1024 * MIB);
const services = await startServices();
const dir = await mkdtemp(join(tmpdir(), "mfb-bench-s3-"));
const result: Record<string, unknown> = { sizeMiB: sizeMb };
try {
  const s3 = services.s3!;
  const credentials = { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey };
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });

  // ---------------------------------------------------------------- 1 GiB upload
  const source = join(dir, "big.bin");
  const chunk = randomBytes(MIB);
  await pipeline(
    Readable.from(
      (function* () {
        for (let left = totalBytes; left > 0; left -= MIB)
          yield left >= MIB ? chunk : chunk.subarray(0, left);
      })(),
    ),
    createWriteStream(source),
  );
  const store = s3Store({
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials,
    client,
    prefix: "bench/",
    partSize: PART,
    queueSize: QUEUE,
    sweepInterval: 0,
  });
  const sdk: Measure[] = [];
  const put: Measure[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const key = `bench-sdk/${round}`;
    sdk.push(
      await measure(() =>
        new Upload({
          client,
          params: { Bucket: s3.bucket, Key: key, Body: createReadStream(source) },
          partSize: PART,
          queueSize: QUEUE,
        }).done(),
      ),
    );
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    let id = "";
    put.push(
      await measure(async () => {
        const file = await store.put(
          { path: source },
          { scope: "bench", name: "big.bin", maxBytes: totalBytes },
        );
        if (file.size !== totalBytes) throw new Error(`stored ${file.size} bytes, expected ${totalBytes}`);
        id = file.id;
      }),
    );
    await store.delete("bench", id);
  }
  const best = (list: Measure[]) => list.reduce((a, b) => (b.mibPerSecond > a.mibPerSecond ? b : a));
  const ratio = best(put).mibPerSecond / best(sdk).mibPerSecond;
  const peak = Math.max(...put.map((m) => m.peakRssGrowthMib));
  const sdkPeak = Math.max(...sdk.map((m) => m.peakRssGrowthMib));
  console.log(
    `s3Store.put vs SDK Upload, ${sizeMb} MiB, part ${PART / MIB} MiB x ${QUEUE}, best of ${ROUNDS}`,
  );
  console.log(
    `  SDK Upload        ${best(sdk).mibPerSecond.toFixed(0).padStart(6)} MiB/s  peak RSS +${sdkPeak.toFixed(1)} MiB`,
  );
  console.log(
    `  s3Store.put       ${best(put).mibPerSecond.toFixed(0).padStart(6)} MiB/s  peak RSS +${peak.toFixed(1)} MiB`,
  );
  console.log(
    `  ratio ${ratio.toFixed(3)} (target >= 0.85)   peak RSS growth ${peak.toFixed(1)} MiB (target < 128)`,
  );
  Object.assign(result, {
    sdkMiBps: Number(best(sdk).mibPerSecond.toFixed(1)),
    putMiBps: Number(best(put).mibPerSecond.toFixed(1)),
    ratio: Number(ratio.toFixed(3)),
    peakRssGrowthMiB: Number(peak.toFixed(1)),
    sdkPeakRssGrowthMiB: Number(sdkPeak.toFixed(1)),
    ratioTargetMet: ratio >= 0.85,
    rssTargetMet: peak < 128,
  });
  await rm(source);

  // ---------------------------------------------------------------- claims
  const state = redisState({ url: services.redis!.url, keyPrefix: "bench:" });
  const CLAIMS = 20_000;
  const CONCURRENCY = 64;
  let next = 0;
  let won = 0;
  const claimStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CLAIMS) {
        const i = next++;
        if (await state.setIfAbsent(`jti:${i}`, 1, { ttl: "5m" })) won++;
      }
    }),
  );
  const claimsPerSecond = CLAIMS / ((performance.now() - claimStart) / 1000);
  if (won !== CLAIMS) throw new Error(`only ${won} of ${CLAIMS} fresh claims succeeded`);
  console.log(`single-use claims on Redis: ${claimsPerSecond.toFixed(0)}/s (${CONCURRENCY} in flight)`);
  result.claimsPerSecond = Math.round(claimsPerSecond);
  await state.close?.();

  // ---------------------------------------------------------------- list at 100k files
  const catalog = redisCatalog({ url: services.redis!.url, keyPrefix: "bench-list:" });
  const listed = s3Store({ bucket: s3.bucket, client, prefix: "bench-list/", catalog, sweepInterval: 0 });
  const base = Date.now();
  const ids: string[] = [];
  next = 0;
  await Promise.all(
    Array.from({ length: 128 }, async () => {
      while (next < LIST_FILES) {
        const i = next++;
        const id = newId(base + i);
        ids.push(id);
        await catalog.add({
          id,
          scope: "big-scope",
          name: `file-${i}.txt`,
          mimeType: "text/plain",
          size: i,
          sha256: "0".repeat(64),
          createdAt: base + i,
          kind: "upload",
        });
      }
    }),
  );
  const { encodeCursor } = await import("../src/storage/kit/list-page.js");
  ids.sort();
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    const after = ids[Math.floor(Math.random() * (ids.length - 200))] as string;
    const start = performance.now();
    const page = await listed.list("big-scope", { limit: 100, cursor: encodeCursor(after) });
    times.push(performance.now() - start);
    if (page.files.length !== 100) throw new Error(`page had ${page.files.length} files`);
  }
  times.sort((a, b) => a - b);
  const p50 = percentile(times, 0.5);
  console.log(
    `list page of 100 at ${LIST_FILES} files in one scope: p50 ${p50.toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms (target p50 < 10 ms)`,
  );
  Object.assign(result, {
    listFiles: LIST_FILES,
    listP50Ms: Number(p50.toFixed(2)),
    listP99Ms: Number(percentile(times, 0.99).toFixed(2)),
    listTargetMet: p50 < 10,
  });
  await listed.close?.();
  await catalog.close?.();
  await store.close?.();
  client.destroy();
  console.log(`BENCH_JSON ${JSON.stringify(result)}`);
} finally {
  await rm(dir, { recursive: true, force: true });
  await stopServices(services);
}
