/**
 * Several large uploads at once (not part of `npm run bench`): `BENCH_CONCURRENT` uploads of
 * `BENCH_UPLOAD_MB` MiB in flight together (default 1, 2 and 4), twice that many per round, to the
 * bench's raw server and ours (`_server.ts raw` / `ours-fs`), rounds alternating; the client sends
 * each body from memory (`_client.ts small`; `transfer.ts` sends from a file). Prints per
 * concurrency the median seconds per round of each, the ratio (raw ÷ ours: ≥ 1 is ours faster) and
 * the servers' busy CPU and main-thread CPU: where the sha-256 runs (main thread or worker) matters
 * most when several bodies arrive at once (Session 26).
 *
 *   npm run build && npx tsx bench/_upload-concurrent.ts
 *   BENCH_CONCURRENT=4 BENCH_UPLOAD_MB=256 BENCH_ROUNDS=5 npx tsx bench/_upload-concurrent.ts
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  loadLine,
  MiB,
  type Peer,
  positiveInt,
  type Sample,
  serverRound,
  spread,
  startPeer,
} from "./_lib.js";

const MB = positiveInt("BENCH_UPLOAD_MB", 64);
const ROUNDS = positiveInt("BENCH_ROUNDS", 9);
const LEVELS = (process.env.BENCH_CONCURRENT ?? "1,2,4").split(",").map((level) => {
  const n = Number(level);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error("BENCH_CONCURRENT must list positive integers");
  return n;
});

/** Median seconds per round, and the server's busy CPU and main-thread CPU over it. */
function figures(samples: Sample[]): string {
  const of = (pick: (sample: Sample) => number | undefined) =>
    spread(samples.map((sample) => pick(sample) ?? Number.NaN)).median;
  return `${of((s) => s.seconds).toFixed(3)} s (CPU ${of((s) => s.cpuSeconds).toFixed(2)}, main thread ${of(
    (s) => s.mainCpuSeconds,
  ).toFixed(2)})`;
}

const dir = await mkdtemp(join(tmpdir(), "mfb-upload-concurrent-"));
console.log(`uploads at once, ${MB} MiB each · ${loadLine()}`);
try {
  const client = await startPeer("_client.ts");
  const raw = await startPeer("_server.ts", ["raw", join(dir, "raw")]);
  const ours = await startPeer("_server.ts", ["ours-fs", join(dir, "ours")]);
  const once = async (server: Peer, mode: string, concurrency: number) => {
    const sample = await serverRound(server, async () => {
      const command = {
        cmd: "small",
        url: server.ready.url,
        count: concurrency * 2,
        size: MB * MiB,
        concurrency,
        mode,
      };
      return Number((await client.ask(command)).seconds);
    });
    await server.ask({ cmd: "clean" });
    return sample;
  };
  for (const concurrency of LEVELS) {
    const sides: Record<"raw" | "ours", Sample[]> = { raw: [], ours: [] };
    await once(raw, "raw", concurrency);
    await once(ours, "ours", concurrency);
    for (let round = 0; round < ROUNDS; round++) {
      const first = round % 2 === 0;
      if (first) sides.raw.push(await once(raw, "raw", concurrency));
      sides.ours.push(await once(ours, "ours", concurrency));
      if (!first) sides.raw.push(await once(raw, "raw", concurrency));
    }
    const ratio = spread(
      sides.raw.map((sample, i) => sample.seconds / (sides.ours[i]?.seconds ?? Number.NaN)),
    );
    console.log(
      `${concurrency} at once, ${concurrency * 2} per round: ratio ${ratio.min.toFixed(2)} / ` +
        `${ratio.median.toFixed(2)} / ${ratio.max.toFixed(2)} · ours ${figures(sides.ours)} · ` +
        `raw ${figures(sides.raw)}`,
    );
  }
  await Promise.all([client.stop(), raw.stop(), ours.stop()]);
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(loadLine());
