/**
 * Resumable uploads (issue 25), server and client each in a process of their own, alternating
 * rounds, ours ÷ `@tus/server` 2.4.5 + `@tus/file-store` 2.1.1, with the server's exact peak RSS:
 * - 1 GiB through tus unchunked (create + one PATCH) and in 8 MiB PATCHes; ours hashes the bytes as
 *   they arrive and commits by adopting the staging file (the put pipeline's checks, no second
 *   pass over the bytes), theirs only stores;
 * - resume after a cut at 50%: HEAD round trips and bytes re-sent against the bytes missing;
 * - the server's peak RSS growth over the upload (VmHWM after a reset, minus RSS before).
 *
 *   npm run bench -- tus
 *   BENCH_TUS_MB=256 BENCH_ROUNDS=1 npm run bench -- tus
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  compare,
  loadLine,
  MiB,
  type Peer,
  peakRssMiB,
  type Row,
  report,
  resetPeakRss,
  startPeer,
} from "./_lib.js";

const SIZE_MB = Number(process.env.BENCH_TUS_MB ?? 1024);
if (!Number.isSafeInteger(SIZE_MB) || SIZE_MB <= 0)
  throw new Error("BENCH_TUS_MB must be a positive integer");
const dir = await mkdtemp(join(tmpdir(), "mfb-bench-tus-"));
const rows: Row[] = [];
console.log(`tus · ${SIZE_MB} MiB · ${loadLine()}`);

async function sourceFile(mib: number): Promise<string> {
  const path = join(dir, `source-${mib}.bin`);
  const block = randomBytes(MiB);
  const out = createWriteStream(path);
  for (let i = 0; i < mib; i++) {
    block[0] = i & 0xff;
    if (!out.write(Buffer.from(block)))
      await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  return path;
}

/** Current RSS of a process, MiB. */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}

const growth: Record<string, number> = {};

async function round(client: Peer, server: Peer, name: string, command: Record<string, unknown>) {
  resetPeakRss(server.pid);
  const before = rssMiB(server.pid);
  const { seconds } = await client.ask(command);
  const peak = peakRssMiB(server.pid);
  growth[name] = Math.max(growth[name] ?? 0, peak - before);
  await server.ask({ cmd: "clean" });
  return { seconds: Number(seconds), peakRssMiB: peak };
}

const resume: Record<string, unknown> = {};
try {
  const file = await sourceFile(SIZE_MB);
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
        { goal: 1 },
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
