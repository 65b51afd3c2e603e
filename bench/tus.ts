import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  compare,
  loadLine,
  MiB,
  type Peer,
  type Row,
  report,
  rssMiB,
  serverRound,
  sourceFile,
  startPeer,
} from "./_lib.js";

const SIZE_MB = Number(process.env.BENCH_TUS_MB ?? 1024);
if (!Number.isSafeInteger(SIZE_MB) || SIZE_MB <= 0)
  throw new Error("BENCH_TUS_MB must be a positive integer");
/** The goal (issue 43): ours ≥ 1.05× `@tus/server` + `@tus/file-store`, unchunked and chunked. */
const GOAL_VS_TUS = 1.05;
const dir = await mkdtemp(join(tmpdir(), "mfb-bench-tus-"));
const rows: Row[] = [];
console.log(`tus · ${SIZE_MB} MiB · ${loadLine()}`);

const growth: Record<string, number> = {};

async function round(client: Peer, server: Peer, name: string, command: Record<string, unknown>) {
  const before = rssMiB(server.pid);
  const sample = await serverRound(server, async () => Number((await client.ask(command)).seconds));
  growth[name] = Math.max(growth[name] ?? 0, (sample.peakRssMiB ?? before) - before);
  await server.ask({ cmd: "clean" });
  return sample;
}

const resume: Record<string, unknown> = {};
try {
  const file = await sourceFile(dir, SIZE_MB);
  const client = await startPeer("_client.ts");
  const ours = await startPeer("_server.ts", ["ours-fs", join(dir, "ours")]);
  const tus = await startPeer("_server.ts", ["tus", join(dir, "tus")]);
  for (const chunk of [0, 8 * MiB]) {
    const label = chunk === 0 ? "unchunked" : "8 MiB chunks";
    const run = (server: Peer, isOurs: boolean) => () =>
      round(client, server, `${isOurs ? "ours" : "@tus/server"} ${label}`, {
        cmd: "tus-upload",
        url: server.ready.url,
        file,
        chunk,
        ours: isOurs,
      });
    rows.push(
      await compare(
        `tus upload ${SIZE_MB} MiB, ${label} (ours: fs staging, sha256 on arrival, commit by adoption)`,
        run(ours, true),
        { name: "@tus/server 2.4.5 + @tus/file-store 2.1.1", run: run(tus, false) },
        { goal: GOAL_VS_TUS },
      ),
    );
  }
  for (const [name, server, isOurs] of [
    ["ours", ours, true],
    ["@tus/server", tus, false],
  ] as const) {
    const result = await client.ask({ cmd: "tus-resume", url: server.ready.url, file, ours: isOurs });
    await server.ask({ cmd: "clean" });
    resume[name] = result;
    console.log(`resume after a cut at 50% (${name}): ${JSON.stringify(result)}`);
  }
  console.log(`server peak RSS growth (MiB): ${JSON.stringify(growth)}`);
  for (const peer of [client, ours, tus]) await peer.stop();
} finally {
  await rm(dir, { recursive: true, force: true });
}
report("tus", rows, { sizeMiB: SIZE_MB, resume, peakRssGrowthMiB: growth });
