/**
 * Workers (issue 46), on workerd locally through miniflare (both from npm):
 *
 * 1. A 64 MiB upload into R2 through our routes (a ticket `PUT` to `createFileRoutes` on an
 *    `r2Store`, the record written last) vs a plain Worker that streams the same request body into
 *    R2 with one `env.FILES.put(key, request.body)`. Goal: ratio ≥ 0.9. Two rows: the client
 *    declares the sha256 (`X-Content-SHA256`: the body goes to R2 unread, R2 verifies the digest),
 *    and it does not (the body is read in 1 MiB BYOB reads into two buffers in turn, hashed, and
 *    written into one put of its `Content-Length`). Two more rows: the declared row against a
 *    plain Worker asking R2 for the same check (`put(key, body, { sha256 })`), and that plain
 *    Worker against the bare plain put: what miniflare's own hashing adds (real R2 verifies on its
 *    side). Each row runs {@link UPLOAD_ROUNDS} paired rounds; a summary prints every row's wall
 *    ratio beside its CPU ratio.
 * 2. Signed-URL signing inside workerd: the minter's `mint` / `verify` (its synchronous
 *    `node:crypto` HMAC, from `nodejs_compat`), `createHmac` alone, and Web Crypto's
 *    `crypto.subtle.sign` / `verify` (HMAC-SHA256, key imported once) over the same token, per second.
 *
 *   npx tsx bench/workerd.ts
 *   BENCH_SHORT=1 npx tsx bench/workerd.ts   # 8 MiB upload, fewer signing ops
 *   BENCH_WORKERD_ROWS=undeclared,declared npx tsx bench/workerd.ts   # some rows only
 *
 * Timing is taken on the Node side around each request (workerd's clocks stand still while a
 * request computes), with workerd's CPU (user + system, from /proc) around it: miniflare's R2
 * simulation runs in the same process. Prints min / median / max per row and a final
 * `BENCH_JSON {...}` line.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { bundleWorker, startWorker } from "../test/cloudflare/workerd.js";
import {
  compare,
  cpuSeconds,
  fmt,
  here,
  loadLine,
  MiB,
  positiveInt,
  ROUNDS,
  type Row,
  report,
  roundsAtLeast,
  spread,
} from "./_lib.js";

const SHORT = process.env.BENCH_SHORT === "1";
const SIZE_MIB = positiveInt("BENCH_WORKERD_MIB", SHORT ? 8 : 64);
const SIGN_OPS = positiveInt("BENCH_SIGN_OPS", SHORT ? 2_000 : 20_000);
/**
 * Paired rounds per upload row (`BENCH_ROUNDS` overrides). On the shared two cores one round's wall
 * ratio ranged 0.69–1.59 at load 4–6 (Session 19, 21 rounds, docs/performance.md); resampling
 * them, the median of 5 rounds fell anywhere in 0.82–1.06 (5th–95th percentile, sd 0.08), of 15 in
 * 0.86–1.01 (sd 0.045), of 21 in 0.86–1.01 (sd 0.04): 15 takes most of what more rounds give. A
 * 64 MiB round takes ~2 s (both uploads), so four rows of 15 rounds take about two minutes.
 */
const UPLOAD_ROUNDS = roundsAtLeast(15);

console.log(loadLine());
const script = await bundleWorker(`${here}/_workerd-worker.ts`);
const mf = await startWorker(script);

async function send(url: string, init: RequestInit = {}): Promise<Response> {
  return (await mf.dispatchFetch(url, init as never)) as unknown as Response;
}

/** Empties the local bucket between rounds (the simulation keeps objects on disk). */
async function emptyBucket(): Promise<void> {
  const bucket = await mf.getR2Bucket("FILES");
  for (;;) {
    const page = await bucket.list();
    if (page.objects.length === 0) return;
    await bucket.delete(page.objects.map((object) => object.key));
  }
}

const body = randomBytes(SIZE_MIB * MiB);
const digest = createHash("sha256").update(body).digest("hex");
const headers = { "content-type": "application/octet-stream", "content-length": String(body.length) };
let round = 0;

/** The workerd processes miniflare started (children of this process), for their CPU time. */
const workerdPids = execFileSync("pgrep", ["-P", String(process.pid)], { encoding: "utf8" })
  .split("\n")
  .filter((pid) => pid && /workerd/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8")));
const workerdCpuSeconds = () => workerdPids.reduce((sum, pid) => sum + cpuSeconds(Number(pid)), 0);

async function timedPut(url: string, declared = false): Promise<{ seconds: number; cpuSeconds: number }> {
  const cpu = workerdCpuSeconds();
  const start = performance.now();
  const response = await send(url, {
    method: "PUT",
    body,
    headers: declared ? { ...headers, "x-content-sha256": digest } : headers,
  });
  await response.arrayBuffer();
  const seconds = (performance.now() - start) / 1000;
  const cpuSeconds = workerdCpuSeconds() - cpu;
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`${url}: status ${response.status}`);
  await emptyBucket();
  return { seconds, cpuSeconds };
}

// Warm-up: one of each, so neither side pays for the first bundle evaluation or the bucket's setup.
const warm = (await (await send("http://bench.test/ticket")).json()) as { upload_url: string };
await timedPut(warm.upload_url, true);
await timedPut("http://bench.test/plain/warm");
await timedPut("http://bench.test/plain-sha256/warm", true);

