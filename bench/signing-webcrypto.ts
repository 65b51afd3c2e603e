/**
 * Signed-URL signing with Web Crypto vs Node crypto (issue 46): the HS256 sign and verify of a
 * download token as `SignedUrlMinter` makes it, per second, (a) through the minter (its synchronous
 * `node:crypto` HMAC, the path Node, Deno and Bun take), (b) the same JWS with Web Crypto's
 * `crypto.subtle.sign` / `verify` (HMAC-SHA256, key imported once), the only HMAC a runtime without
 * `node:crypto` has, next to (c) the minter's own synchronous HMAC over the same input (HMAC only, so
 * (b) and (c) compare like for like; (a) adds the claims, ids and base64url). All of them produce
 * and accept exactly the tokens the minter made.
 *
 *   npx tsx bench/signing-webcrypto.ts
 *
 * Prints a table and a final `BENCH_JSON {...}` line.
 */
import { timingSafeEqual } from "node:crypto";
import { performance } from "node:perf_hooks";
import { HmacSha256 } from "../src/signing/hmac.js";
import { built } from "./_built.js";

// Our code as its published build (bench/_built.ts).
const { SignedUrlMinter } = await built<typeof import("../src/index.js")>("index");

const OPS = Number(process.env.BENCH_OPS ?? 20_000);
const WARMUP = 2_000;
const SECRET = "bench-secret-bench-secret-bench-secret-0123";
const FILE_ID = "01jabcdefghjkmnpqrstvwxyz0";

const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:3000" });
const encoder = new TextEncoder();
const key = await crypto.subtle.importKey(
  "raw",
  encoder.encode(SECRET),
  { name: "HMAC", hash: "SHA-256" },
  false,
  ["sign", "verify"],
);

const hmac = new HmacSha256(encoder.encode(SECRET));

/** The minter's own HMAC (synchronous `node:crypto`), over the same input: HMAC only, like Web Crypto's rows. */
async function nodeSign(signingInput: string): Promise<string> {
  return `${signingInput}.${hmac.digest(signingInput).toString("base64url")}`;
}

async function nodeCheck(token: string): Promise<boolean> {
  const dot = token.lastIndexOf(".");
  const signature = Buffer.from(token.slice(dot + 1), "base64url");
  const expected = hmac.digest(token.slice(0, dot));
  return signature.length === expected.length && timingSafeEqual(signature, expected);
}

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

/** The minter's token, signed again with Web Crypto over the same header and payload. */
async function webMint(signingInput: string): Promise<string> {
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(signingInput)));
  return `${signingInput}.${base64url(signature)}`;
}

async function webVerify(token: string): Promise<boolean> {
  const dot = token.lastIndexOf(".");
  const signature = Buffer.from(token.slice(dot + 1), "base64url");
  return crypto.subtle.verify("HMAC", key, signature, encoder.encode(token.slice(0, dot)));
}

async function rate(count: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < count; i++) await op(i);
  return count / ((performance.now() - start) / 1000);
}

const tokens: string[] = [];
for (let i = 0; i < WARMUP + OPS; i++) {
  tokens.push((await minter.mint({ scope: "bench", fileId: `${FILE_ID}${i}`, action: "download" })).token);
}
const inputs = tokens.map((token) => token.slice(0, token.lastIndexOf(".")));

// The two paths agree: Web Crypto makes the minter's signature and accepts its tokens.
if ((await webMint(inputs[0] as string)) !== tokens[0]) throw new Error("Web Crypto signature differs");
if ((await nodeSign(inputs[0] as string)) !== tokens[0]) throw new Error("node:crypto signature differs");
if (!(await webVerify(tokens[0] as string))) throw new Error("Web Crypto refused the minter's token");
const tampered = `${(tokens[0] as string).slice(0, -2)}AA`;
if (await webVerify(tampered === tokens[0] ? `${tampered.slice(0, -2)}BA` : tampered)) {
  throw new Error("Web Crypto accepted a tampered token");
}

const nodeMint = (i: number) => minter.mint({ scope: "bench", fileId: `${FILE_ID}${i}`, action: "download" });
const nodeVerify = (i: number) => minter.verify(tokens[i] as string, { action: "download" });
await rate(WARMUP, nodeMint);
await rate(WARMUP, nodeVerify);
await rate(WARMUP, (i) => webMint(inputs[i] as string));
await rate(WARMUP, (i) => nodeSign(inputs[i] as string));
await rate(WARMUP, (i) => nodeCheck(tokens[i] as string));
await rate(WARMUP, (i) => webVerify(tokens[i] as string));

const rows = [
  { case: "mint, minter (node:crypto)", opsPerSec: await rate(OPS, (i) => nodeMint(WARMUP + i)) },
  {
    case: "sign, node:crypto (HMAC only)",
    opsPerSec: await rate(OPS, (i) => nodeSign(inputs[WARMUP + i] as string)),
  },
  {
    case: "sign, Web Crypto (HMAC only)",
    opsPerSec: await rate(OPS, (i) => webMint(inputs[WARMUP + i] as string)),
  },
  { case: "verify, minter (node:crypto)", opsPerSec: await rate(OPS, (i) => nodeVerify(WARMUP + i)) },
  {
    case: "verify, Web Crypto (HMAC only)",
    opsPerSec: await rate(OPS, (i) => webVerify(tokens[WARMUP + i] as string)),
  },
];

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(`HS256 download tokens, ${OPS} ops per row, serial, node ${process.version}`);
for (const row of rows) console.log(`${row.case.padEnd(34)} ${fmt(row.opsPerSec).padStart(10)} ops/s`);
console.log(
  `BENCH_JSON ${JSON.stringify({
    bench: "signing-webcrypto",
    ops: OPS,
    results: Object.fromEntries(rows.map((row) => [row.case, Math.round(row.opsPerSec)])),
  })}`,
);
