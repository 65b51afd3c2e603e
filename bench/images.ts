/**
 * Image shaping (issue 44): `shapeImage({ path })` at the default budget (1,568 px, 562,500 bytes)
 * against a plain sharp resize (1,568 px inside, same format, no byte budget) as the baseline, on a
 * camera JPEG and a screenshot PNG of 1, 12 and 50 megapixels. Each side runs in a process of its own
 * (bench/_image-peer.ts) so its peak RSS (VmHWM after the warm-up, sharp's native memory included) is
 * its alone. Reported per row: median seconds, megapixels per second, peak RSS and the RSS before
 * the rounds. Then the stream rows: a 50 MP camera JPEG and a ~100 MB PNG (noise, which does not
 * compress) shaped from a path, from a stream (spooled to a private temp file first) and from the
 * whole file in memory (what a stream cost before it was spooled). Run alone: `npx tsx
 * bench/images.ts` or `npm run bench -- images`; `BENCH_ROUNDS` sets the rounds (default 3),
 * `BENCH_IMAGE_MP` the sizes (default 1,12,50; empty: none), `BENCH_IMAGE_STREAM=0` skips the stream rows.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { cameraJpeg, screenshotPng } from "../test/support/images.js";
import { here, loadLine } from "./_lib.js";

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const sizes = (process.env.BENCH_IMAGE_MP ?? "1,12,50").split(",").filter(Boolean).map(Number);
const streamRows = process.env.BENCH_IMAGE_STREAM !== "0";

interface Side {
  seconds: number[];
  peakRssMiB: number;
  rssBeforeMiB: number;
  bytes: number;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

function side(which: "shape" | "stream" | "bytes" | "resize", path: string): Side {
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
  if (streamRows) {
    // 5,800 × 5,800 RGB noise: 33.6 MP, ~101 MB as a PNG (noise does not compress).
    const noise = await sharp(randomBytes(5800 * 5800 * 3), {
      raw: { width: 5800, height: 5800, channels: 3 },
    })
      .png({ compressionLevel: 1 })
      .toBuffer();
    const inputs = {
      "50 MP camera JPEG (8165×6124)": await cameraJpeg(8165, 6124, { quality: 92 }),
      "noise PNG (5800×5800)": noise,
    };
    for (const [kind, bytes] of Object.entries(inputs)) {
      const path = join(dir, kind.includes("PNG") ? "stream.png" : "stream.jpg");
      await writeFile(path, bytes);
      const from = { path: side("shape", path), stream: side("stream", path), bytes: side("bytes", path) };
      const row = {
        input: `${kind}, ${(bytes.length / 1024 / 1024).toFixed(1)} MiB`,
        ...Object.fromEntries(
          Object.entries(from).flatMap(([name, s]) => [
            [`${name}Seconds`, median(s.seconds)],
            [`${name}PeakRssMiB`, Math.round(s.peakRssMiB)],
          ]),
        ),
        rssBeforeMiB: Math.round(from.stream.rssBeforeMiB),
      };
      rows.push(row);
      console.log(
        `${row.input}: ${Object.entries(from)
          .map(
            ([name, s]) =>
              `from ${name} ${median(s.seconds).toFixed(2)} s, peak RSS ${s.peakRssMiB.toFixed(0)} MiB`,
          )
          .join(" · ")} · RSS before ${row.rssBeforeMiB} MiB`,
      );
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(loadLine());
console.log(`BENCH_JSON ${JSON.stringify({ bench: "images", rounds, rows })}`);