const ticketUrl = async () =>
  ((await (await send("http://bench.test/ticket")).json()) as { upload_url: string }).upload_url;
const plain = {
  name: "plain Worker: env.FILES.put(key, request.body)",
  run: () => timedPut(`http://bench.test/plain/r${round++}`),
};
const rows: Row[] = [];
const only = (process.env.BENCH_WORKERD_ROWS ?? "declared,undeclared,declared-vs-sha256,plain-sha256").split(
  ",",
);
if (only.includes("declared"))
  rows.push(
    await compare(
      `${SIZE_MIB} MiB upload into R2 through our routes, sha256 declared (ticket PUT, X-Content-SHA256)`,
      async () => timedPut(await ticketUrl(), true),
      plain,
      { goal: 0.9, rounds: UPLOAD_ROUNDS },
    ),
  );
if (only.includes("undeclared"))
  rows.push(
    await compare(
      `${SIZE_MIB} MiB upload into R2 through our routes, no digest declared (ticket PUT)`,
      async () => timedPut(await ticketUrl()),
      plain,
      { goal: 0.9, rounds: UPLOAD_ROUNDS },
    ),
  );
if (only.includes("declared-vs-sha256"))
  rows.push(
    await compare(
      `${SIZE_MIB} MiB upload through our routes, sha256 declared, vs the plain Worker asking R2 to verify it`,
      async () => timedPut(await ticketUrl(), true),
      {
        name: "plain Worker: env.FILES.put(key, request.body, { sha256 })",
        run: () => timedPut(`http://bench.test/plain-sha256/v${round++}`, true),
      },
      { rounds: UPLOAD_ROUNDS },
    ),
  );
if (only.includes("plain-sha256"))
  rows.push(
    await compare(
      `${SIZE_MIB} MiB plain Worker with R2 checking the digest: put(key, body, { sha256 })`,
      () => timedPut(`http://bench.test/plain-sha256/s${round++}`, true),
      plain,
      { rounds: UPLOAD_ROUNDS },
    ),
  );

if (rows.length > 0) {
  // Each upload row's wall ratio beside its CPU ratio (workerd's busy CPU, which holds miniflare's
  // R2 too): under load the wall moves far more than the CPU does.
  console.log(`upload rows, ${UPLOAD_ROUNDS} paired rounds each (median, min–max):`);
  for (const row of rows) {
    const range = (s: { min: number; median: number; max: number }) =>
      `${s.median.toFixed(2)} (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
    const cpu = row.cpuRatio ? range(row.cpuRatio) : "?";
    console.log(`  wall ${range(row.ratio)} · CPU ${cpu} · ${row.name}`);
  }
}

if (process.env.BENCH_PROFILE === "1") {
  // Each step of our upload alone, on the same body: where the time goes.
  for (const step of (
    process.env.BENCH_PROFILE_STEPS ??
    "drain,hash,node-drain,part-sink,store-put,store-put-sized,store-put-wrapped,byob-drain,byob-hash,byob-digest,digest-only,tee-put,tee-fixed,tee-byob,put-then-hash,byob-fixed,fixed-fresh,fixed-reuse,fixed-reuse-4m,fixed-reuse-nohash,store-put-chunks"
  ).split(",")) {
    const ours: { seconds: number; cpuSeconds: number }[] = [];
    const plain: { seconds: number; cpuSeconds: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      ours.push(await timedPut(`http://bench.test/profile/${step}`));
      plain.push(await timedPut(`http://bench.test/plain/p${i}`));
    }
    const of = (list: typeof ours, key: "seconds" | "cpuSeconds") => fmt(spread(list.map((s) => s[key])), 3);
    console.log(
      `profile ${step.padEnd(15)} s ${of(ours, "seconds")} CPU ${of(ours, "cpuSeconds")} · plain put s ${of(plain, "seconds")} CPU ${of(plain, "cpuSeconds")} (min/median/max)`,
    );
  }
}

const kinds = [
  ["mint", "mint, minter (node:crypto via nodejs_compat)"],
  ["node-hmac", "HMAC sign, node:crypto createHmac"],
  ["subtle-sign", "HMAC sign, Web Crypto (subtle.sign)"],
  ["verify", "verify, minter (node:crypto via nodejs_compat)"],
  ["subtle-verify", "HMAC verify, Web Crypto (subtle.verify)"],
] as const;
const signing: Record<string, { min: number; median: number; max: number }> = {};
for (const [kind] of kinds) await send(`http://bench.test/sign?kind=${kind}&n=${SIGN_OPS / 10}`);
for (const [kind, label] of kinds) {
  const rates: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    const response = await send(`http://bench.test/sign?kind=${kind}&n=${SIGN_OPS}`);
    const { ok } = (await response.json()) as { ok: number };
    const seconds = (performance.now() - start) / 1000;
    if (ok !== SIGN_OPS) throw new Error(`${kind}: ${ok} of ${SIGN_OPS} succeeded`);
    rates.push(SIGN_OPS / seconds);
  }
  const s = spread(rates);
  signing[label] = { min: Math.round(s.min), median: Math.round(s.median), max: Math.round(s.max) };
  console.log(`${label.padEnd(48)} ops/s ${fmt(s, 0)} (min/median/max, ${SIGN_OPS} serial ops per round)`);
}

await mf.dispose();
report("workerd", rows, { sizeMiB: SIZE_MIB, signOps: SIGN_OPS, signing });
