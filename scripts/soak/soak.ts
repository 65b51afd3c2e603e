/**
 * A bounded soak of one server on 127.0.0.1 (issue 21, item 8): `users` clients loop over the whole
 * flow — ask the upload-URL tool for a ticket, upload a random file to it, find it in
 * `resources/list`, read it back and compare its sha256 — opening a fresh MCP session every
 * `--churn` rounds. The server runs in a child process; its memory is sampled (after a full GC)
 * every `--sample` seconds. Prints ops, errors, p50/p99 per operation, and the RSS and heap drift
 * from the first sample after warm-up to the last, plus the state the server holds.
 *
 * Clients leave their old session without DELETE, as most do; the server closes a session after
 * `--session-idle` seconds without a request (30 s here, 10 min in the examples), drops a scope's
 * index `--index-idle` seconds after its last use, and keeps each upload's ticket record (what its
 * `upload://` handle resolves through) in the state store for `--handle-ttl` seconds (1 h, the
 * default `handleTtl`): the state a long run holds, each part bounded by its own time.
 *
 *   npm run soak                                   # 90 s, 20 users
 *   npm run soak -- --duration 300 --users 40 --churn 10 --snapshots /tmp/heap
 *
 * `--snapshots DIR` writes heap snapshots after warm-up, half-way and at the end
 * (`after-warmup.heapsnapshot`, `middle.heapsnapshot`, `end.heapsnapshot`).
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "90" },
    users: { type: "string", default: "20" },
    churn: { type: "string", default: "20" },
    sample: { type: "string", default: "5" },
    warmup: { type: "string", default: "15" },
    size: { type: "string", default: "16384" },
    "session-idle": { type: "string", default: "30" },
    "index-idle": { type: "string", default: "600" },
    "handle-ttl": { type: "string", default: "3600" },
    snapshots: { type: "string" },
  },
});
const durationMs = Number(values.duration) * 1000;
const users = Number(values.users);
const churn = Number(values.churn);
const sampleMs = Number(values.sample) * 1000;
const warmupMs = Number(values.warmup) * 1000;
const size = Number(values.size);
for (const [name, value] of Object.entries({ durationMs, users, churn, sampleMs, size })) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
}
if (durationMs > 2 * 3600_000) throw new Error("--duration is capped at 2 hours");

const dir = await mkdtemp(join(tmpdir(), "mfb-soak-"));
const child = spawn(
  process.execPath,
  [
    "--expose-gc",
    "--import",
    "tsx",
    "scripts/soak/server.ts",
    dir,
    String(Number(values["session-idle"]) * 1000),
    String(Number(values["index-idle"]) * 1000),
    String(Number(values["handle-ttl"]) * 1000),
  ],
  {
    stdio: ["pipe", "pipe", "inherit"],
  },
);
const lines = createInterface({ input: child.stdout });
const waiting: Array<(line: string) => void> = [];
let ready: (url: string) => void = () => {};
const started = new Promise<string>((resolve) => {
  ready = resolve;
});
lines.on("line", (line) => {
  if (line.startsWith("READY ")) ready((JSON.parse(line.slice(6)) as { url: string }).url);
  else if (line.startsWith("DONE ")) waiting.shift()?.(line.slice(5));
});
type Stats = Record<string, number> & { rss: number; heapUsed: number; external: number };
async function ask(command: Record<string, unknown>): Promise<Stats> {
  const answer = new Promise<string>((resolve) => waiting.push(resolve));
  child.stdin.write(`${JSON.stringify(command)}\n`);
  return JSON.parse(await answer) as Stats;
}
const url = await started;
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`the soak runs on 127.0.0.1 only, not ${url}`);

const deadline = Date.now() + durationMs;
const latencies = new Map<string, number[]>();
const errors = new Map<string, number>();
let ops = 0;
let refused = 0;
async function timed<T>(name: string, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    const result = await work();
    ops++;
    const list = latencies.get(name) ?? [];
    latencies.set(name, list);
    list.push(performance.now() - start);
    return result;
  } catch (error) {
    const message = (error as Error).message;
    // The server's session cap answering 429 is the bound working, not an error: counted apart.
    if (name === "connect" && message.includes("Too many sessions")) refused++;
    else {
      const key = `${name}: ${message.slice(0, 80)}`;
      errors.set(key, (errors.get(key) ?? 0) + 1);
    }
    throw error;
  }
}

/** A new MCP session; past the server's session cap (429) it backs off 1-2 s and tries again, as a client should. */
async function session(): Promise<Client> {
  for (;;) {
    const client = new Client({ name: "soak", version: "1.0.0" });
    try {
      await timed("connect", () => client.connect(new StreamableHTTPClientTransport(new URL("/mcp", url))));
      return client;
    } catch (error) {
      if (!(error as Error).message.includes("Too many sessions") || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000 + Math.random() * 1000));
    }
  }
}

