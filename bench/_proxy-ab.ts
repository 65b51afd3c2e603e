/**
 * The proxy hop of two checkouts side by side (not part of `npm run bench`): the proxy of another
 * checkout ("base", its `bench/_proxy-peer.ts`, e.g. a `git archive` of main with a link to this
 * `node_modules`), this checkout's proxy and the plain forwarder, each in a process of its own in
 * front of one upstream; `R` rounds of `N` calls on each, the order rotated every round. Prints the
 * busy CPU per call of each hop (per round and the median) and the medians of the per-round p50s
 * over the forwarder: the paired comparison of a change (docs/performance.md, Session 17).
 *
 *   N=200 R=10 npx tsx bench/_proxy-ab.ts v1|v2 /path/to/base/bench/_proxy-peer.ts
 */
import { relative } from "node:path";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startHttpFixture, V2_FIXTURE } from "../test/proxy/support.js";
import { cpuSeconds, here, type Peer, startPeer } from "./_lib.js";
import { PROXY_BENCH_TOKEN } from "./_proxy-peer.js";

const [sdk, basePeer] = [process.argv[2], process.argv[3]];
if ((sdk !== "v1" && sdk !== "v2") || !basePeer)
  throw new Error("usage: _proxy-ab.ts v1|v2 <base checkout>/bench/_proxy-peer.ts");
const N = Number(process.env.N ?? 200);
const R = Number(process.env.R ?? 10);

interface Caller {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

async function connect(url: URL): Promise<Caller> {
  if (sdk === "v2") {
    const c = new V2Client(
      { name: "ab", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await c.connect(
      new V2Transport(url, { requestInit: { headers: { authorization: `Bearer ${PROXY_BENCH_TOKEN}` } } }),
    );
    return c;
  }
  const c = new Client({ name: "ab", version: "1" });
  await c.connect(new StreamableHTTPClientTransport(url));
  return c;
}

const fixture =
  sdk === "v2" ? await startHttpFixture({}, 0, { fixture: V2_FIXTURE }) : await startHttpFixture({});
const peers: Record<"base" | "this" | "forwarder", Peer> = {
  base: await startPeer(relative(here, basePeer), [sdk, fixture.url]),
  this: await startPeer("_proxy-peer.ts", [sdk, fixture.url]),
  forwarder: await startPeer("_forwarder.mjs", [fixture.url]),
};
const names = Object.keys(peers) as Array<keyof typeof peers>;
try {
  const callers = {} as Record<keyof typeof peers, Caller>;
  for (const name of names) {
    callers[name] = await connect(new URL(String(peers[name].ready.url)));
    for (let i = 0; i < 400; i++) await callers[name].callTool({ name: "echo", arguments: { text: "warm" } });
  }
  const cpu = { base: [] as number[], this: [] as number[], forwarder: [] as number[] };
  const p50 = { base: [] as number[], this: [] as number[], forwarder: [] as number[] };
  for (let round = 0; round < R; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length] as keyof typeof peers;
      const before = cpuSeconds(peers[name].pid);
      const ms: number[] = [];
      for (let k = 0; k < N; k++) {
        const started = performance.now();
        await callers[name].callTool({ name: "echo", arguments: { text: `call ${k}` } });
        ms.push(performance.now() - started);
      }
      cpu[name].push(((cpuSeconds(peers[name].pid) - before) * 1000) / N);
      ms.sort((a, b) => a - b);
      p50[name].push(ms[Math.floor(N / 2)] as number);
    }
  }
  const median = (values: number[]) =>
    ([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number).toFixed(3);
  for (const name of names)
    console.log(
      `${sdk} ${name}: CPU per call median ${median(cpu[name])} ms [${cpu[name].map((v) => v.toFixed(2)).join(" ")}]`,
    );
  const over = (name: "base" | "this") => p50[name].map((v, i) => v - (p50.forwarder[i] as number));
  console.log(
    `p50 over the forwarder (median of rounds): base ${median(over("base"))} ms, this ${median(over("this"))} ms`,
  );
  for (const caller of Object.values(callers)) await caller.close();
} finally {
  for (const peer of Object.values(peers)) await peer.stop();
  await fixture.stop();
}
