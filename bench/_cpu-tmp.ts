import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, KiB, loadLine, startPeer } from "./_lib.js";

const COUNT = 2000;
const dir = await mkdtemp(join(tmpdir(), "mfb-cpu-"));
const modes = (process.env.CPU_MODES ?? "ours-memory,ours-fs,raw").split(",");
const client = await startPeer("_client.ts");
const out: string[] = [`${process.cwd()} ${loadLine()}`];
for (const mode of modes) {
  const server = await startPeer("_server.ts", [mode, join(dir, mode)]);
  const values: number[] = [];
  for (let round = 0; round < 3; round++) {
    await server.ask({ cmd: "clean" });
    const before = cpuSeconds(server.pid);
    await client.ask({ cmd: "small", url: server.ready.url, mode: mode === "raw" ? "raw" : "ours", count: COUNT, size: 4 * KiB, concurrency: 16 });
    if (round > 0) values.push(Math.round(((cpuSeconds(server.pid) - before) / COUNT) * 1e6));
  }
  out.push(`${mode}: ${values.join(" / ")} µs per upload`);
  await server.stop();
}
await client.stop();
out.push(loadLine());
console.log(out.join("\n"));
process.exit(0);
