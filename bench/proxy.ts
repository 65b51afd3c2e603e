/**
 * The proxy's costs over loopback:
 * - pass-through: p50/p95 latency of a tool call through the proxy vs straight to the same upstream
 *   (both Streamable HTTP on 127.0.0.1; target: < 2 ms added at p50); once on SDK v1 (a 2025
 *   session), once on SDK v2 (a stateless 2026-07-28 client with a bearer token; the proxy's upstream
 *   client is then SDK v2's too);
 * - hand-over: a 256 MiB uploaded file to a path the upstream can read (the upload consumer's work,
 *   measured as a tool call whose upstream only stats the file) vs a raw file copy of the same file
 *   (target: ≥ 0.8× the copy's throughput). The HTTP upload itself is reported too.
 *
 *   npx tsx bench/proxy.ts
 *   BENCH_SIZE_MB=64 npx tsx bench/proxy.ts
 */
import { randomBytes } from "node:crypto";
import { copyFile, mkdtemp, open, realpath, rm } from "node:fs/promises";
import { createServer, Agent as HttpAgent, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { bearerTokens, createFileProxy, parseBearerTokens } from "../src/proxy/index.js";
import { startHttpFixture } from "../test/proxy/support.js";

const SIZE_MB = Number(process.env.BENCH_SIZE_MB ?? 256);
const SIZE = SIZE_MB * 1024 * 1024;
const CALLS = Number(process.env.BENCH_CALLS ?? 500);

async function client(url: string): Promise<Client> {
  const c = new Client({ name: "bench", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

const TOKEN = "bench-token-0123456789abcdef";

async function modernClient(url: string): Promise<V2Client> {
  const c = new V2Client(
    { name: "bench", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await c.connect(
    new V2Transport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
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

/**
 * The floor a proxy hop is measured against: a plain JSON-RPC forwarder on node:http that passes each
 * request (method, headers, body) to the upstream over a keep-alive agent and pipes the reply back,
 * SSE included. It understands nothing, so it adds only the second HTTP hop.
 */
async function startForwarder(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstream);
  const agent = new HttpAgent({ keepAlive: true });
  const server = createServer((req, res) => {
    const headers = { ...req.headers, host: target.host };
    const out = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Busy CPU (user + system) of this process, in milliseconds. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Latencies of `calls` calls and the busy CPU of this process per call (client + whatever it hosts). */
async function timed(c: EchoClient, calls: number, into: number[], cpu: number[]): Promise<void> {
  const before = cpuMs();
  into.push(...(await latencies(c, calls)));
  cpu.push((cpuMs() - before) / calls);
}

function median(values: number[]): number {
  return percentile(values, 50);
}

const dir = await realpath(await mkdtemp(join(tmpdir(), "bench-proxy-")));
const fixture = await startHttpFixture({ OUTPUT_DIR: dir });
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
  const forwarder = await startForwarder(fixture.url);
  const direct = await client(fixture.url);
  const proxied = await client(mcpUrl);
  const forwarded = await client(forwarder.url);
  await latencies(direct, 50);
  await latencies(proxied, 50);
  await latencies(forwarded, 50);
  // Interleave the three so machine noise hits them alike (order rotated each round). Busy CPU of
  // this process per call is taken per round too: the client's share is the same on every path, so
  // (proxied − direct) is what the proxy hop costs in CPU, which barely depends on the load.
  const directMs: number[] = [];
  const proxiedMs: number[] = [];
  const forwardedMs: number[] = [];
  const cpu = { direct: [] as number[], proxied: [] as number[], forwarded: [] as number[] };
  const rounds = 6;
  for (let round = 0; round < rounds; round++) {
    const order = [
      () => timed(direct, CALLS / rounds, directMs, cpu.direct),
      () => timed(proxied, CALLS / rounds, proxiedMs, cpu.proxied),
      () => timed(forwarded, CALLS / rounds, forwardedMs, cpu.forwarded),
    ];
    for (let i = 0; i < order.length; i++) await (order[(i + round) % order.length] as () => Promise<void>)();
  }
  const passThrough = {
    calls: CALLS,
    directP50Ms: percentile(directMs, 50),
    proxiedP50Ms: percentile(proxiedMs, 50),
    forwarderP50Ms: percentile(forwardedMs, 50),
    directP95Ms: percentile(directMs, 95),
    proxiedP95Ms: percentile(proxiedMs, 95),
    addedP50Ms: percentile(proxiedMs, 50) - percentile(directMs, 50),
    forwarderAddedP50Ms: percentile(forwardedMs, 50) - percentile(directMs, 50),
    proxyCpuMsPerCall: median(cpu.proxied) - median(cpu.direct),
    forwarderCpuMsPerCall: median(cpu.forwarded) - median(cpu.direct),
  };
  console.log(
    `pass-through (SDK v1): direct p50 ${passThrough.directP50Ms.toFixed(2)} ms, through the proxy ${passThrough.proxiedP50Ms.toFixed(2)} ms ` +
      `(+${passThrough.addedP50Ms.toFixed(2)} ms; target < 2 ms) ${passThrough.addedP50Ms < 2 ? "OK" : "MISSED"}; ` +
      `plain forwarder ${passThrough.forwarderP50Ms.toFixed(2)} ms (+${passThrough.forwarderAddedP50Ms.toFixed(2)} ms)`,
  );
  console.log(
    `  busy CPU added per call: proxy ${passThrough.proxyCpuMsPerCall.toFixed(3)} ms, plain forwarder ` +
      `${passThrough.forwarderCpuMsPerCall.toFixed(3)} ms (medians over ${rounds} rounds)`,
  );
  await forwarded.close();
  await forwarder.close();

  // The same on SDK v2: a stateless 2026-07-28 client (each call its own HTTP exchange, no session).
  const v2Proxy = await createFileProxy({
    sdk: "v2",
    authenticate: bearerTokens(parseBearerTokens(`bench:${TOKEN}`, "bench")),
    config: { mcpServers: { up: { url: fixture.url } } },
  });
  let passThroughV2: Record<string, number>;
  try {
    const modern = await modernClient((await v2Proxy.listen()).mcpUrl);
    await latencies(modern, 50);
    const directV2: number[] = [];
    const proxiedV2: number[] = [];
    const cpuV2 = { direct: [] as number[], proxied: [] as number[] };
    for (let round = 0; round < 6; round++) {
      const pair = [
        () => timed(direct, CALLS / 6, directV2, cpuV2.direct),
        () => timed(modern, CALLS / 6, proxiedV2, cpuV2.proxied),
      ];
      for (let i = 0; i < 2; i++) await (pair[(i + round) % 2] as () => Promise<void>)();
    }
    passThroughV2 = {
      calls: CALLS,
      directP50Ms: percentile(directV2, 50),
      proxiedP50Ms: percentile(proxiedV2, 50),
      directP95Ms: percentile(directV2, 95),
      proxiedP95Ms: percentile(proxiedV2, 95),
      addedP50Ms: percentile(proxiedV2, 50) - percentile(directV2, 50),
      proxyCpuMsPerCall: median(cpuV2.proxied) - median(cpuV2.direct),
    };
    await modern.close();
  } finally {
    await v2Proxy.close();
  }
  console.log(
    `pass-through (SDK v2, 2026-07-28 client): direct p50 ${passThroughV2.directP50Ms?.toFixed(2)} ms, through the proxy ` +
      `${passThroughV2.proxiedP50Ms?.toFixed(2)} ms (+${passThroughV2.addedP50Ms?.toFixed(2)} ms; target < 2 ms) ` +
      `${(passThroughV2.addedP50Ms ?? 99) < 2 ? "OK" : "MISSED"}; busy CPU added per call ${passThroughV2.proxyCpuMsPerCall?.toFixed(3)} ms`,
  );

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
  console.log(`BENCH_JSON ${JSON.stringify({ bench: "proxy", passThrough, passThroughV2, handOver })}`);
  await direct.close();
  await proxied.close();
} finally {
  await proxy.close();
  await fixture.stop();
  await rm(dir, { recursive: true, force: true });
}
