/**
 * The proxy's costs over loopback:
 * - pass-through: p50/p95 latency of a tool call through the proxy vs the same client straight to the
 *   same upstream, and through a plain JSON-RPC forwarder (all Streamable HTTP on 127.0.0.1; target:
 *   < 2 ms added at p50). The upstream, the proxy and the forwarder each run in a process of their own
 *   (`_proxy-peer.ts`), the clients in this one. Once on SDK v1 (a 2025 session, SDK v1 upstream), once
 *   on SDK v2 (a stateless 2026-07-28 client with a bearer token, SDK v2 upstream; the proxy's
 *   upstream client is then SDK v2's too);
 * - hand-over: a 256 MiB uploaded file to a path the upstream can read (the upload consumer's work,
 *   measured as a tool call whose upstream only stats the file) vs a raw file copy of the same file
 *   (target: ≥ 0.8× the copy's throughput). The HTTP upload itself is reported too.
 *
 *   npx tsx bench/proxy.ts
 *   BENCH_SIZE_MB=64 npx tsx bench/proxy.ts
 */
import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, open, realpath, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createFileProxy } from "../src/proxy/index.js";
import { startHttpFixture, V2_FIXTURE } from "../test/proxy/support.js";
import { cpuSeconds, type Peer, startPeer } from "./_lib.js";
import { PROXY_BENCH_TOKEN } from "./_proxy-peer.js";

const SIZE_MB = Number(process.env.BENCH_SIZE_MB ?? 256);
const SIZE = SIZE_MB * 1024 * 1024;
const CALLS = Number(process.env.BENCH_CALLS ?? 500);

