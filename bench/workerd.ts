/**
 * Workers (issue 46), on workerd locally through miniflare (both from npm):
 *
 * 1. A 64 MiB upload into R2 through our routes (a ticket `PUT` to `createFileRoutes` on an
 *    `r2Store`, the record written last) vs a plain Worker that streams the same request body into
 *    R2 with one `env.FILES.put(key, request.body)`. Goal: ratio ≥ 0.9. Two rows: the client
 *    declares the sha256 (`X-Content-SHA256`: the body goes to R2 unread, R2 verifies the digest),
 *    and it does not (the body is read in 1 MiB BYOB reads, hashed, and written into one put of
 *    its `Content-Length`). A
 *    third row shows the plain Worker with R2 checking the digest (`put(key, body, { sha256 })`):
 *    what miniflare's own hashing adds (real R2 verifies on its side).
 * 2. Signed-URL signing inside workerd: the minter's `mint` / `verify` (its synchronous
 *    `node:crypto` HMAC, from `nodejs_compat`), `createHmac` alone, and Web Crypto's
 *    `crypto.subtle.sign` / `verify` (HMAC-SHA256, key imported once) over the same token, per second.
 *
 *   npx tsx bench/workerd.ts
 *   BENCH_SHORT=1 npx tsx bench/workerd.ts   # 8 MiB upload, fewer signing ops
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
  spread,
} from "./_lib.js";

const SHORT = process.env.BENCH_SHORT === "1";
const SIZE_MIB = positiveInt("BENCH_WORKERD_MIB", SHORT ? 8 : 64);
const SIGN_OPS = positiveInt("BENCH_SIGN_OPS", SHORT ? 2_000 : 20_000);

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
const only = (process.env.BENCH_WORKERD_ROWS ?? "declared,undeclared,plain-sha256").split(",");
if (only.includes("declared"))
  rows.push(
    await compare(
      `${SIZE_MIB} MiB upload into R2 through our routes, sha256 declared (ticket PUT, X-Content-SHA256)`,
      async () => timedPut(await ticketUrl(), true),
      plain,
      { goal: 0.9 },
    ),
  );
if (only.includes("undeclared"))
  rows.push(
    await compare(
      `${SIZE_MIB} MiB upload into R2 through our routes, no digest declared (ticket PUT)`,
      async () => timedPut(await ticketUrl()),
      plain,
      { goal: 0.9 },
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
    ),
  );
if (only.includes("plain-sha256"))
  rows.push(
    await compare(
      `${SIZE_MIB} MiB plain Worker with R2 checking the digest: put(key, body, { sha256 })`,
      () => timedPut(`http://bench.test/plain-sha256/s${round++}`, true),
      plain,
    ),
  );

if (process.env.BENCH_PROFILE === "1") {
  // Each step of our upload alone, on the same body: where the time goes.
  for (const step of (
    process.env.BENCH_PROFILE_STEPS ??
    "drain,hash,node-drain,part-sink,store-put,store-put-sized,store-put-wrapped,byob-drain,byob-hash,digest-only,tee-put,tee-fixed,tee-byob,put-then-hash,byob-fixed"
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
