/**
 * ResourceRegistry benchmark: `resources/list` pages of 100 in scopes of 1,000 and 100,000 files,
 * and `resources/read` of a 1 MiB blob, over the SDK's InMemoryTransport with a real Client.
 *
 *   npx tsx bench/registry.ts
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { built } from "./_built.js";

// Our code as its published build (bench/_built.ts).
const { ResourceRegistry, memoryStore } = await built<typeof import("../src/index.js")>("index");

interface Setup {
  registry: InstanceType<typeof ResourceRegistry>;
  client: Client;
  close(): Promise<void>;
}

async function setup(): Promise<Setup> {
  const registry = new ResourceRegistry({ store: memoryStore({ sweepInterval: 0 }) });
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  registry.attach(server);
  const client = new Client({ name: "bench-client", version: "1.0.0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  return {
    registry,
    client,
    async close() {
      await client.close();
      await server.close();
      await registry.close();
    },
  };
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((x, y) => x - y);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

async function fill(registry: InstanceType<typeof ResourceRegistry>, count: number): Promise<number> {
  const started = performance.now();
  const payload = new TextEncoder().encode("x");
  const batch = 500;
  for (let i = 0; i < count; i += batch) {
    const adds: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(count, i + batch); j++) {
      adds.push(
        registry.add(payload, { scope: "default", name: `dir ${j % 50}/file ${j}.txt`, kind: "upload" }),
      );
    }
    await Promise.all(adds);
  }
  return performance.now() - started;
}

/** Times every page of full walks over the scope (and the first page on its own). */
async function listPages(client: Client, minSamples: number): Promise<{ samples: number[]; files: number }> {
  const samples: number[] = [];
  let files = 0;
  while (samples.length < minSamples) {
    let cursor: string | undefined;
    files = 0;
    do {
      const started = performance.now();
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      samples.push(performance.now() - started);
      files += page.resources.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }
  return { samples, files };
}

async function main(): Promise<void> {
  const rows: Array<{ case: string; n: number; p50: number; p95: number }> = [];
  const figures: Record<string, number> = {};

  for (const size of [1_000, 100_000]) {
    const s = await setup();
    const fillMs = await fill(s.registry, size);
    // Warm up (JIT, lazy paths), then measure.
    await listPages(s.client, 20);
    const { samples, files } = await listPages(s.client, 300);
    if (files !== size) throw new Error(`walk saw ${files} files, expected ${size}`);
    const label = size === 1_000 ? "1k" : "100k";
    rows.push({
      case: `resources/list page of 100, scope of ${label}`,
      n: samples.length,
      p50: percentile(samples, 50),
      p95: percentile(samples, 95),
    });
    figures[`list_${label}_p50_ms`] = round(percentile(samples, 50));
    figures[`list_${label}_p95_ms`] = round(percentile(samples, 95));
    figures[`fill_${label}_ms`] = Math.round(fillMs);
    await s.close();
  }

  {
    const s = await setup();
    const file = await s.registry.add(randomBytes(1024 * 1024), { scope: "default", name: "blob.bin" });
    const uri = s.registry.uriFor(file);
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) await s.client.readResource({ uri });
    for (let i = 0; i < 100; i++) {
      const started = performance.now();
      const result = await s.client.readResource({ uri });
      samples.push(performance.now() - started);
      const blob = (result.contents[0] as { blob?: string }).blob;
      if (blob === undefined || Buffer.from(blob, "base64").length !== file.size) throw new Error("bad read");
    }
    rows.push({
      case: "resources/read of a 1 MiB blob",
      n: samples.length,
      p50: percentile(samples, 50),
      p95: percentile(samples, 95),
    });
    figures.read_1mib_p50_ms = round(percentile(samples, 50));
    figures.read_1mib_p95_ms = round(percentile(samples, 95));
    await s.close();
  }

  const width = Math.max(...rows.map((r) => r.case.length));
  console.log(
    `${"case".padEnd(width)}  ${"n".padStart(5)}  ${"p50 ms".padStart(8)}  ${"p95 ms".padStart(8)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.case.padEnd(width)}  ${String(row.n).padStart(5)}  ${row.p50.toFixed(3).padStart(8)}  ${row.p95.toFixed(3).padStart(8)}`,
    );
  }
  console.log(
    `(filling: 1k in ${figures.fill_1k_ms} ms, 100k in ${figures.fill_100k_ms} ms; node ${process.version})`,
  );
  console.log(`BENCH_JSON ${JSON.stringify(figures)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