async function client(url: string): Promise<Client> {
  const c = new Client({ name: "bench", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

async function modernClient(url: string): Promise<V2Client> {
  const c = new V2Client(
    { name: "bench", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await c.connect(
    new V2Transport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${PROXY_BENCH_TOKEN}` } },
    }),
  );
  return c;
}

interface EchoClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

async function latencies(c: EchoClient, calls: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = process.hrtime.bigint();
    await c.callTool({ name: "echo", arguments: { text: `call ${i}` } });
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return out;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Latencies of `calls` calls, and the busy CPU per call of the hop's process (`pid`) meanwhile. */
async function timed(c: EchoClient, calls: number, pid: number | undefined, into: number[], cpu: number[]) {
  const before = pid === undefined ? 0 : cpuSeconds(pid);
  into.push(...(await latencies(c, calls)));
  if (pid !== undefined) cpu.push(((cpuSeconds(pid) - before) * 1000) / calls);
}

function median(values: number[]): number {
  return percentile(values, 50);
}

/** A way to the upstream: its client, and the process of the hop in between (none when direct). */
interface Path {
  name: "direct" | "proxied" | "forwarded";
  client: EchoClient & { close(): Promise<void> };
  pid?: number;
}

const ROUNDS = 6;
const WARM_UP = 300;

/**
 * p50/p95 of each path, calls interleaved in rounds with the order rotated each round so machine
 * noise hits them alike, and the busy CPU per call of the proxy and forwarder processes.
 */
async function passThrough(paths: Path[]): Promise<Record<string, number>> {
  // Warm-up (JIT, sockets) on every path before anything is timed.
  for (const path of paths) await latencies(path.client, WARM_UP);
  const ms = new Map(paths.map((path) => [path.name, [] as number[]]));
  const cpu = new Map(paths.map((path) => [path.name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < paths.length; i++) {
      const path = paths[(i + round) % paths.length] as Path;
      await timed(path.client, CALLS / ROUNDS, path.pid, ms.get(path.name)!, cpu.get(path.name)!);
    }
  }
  const direct = ms.get("direct")!;
  const proxied = ms.get("proxied")!;
  const forwarded = ms.get("forwarded")!;
  return {
    calls: CALLS,
    directP50Ms: percentile(direct, 50),
    proxiedP50Ms: percentile(proxied, 50),
    forwarderP50Ms: percentile(forwarded, 50),
    directP95Ms: percentile(direct, 95),
    proxiedP95Ms: percentile(proxied, 95),
    addedP50Ms: percentile(proxied, 50) - percentile(direct, 50),
    forwarderAddedP50Ms: percentile(forwarded, 50) - percentile(direct, 50),
    proxyCpuMsPerCall: median(cpu.get("proxied")!),
    forwarderCpuMsPerCall: median(cpu.get("forwarded")!),
  };
}

function printPassThrough(label: string, row: Record<string, number>): void {
  const added = row.addedP50Ms as number;
  console.log(
    `pass-through (${label}): direct p50 ${row.directP50Ms?.toFixed(2)} ms, through the proxy ${row.proxiedP50Ms?.toFixed(2)} ms ` +
      `(+${added.toFixed(2)} ms; target < 2 ms) ${added < 2 ? "OK" : "MISSED"}; ` +
      `plain forwarder ${row.forwarderP50Ms?.toFixed(2)} ms (+${row.forwarderAddedP50Ms?.toFixed(2)} ms)`,
  );
  console.log(
    `  busy CPU per call in the hop's own process: proxy ${row.proxyCpuMsPerCall?.toFixed(2)} ms, plain forwarder ` +
      `${row.forwarderCpuMsPerCall?.toFixed(2)} ms (medians over ${ROUNDS} rounds; /proc clock ticks)`,
  );
}

const dir = await realpath(await mkdtemp(join(tmpdir(), "bench-proxy-")));
const fixture = await startHttpFixture({ OUTPUT_DIR: dir });
const v2Fixture = await startHttpFixture({}, 0, { fixture: V2_FIXTURE });
const peers: Peer[] = [];
/** A hop (`_proxy-peer.ts`) in its own process, in front of `upstream`. */
async function hop(kind: "v1" | "v2" | "forwarder", upstream: string): Promise<Peer> {
  const peer = await startPeer("_proxy-peer.ts", [kind, upstream]);
  peers.push(peer);
  return peer;
}
// The 256 MiB hand-over below runs through a proxy in this process (it measures a file copy, not a hop).
const proxy = await createFileProxy({
  config: {
    mcpServers: { up: { url: fixture.url } },
    proxy: { storage: { dir: join(dir, "store") }, limits: { maxBytes: SIZE + 1024 } },
    servers: {
      up: { handoffDir: join(dir, "handoff"), tools: { stat_file: { upload: { args: ["path"] } } } },
    },
  },
});
try {
  const { mcpUrl } = await proxy.listen();
  // SDK v1: a 2025 session, the same client on each path; the proxy and the forwarder each run in a
  // process of their own, so "busy CPU per call" is the hop's alone.
  const v1Proxy = await hop("v1", fixture.url);
  const v1Forwarder = await hop("forwarder", fixture.url);
  const v1Paths: Path[] = [
    { name: "direct", client: await client(fixture.url) },
    { name: "proxied", client: await client(String(v1Proxy.ready.url)), pid: v1Proxy.pid },
    { name: "forwarded", client: await client(String(v1Forwarder.ready.url)), pid: v1Forwarder.pid },
  ];
  const passThroughV1 = await passThrough(v1Paths);
  printPassThrough("SDK v1", passThroughV1);
  for (const path of v1Paths) await path.client.close();

  // SDK v2: a stateless 2026-07-28 client with a bearer token, on each path to an SDK v2 upstream
  // (the proxy's upstream client is then SDK v2's too).
  const v2Proxy = await hop("v2", v2Fixture.url);
  const v2Forwarder = await hop("forwarder", v2Fixture.url);
  const v2Paths: Path[] = [
    { name: "direct", client: await modernClient(v2Fixture.url) },
    { name: "proxied", client: await modernClient(String(v2Proxy.ready.url)), pid: v2Proxy.pid },
    { name: "forwarded", client: await modernClient(String(v2Forwarder.ready.url)), pid: v2Forwarder.pid },
  ];
  const passThroughV2 = await passThrough(v2Paths);
  printPassThrough("SDK v2, 2026-07-28 client", passThroughV2);
  for (const path of v2Paths) await path.client.close();

  const proxied = await client(mcpUrl);
  // the big file
  const source = join(dir, "big.bin");
  const handle = await open(source, "w");
  const chunk = randomBytes(8 * 1024 * 1024);
  for (let written = 0; written < SIZE; written += chunk.length)
    await handle.write(chunk, 0, Math.min(chunk.length, SIZE - written));
  await handle.close();

  const ticket = await proxied.callTool({ name: "get_upload_url", arguments: { filename: "big.bin" } });
  const { upload_url, handle: uploadHandle } = ticket.structuredContent as {
    upload_url: string;
    handle: string;
  };
  const uploadStarted = process.hrtime.bigint();
  const { openAsBlob } = await import("node:fs");
  const response = await fetch(`${upload_url}?filename=big.bin`, {
    method: "PUT",
    body: await openAsBlob(source),
  });
  if (response.status !== 201) throw new Error(`upload failed: ${response.status} ${await response.text()}`);
  const uploadSeconds = Number(process.hrtime.bigint() - uploadStarted) / 1e9;

  // Rounds of: a raw copy of the file, then the hand-over of the uploaded file; best of each.
  let copySeconds = Number.POSITIVE_INFINITY;
  let handSeconds = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const copyStarted = process.hrtime.bigint();
    await copyFile(source, join(dir, "copy.bin"));
    copySeconds = Math.min(copySeconds, Number(process.hrtime.bigint() - copyStarted) / 1e9);
    await rm(join(dir, "copy.bin"));
    const handStarted = process.hrtime.bigint();
    const stat = await proxied.callTool({ name: "stat_file", arguments: { path: uploadHandle } });
    handSeconds = Math.min(handSeconds, Number(process.hrtime.bigint() - handStarted) / 1e9);
    const text = (stat.content as Array<{ text: string }>)[0]?.text;
    if (text !== `size ${SIZE}`) throw new Error(`the upstream saw ${text}`);
  }

  const mib = SIZE / 1024 / 1024;
  const handOver = {
    sizeMiB: mib,
    rawCopyMiBps: mib / copySeconds,
    handOverMiBps: mib / handSeconds,
    ratio: copySeconds / handSeconds,
    httpUploadMiBps: mib / uploadSeconds,
  };
  console.log(
    `hand-over of ${mib} MiB: raw copy ${handOver.rawCopyMiBps.toFixed(0)} MiB/s, upload handle → upstream path ` +
      `${handOver.handOverMiBps.toFixed(0)} MiB/s (${handOver.ratio.toFixed(2)}×; target ≥ 0.8×) ${handOver.ratio >= 0.8 ? "OK" : "MISSED"}; ` +
      `HTTP upload ${handOver.httpUploadMiBps.toFixed(0)} MiB/s`,
  );
  console.log(
    `BENCH_JSON ${JSON.stringify({ bench: "proxy", load: loadavg(), passThrough: passThroughV1, passThroughV2, handOver })}`,
  );
  await proxied.close();
} finally {
  for (const peer of peers) await peer.stop();
  await proxy.close();
  await fixture.stop();
  await v2Fixture.stop();
  await rm(dir, { recursive: true, force: true });
}
