/**
 * Cold listing at scale on `fsStore`: a scope of 100k files (and 1M with `BENCH_FS_LIST_1M=1`),
 * made once in a cache folder (`BENCH_CACHE_DIR`, default `~/.cache/mcp-file-bridge-bench`) and
 * reused by later runs. Each round starts a **new process** (a replica restart: page cache warm,
 * nothing in memory) and times there:
 * - `fsStore.list` first page of 1,000 (the store reads its list index, `ids.log`);
 * - `fsStore.list` page of 1,000 at a cursor in the middle, right after;
 * - the first `resources/list` (page of 100) of a ResourceRegistry over that store, through a real
 *   SDK Client (InMemoryTransport), in another new process;
 * - for reference, what every page cost before the index: one `readdir` of the folder and a sort of
 *   its ids (the walk the old `list` made per page);
 * Rows print min / median / max over the rounds, with the load.
 *
 *   npx tsx bench/fs-cold-list.ts            # 100k (makes the cache the first time: ~1–3 min)
 *   BENCH_FS_LIST_1M=1 npx tsx bench/fs-cold-list.ts   # also 1M (~4 GiB of disk, ~15–30 min once)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { built } from "./_built.js";
import { fmt, loadLine, roundsAtLeast, spread } from "./_lib.js";

// Our code as its published build (bench/_built.ts).
const { ResourceRegistry, fsStore } = await built<typeof import("../src/index.js")>("index");

const here = fileURLToPath(import.meta.url);
const SCOPE = "default";
const CACHE = process.env.BENCH_CACHE_DIR ?? join(homedir(), ".cache", "mcp-file-bridge-bench");

/** Makes `count` files in the store at `dir` once (a marker file says it is done). */
async function ensureFiles(dir: string, count: number): Promise<void> {
  const done = join(dir, `.made-${count}`);
  if (existsSync(done)) return;
  mkdirSync(dir, { recursive: true });
  const store = fsStore(dir, { sweepInterval: 0 });
  const started = performance.now();
  const payload = new TextEncoder().encode("x");
  const have = (await store.usage(SCOPE)).files;
  const parallel = 64;
  let next = have;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        await store.put(payload, { scope: SCOPE, name: `dir ${i % 50}/file ${i}.txt`, kind: "upload" });
        if (i % 50_000 === 0) console.log(`    made ${i} of ${count} files`);
      }
    }),
  );
  await store.list(SCOPE, { limit: 1 }); // builds the list index once
  await store.close?.();
  writeFileSync(done, "");
  console.log(`    made ${count} files in ${Math.round((performance.now() - started) / 1000)} s`);
}

/** One cold round in this (new) process: prints a JSON line of figures. */
async function child(mode: string, dir: string): Promise<void> {
  const out: Record<string, number> = {};
  if (mode === "store") {
    const store = fsStore(dir, { sweepInterval: 0 });
    let t = performance.now();
    const first = await store.list(SCOPE, { limit: 1000 });
    out.firstPageMs = performance.now() - t;
    // A page in the middle: walk cursors from the first page's ids (ids are time-sorted).
    let cursor = first.nextCursor;
    for (let i = 0; i < 3 && cursor; i++)
      cursor = (await store.list(SCOPE, { limit: 1000, cursor })).nextCursor;
    t = performance.now();
    await store.list(SCOPE, { limit: 1000, ...(cursor ? { cursor } : {}) });
    out.laterPageMs = performance.now() - t;
    // The old per-page walk, for reference.
    const folder = join(dir, (await readdir(dir)).find((name) => /^[0-9a-f]{32}$/.test(name)) as string);
    t = performance.now();
    const names = await readdir(folder);
    names.filter((name) => name.endsWith(".json")).sort();
    out.folderWalkMs = performance.now() - t;
    await store.close?.();
  } else {
    const registry = new ResourceRegistry({ store: fsStore(dir, { sweepInterval: 0 }) });
    const server = new McpServer({ name: "bench", version: "1.0.0" });
    registry.attach(server);
    const client = new Client({ name: "bench-client", version: "1.0.0" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    const t = performance.now();
    const page = await client.listResources();
    out.registryFirstPageMs = performance.now() - t;
    if (page.resources.length !== 100) throw new Error(`first page had ${page.resources.length} files`);
    // Exit without waiting for the background load of the rest.
  }
  console.log(`RESULT ${JSON.stringify(out)}`);
  process.exit(0);
}

function runChild(mode: string, dir: string, count: number): Record<string, number> {
  const run = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", here, "--child", mode, dir, String(count)],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const line = run.stdout.split("\n").find((l) => l.startsWith("RESULT "));
  if (!line) throw new Error(`child ${mode} failed (exit ${run.status})`);
  return JSON.parse(line.slice("RESULT ".length)) as Record<string, number>;
}

async function main(): Promise<void> {
  if (process.argv[2] === "--child") return child(process.argv[3] as string, process.argv[4] as string);
  const sizes = [100_000, ...(process.env.BENCH_FS_LIST_1M === "1" ? [1_000_000] : [])];
  const rounds = roundsAtLeast(5);
  console.log(loadLine());
  const json: Record<string, unknown> = {};
  for (const size of sizes) {
    const dir = join(CACHE, `fs-list-${size}`);
    await ensureFiles(dir, size);
    const samples: Record<string, number[]> = {};
    for (let round = 0; round < rounds; round++) {
      // Alternate which process goes first, so neither always meets the other's leftovers.
      const order = round % 2 === 0 ? ["store", "registry"] : ["registry", "store"];
      for (const mode of order) {
        for (const [key, value] of Object.entries(runChild(mode, dir, size))) {
          samples[key] = [...(samples[key] ?? []), value];
        }
      }
    }
    const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`;
    const rows: Array<[string, string]> = [
      [`fsStore.list first page of 1,000 after a start, ${label} files (ms)`, "firstPageMs"],
      [`fsStore.list later page of 1,000, ${label} files (ms)`, "laterPageMs"],
      [`first resources/list (page of 100) after a start, ${label} files (ms)`, "registryFirstPageMs"],
      [
        `  reference: one walk of the folder (readdir + sort), what each page cost before (ms)`,
        "folderWalkMs",
      ],
    ];
    for (const [name, key] of rows) {
      const values = samples[key] ?? [];
      console.log(`${name}\n    min / median / max: ${fmt(spread(values), 1)}`);
      json[`${label}_${key}`] = spread(values);
    }
  }
  console.log(loadLine());
  console.log(`BENCH_JSON ${JSON.stringify({ bench: "fs-cold-list", rounds, ...json })}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
