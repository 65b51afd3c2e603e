/**
 * Profiles the proxy hop alone (not part of `npm run bench`): the proxy runs in a child process that
 * records a CPU profile over `PROFILE_CALLS` tool calls only (after a warm-up), while this process
 * drives a v1 (2025 session) or v2 (2026-07-28, bearer) client. Prints the self time per call by area
 * and the top functions.
 *
 *   npx tsx bench/_proxy-profile.ts v1|v2 [out.cpuprofile]
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const [mode, sdk = "v1", out = join(tmpdir(), `proxy-${sdk}.cpuprofile`)] =
  process.argv[2] === "serve"
    ? ["serve", process.argv[3], process.argv[4]]
    : ["drive", process.argv[2], process.argv[3]];
const CALLS = Number(process.env.PROFILE_CALLS ?? 3000);
const TOKEN = "bench-token-0123456789abcdef";

if (mode === "serve") {
  const { bearerTokens, createFileProxy, parseBearerTokens } = await import("../src/proxy/index.js");
  const { startHttpFixture, V2_FIXTURE } = await import("../test/proxy/support.js");
  const dir = await realpath(await mkdtemp(join(tmpdir(), "profile-proxy-")));
  // v2 proxies an SDK v2 upstream (2026-07-28), as in `bench/proxy.ts`; v1 an SDK v1 one.
  const fixture =
    sdk === "v2"
      ? await startHttpFixture({}, 0, { fixture: V2_FIXTURE })
      : await startHttpFixture({ OUTPUT_DIR: dir });
  const proxy = await createFileProxy(
    sdk === "v2"
      ? {
          sdk: "v2",
          authenticate: bearerTokens(parseBearerTokens(`bench:${TOKEN}`, "bench")),
          config: { mcpServers: { up: { url: fixture.url } } },
        }
      : {
          config: {
            mcpServers: { up: { url: fixture.url } },
            proxy: { storage: { dir: join(dir, "store") } },
          },
        },
  );
  const { mcpUrl } = await proxy.listen();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  console.log(`URL ${mcpUrl} ${fixture.url}`);
  const profiling = process.env.PROFILE !== "0";
  let cpu = process.cpuUsage();
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "start") {
      if (profiling) await session.post("Profiler.start");
      cpu = process.cpuUsage();
    }
    if (line === "stop") {
      const used = process.cpuUsage(cpu);
      console.error(
        `proxy process busy CPU: ${((used.user + used.system) / 1000 / CALLS).toFixed(3)} ms per call`,
      );
      if (profiling) {
        const { profile } = await session.post("Profiler.stop");
        await writeFile(out as string, JSON.stringify(profile));
      }
      break;
    }
    console.log(`ACK ${line}`);
  }
  await proxy.close();
  await fixture.stop();
  await rm(dir, { recursive: true, force: true });
  console.log("ACK stop");
  process.exit(0);
}

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { Client: V2Client, StreamableHTTPClientTransport: V2Transport } = await import(
  "@modelcontextprotocol/client"
);
const child = spawn(
  process.execPath,
  ["--import", "tsx", fileURLToPath(import.meta.url), "serve", sdk as string, out as string],
  {
    stdio: ["pipe", "pipe", "inherit"],
  },
);
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value as string;
const [, url] = (await next()).split(" ");
const c =
  sdk === "v2"
    ? new V2Client({ name: "p", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } })
    : new Client({ name: "p", version: "1" });
await c.connect(
  (sdk === "v2"
    ? new V2Transport(new URL(url as string), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      })
    : new StreamableHTTPClientTransport(new URL(url as string))) as never,
);
const call = () => c.callTool({ name: "echo", arguments: { text: "hello" } });
for (let i = 0; i < 300; i++) await call();
child.stdin!.write("start\n");
await next();
const started = performance.now();
for (let i = 0; i < CALLS; i++) await call();
const ms = (performance.now() - started) / CALLS;
child.stdin!.write("stop\n");
await next();
await c.close();
console.log(`${sdk}: ${CALLS} calls, ${ms.toFixed(3)} ms per call (wall, client in another process)`);

// analysis
if (process.env.PROFILE === "0") process.exit(0);
const profile = JSON.parse(readFileSync(out as string, "utf8")) as {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i] as number;
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
function area(url: string): string {
  if (!url) return "(native/gc/idle)";
  if (url.includes("/src/proxy/sdk/downstream")) return "ours: downstream";
  if (url.includes("/src/proxy/sdk/upstream")) return "ours: upstream";
  if (url.includes("/src/")) return `ours: ${url.split("/src/")[1]?.split("/").slice(0, 2).join("/")}`;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
  if (m)
    return `${m[1]}/${(m[2] as string)
      .replace(/^dist\/(esm\/|cjs\/)?/, "")
      .split("/")
      .slice(0, 2)
      .join("/")}`;
  if (url.startsWith("node:"))
    return url
      .replace(/^node:internal\//, "node:")
      .split("/")
      .slice(0, 2)
      .join("/");
  return url;
}
const areas = new Map<string, number>();
const fns = new Map<string, number>();
let total = 0;
for (const [id, us] of self) {
  const n = byId.get(id)!;
  const { functionName, url, lineNumber } = n.callFrame;
  if (functionName === "(idle)") continue;
  total += us;
  const a = area(url);
  areas.set(a, (areas.get(a) ?? 0) + us);
  const key = `${functionName || "(anon)"} ${a}:${lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}
const per = (us: number) => (us / 1000 / CALLS).toFixed(4);
console.log(`busy CPU in the proxy process: ${per(total)} ms per call`);
for (const [a, us] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, 40)) console.log(`  ${per(us)}  ${a}`);
console.log("top functions (self):");
for (const [f, us] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, Number(process.env.TOP ?? 40)))
  console.log(`  ${per(us)}  ${f}`);
