/**
 * Mint and verify throughput of SignedUrlMinter, single-use off and on (memoryState).
 *
 *   npx tsx bench/mint-verify.ts
 *
 * Each case runs a warm-up, then a fixed number of operations, once one after another ("serial",
 * latency-bound) and once in batches of 32 concurrent calls ("batched"). Prints a table and a final
 * `BENCH_JSON {...}` line.
 */
import { performance } from "node:perf_hooks";
import { built } from "./_built.js";

// Our code as its published build (bench/_built.ts).
const { SignedUrlMinter, memoryState } = await built<typeof import("../src/index.js")>("index");

const OPS = Number(process.env.BENCH_OPS ?? 20_000);
const WARMUP = 2_000;
const BATCH = 32;
const FILE_ID = "01jabcdefghjkmnpqrstvwxyz0";

const state = memoryState();
const minter = new SignedUrlMinter({
  secret: "bench-secret-bench-secret-bench-secret-0123",
  baseUrl: "http://127.0.0.1:3000",
  state,
});

type Op = (i: number) => Promise<unknown>;

async function serial(op: Op, count: number, offset = 0): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await op(offset + i);
  return count / ((performance.now() - start) / 1000);
}

async function batched(op: Op, count: number, offset = 0): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i += BATCH) {
    const size = Math.min(BATCH, count - i);
    await Promise.all(Array.from({ length: size }, (_, j) => op(offset + i + j)));
  }
  return count / ((performance.now() - start) / 1000);
}

async function mintTokens(count: number, singleUse: boolean): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    tokens.push(
      (await minter.mint({ scope: "bench", fileId: FILE_ID, action: "download", singleUse })).token,
    );
  }
  return tokens;
}

interface Row {
  case: string;
  serialOpsPerSec: number;
  batchedOpsPerSec: number;
}

async function measure(name: string, singleUse: boolean): Promise<Row[]> {
  const mint: Op = () => minter.mint({ scope: "bench", fileId: FILE_ID, action: "download", singleUse });
  await serial(mint, WARMUP);
  const mintRow: Row = {
    case: `mint (${name})`,
    serialOpsPerSec: await serial(mint, OPS),
    batchedOpsPerSec: await batched(mint, OPS),
  };

  // Single-use tokens verify once each, so every verify gets its own token.
  const tokens = await mintTokens(WARMUP + 2 * OPS, singleUse);
  let failures = 0;
  const verify: Op = async (i) => {
    const claims = await minter.verify(tokens[i] as string, {
      action: "download",
      scope: "bench",
      fileId: FILE_ID,
    });
    if (claims.singleUse !== singleUse) failures++;
  };
  await serial(verify, WARMUP);
  const verifyRow: Row = {
    case: `verify (${name})`,
    serialOpsPerSec: await serial(verify, OPS, WARMUP),
    batchedOpsPerSec: await batched(verify, OPS, WARMUP + OPS),
  };
  if (failures > 0) throw new Error(`${failures} verifications returned the wrong claims`);
  if (singleUse) {
    // Sanity: the replay of a used token must fail.
    const replay = await minter.verify(tokens[0] as string, { action: "download" }).then(
      () => "accepted",
      (error: { code?: string }) => error.code,
    );
    if (replay !== "TOKEN_ALREADY_USED") throw new Error(`replay was ${replay}`);
  }
  return [mintRow, verifyRow];
}

// Global warm-up so the first measured case does not pay for JIT compilation.
for (const token of await mintTokens(WARMUP * 2, false)) await minter.verify(token, { action: "download" });

const rows = [...(await measure("single-use off", false)), ...(await measure("single-use on", true))];
await state.close?.();

const fmt = (n: number) => Math.round(n).toLocaleString("en-US").padStart(10);
console.log(`SignedUrlMinter, ${OPS} ops per cell, batches of ${BATCH}, node ${process.version}`);
console.log(`${"case".padEnd(28)} ${"serial ops/s".padStart(12)} ${"batched ops/s".padStart(14)}`);
for (const row of rows) {
  console.log(
    `${row.case.padEnd(28)} ${fmt(row.serialOpsPerSec).padStart(12)} ${fmt(row.batchedOpsPerSec).padStart(14)}`,
  );
}
const json = Object.fromEntries(
  rows.map((row) => [
    row.case.replace(/[^a-z]+/gi, "_").replace(/_$/, ""),
    { serial: Math.round(row.serialOpsPerSec), batched: Math.round(row.batchedOpsPerSec) },
  ]),
);
console.log(`BENCH_JSON ${JSON.stringify({ bench: "mint-verify", ops: OPS, batch: BATCH, results: json })}`);
