/**
 * Image shaping (issue 44): `shapeImage({ path })` at the default budget (1,568 px, 562,500 bytes)
 * against a plain sharp resize (1,568 px inside, same format, no byte budget) as the baseline, on a
 * camera JPEG and a screenshot PNG of 1, 12 and 50 megapixels. Each side runs in a process of its own
 * (bench/_image-peer.ts) so its peak RSS (VmHWM after the warm-up, sharp's native memory included) is
 * its alone. Reported per row: median seconds, megapixels per second, peak RSS and the RSS before
 * the rounds. Run alone: `npx tsx bench/images.ts` or `npm run bench -- images`; `BENCH_ROUNDS` sets
 * the rounds (default 3), `BENCH_IMAGE_MP` the sizes (default 1,12,50).
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cameraJpeg, screenshotPng } from "../test/support/images.js";
import { here, loadLine } from "./_lib.js";

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const sizes = (process.env.BENCH_IMAGE_MP ?? "1,12,50").split(",").map(Number);

interface Side {
  seconds: number[];
  peakRssMiB: number;
  rssBeforeMiB: number;
  bytes: number;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

function side(which: "shape" | "resize", path: string): Side {
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", join(here, "_image-peer.ts"), which, path, String(rounds)],
    {
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  if (run.status !== 0) throw new Error(`${which} ${path} failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").at(-1) as string) as Side;
}

const dir = await mkdtemp(join(tmpdir(), "bench-images-"));
const rows: Array<Record<string, unknown>> = [];
console.log(loadLine());
try {
  for (const mp of sizes) {
    const width = Math.round(Math.sqrt((mp * 1e6 * 4) / 3));
    const height = Math.round((width * 3) / 4);
    const inputs = {
      "camera JPEG": await cameraJpeg(width, height, { quality: 92 }),
      "screenshot PNG": await screenshotPng(width, height),
    };
    for (const [kind, bytes] of Object.entries(inputs)) {
      const path = join(dir, `${mp}mp${kind.endsWith("PNG") ? ".png" : ".jpg"}`);
      await writeFile(path, bytes);
      const ours = side("shape", path);
      const baseline = side("resize", path);
      const row = {
        input: `${mp} MP ${kind} (${width}×${height}, ${(bytes.length / 1024 / 1024).toFixed(1)} MiB)`,
        shapeSeconds: median(ours.seconds),
        resizeSeconds: median(baseline.seconds),
        shapeMPps: mp / median(ours.seconds),
        resizeMPps: mp / median(baseline.seconds),
        shapePeakRssMiB: ours.peakRssMiB,
        resizePeakRssMiB: baseline.peakRssMiB,
        rssBeforeMiB: Math.round(ours.rssBeforeMiB),
        shapeBytes: ours.bytes,
        resizeBytes: baseline.bytes,
      };
      rows.push(row);
      console.log(
        `${row.input}: shapeImage ${row.shapeSeconds.toFixed(2)} s (${row.shapeMPps.toFixed(1)} MP/s, peak RSS ${row.shapePeakRssMiB.toFixed(0)} MiB, ${row.shapeBytes} bytes) · plain resize ${row.resizeSeconds.toFixed(2)} s (${row.resizeMPps.toFixed(1)} MP/s, peak RSS ${row.resizePeakRssMiB.toFixed(0)} MiB, ${row.resizeBytes} bytes) · RSS before ${row.rssBeforeMiB} MiB`,
      );
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(loadLine());
console.log(`BENCH_JSON ${JSON.stringify({ bench: "images", rounds, rows })}`);