async function user(me: number): Promise<void> {
  const first = await session().catch(() => undefined);
  if (!first) return;
  let client: Client = first;
  for (let round = 1; Date.now() < deadline; round++) {
    try {
      const body = randomBytes(size);
      const sha256 = createHash("sha256").update(body).digest("hex");
      const name = `u${me}-r${round}.bin`;
      const ticket = await timed("ticket", async () => {
        const result = await client.callTool({ name: "get_upload_url", arguments: { filename: name } });
        if (result.isError) throw new Error(JSON.stringify(result.content).slice(0, 80));
        return result.structuredContent as { upload_url: string };
      });
      await timed("upload", async () => {
        const response = await fetch(`${ticket.upload_url}?filename=${name}`, { method: "PUT", body });
        const reply = (await response.json()) as { files?: Array<{ sha256: string }> };
        if (response.status !== 201 || reply.files?.[0]?.sha256 !== sha256) {
          throw new Error(`upload ${response.status}`);
        }
      });
      const uri = await timed("list", async () => {
        const listed = await client.listResources();
        const found = listed.resources.find((resource) => resource.name === name);
        if (!found) throw new Error("uploaded file not listed");
        return found.uri;
      });
      await timed("read", async () => {
        const read = await client.readResource({ uri });
        const blob = (read.contents[0] as { blob?: string }).blob;
        const got =
          blob === undefined ? "" : createHash("sha256").update(Buffer.from(blob, "base64")).digest("hex");
        if (got !== sha256) throw new Error("read back another sha256");
      });
    } catch {
      // counted in `errors`
    }
    if (round % churn === 0) {
      await client.close().catch(() => {});
      // Without a session this user stops (the error is counted), rather than spin on a closed client.
      const next = await session().catch(() => undefined);
      if (!next) return;
      client = next;
    }
  }
  await client.close().catch(() => {});
}

const samples: Array<Stats & { at: number }> = [];
const t0 = Date.now();
const sampler = setInterval(() => {
  ask({ cmd: "stats" }).then((stats) => samples.push({ ...stats, at: Date.now() - t0 }));
}, sampleMs);
if (values.snapshots) await mkdir(values.snapshots, { recursive: true });
const snapshot = async (label: string) => {
  if (values.snapshots) await ask({ cmd: "snapshot", path: join(values.snapshots, `${label}.heapsnapshot`) });
};
setTimeout(() => void snapshot("after-warmup"), warmupMs).unref();
setTimeout(() => void snapshot("middle"), warmupMs + (durationMs - warmupMs) / 2).unref();
await Promise.all(Array.from({ length: users }, (_, me) => user(me)));
clearInterval(sampler);
samples.push({ ...(await ask({ cmd: "stats" })), at: Date.now() - t0 });
await snapshot("end");
child.stdin.end();
await new Promise((resolve) => child.once("exit", resolve));
await rm(dir, { recursive: true, force: true });

const MiB = 1024 * 1024;
const pct = (list: number[], p: number) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const after = samples.filter((sample) => sample.at >= warmupMs);
const first = after[0] ?? samples[0];
const last = samples.at(-1);
const minutes = first && last ? (last.at - first.at) / 60_000 : 0;
const drift = (key: string) => (first && last ? ((last[key] ?? 0) - (first[key] ?? 0)) / MiB : 0);
const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
console.log(
  `soak: ${users} users, ${values.duration} s, a new session every ${churn} rounds, ${size}-byte files`,
);
console.log(
  `ops ${ops}, errors ${errorCount} (${((100 * errorCount) / Math.max(1, ops + errorCount)).toFixed(2)}%), sessions refused by the cap (429, retried) ${refused}`,
);
for (const [name, list] of latencies) {
  console.log(
    `  ${name.padEnd(8)} n=${list.length} p50 ${pct(list, 50).toFixed(1)} ms  p99 ${pct(list, 99).toFixed(1)} ms`,
  );
}
for (const [what, count] of errors) console.log(`  error x${count}: ${what}`);
if (first && last) {
  console.log(
    `memory over ${minutes.toFixed(1)} min after warm-up: RSS ${(first.rss / MiB).toFixed(1)} -> ${(last.rss / MiB).toFixed(1)} MiB (${drift("rss").toFixed(1)} MiB, ${(drift("rss") / Math.max(minutes, 1e-9)).toFixed(2)} MiB/min); heap used ${drift("heapUsed").toFixed(1)} MiB; external ${drift("external").toFixed(1)} MiB`,
  );
  console.log(
    `held at the end: sessions ${last.sessions}, registry attachments ${last.attachments}, scope indexes ${last.scopeIndexes}, scope mutexes ${last.scopeMutexes}`,
  );
}
console.log(
  `samples: ${JSON.stringify(samples.map((s) => [Math.round(s.at / 1000), +(s.rss / MiB).toFixed(1), +(s.heapUsed / MiB).toFixed(1), s.scopeIndexes]))}`,
);
process.exit(errorCount > 0 ? 1 : 0);
