/**
 * One side of bench/images.ts in a process of its own, so its peak RSS is its alone: `shape` runs
 * `shapeImage({ path })` (the client's default budget), `stream` the same from a stream of the file
 * (a non-path source: spooled to a private temp file, then shaped from there), `bytes` the same from
 * the whole file in memory (what a stream cost before it was spooled: sharp held it whole), `resize`
 * the plain sharp baseline (resize to 1,568 px inside, same format, `toBuffer`). Prints one JSON line: each round's seconds, the peak RSS
 * over the rounds (VmHWM, reset after the warm-up), the RSS before them, and the output's bytes.
 */
import { createReadStream, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import sharp from "sharp";
import { built } from "./_built.js";

// Our code as its published build (bench/_built.ts).
const { shapeImage } = await built<typeof import("../src/images/index.js")>("images");

const [side, path, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 3);

const rssMiB = (field: "VmHWM" | "VmRSS") =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"))?.[1]) / 1024;

async function once(): Promise<number> {
  if (side === "shape" || side === "stream" || side === "bytes") {
    const source =
      side === "shape"
        ? { path: path as string }
        : side === "stream"
          ? createReadStream(path as string, { highWaterMark: 256 * 1024 })
          : await readFile(path as string);
    const shaped = await shapeImage(source, { maxInputBytes: 1024 * 1024 * 1024 });
    return "data" in shaped ? shaped.data.length : 0;
  }
  const meta = await sharp(path as string).metadata();
  const out = await sharp(path as string)
    .rotate()
    .resize({ width: 1568, height: 1568, fit: "inside", withoutEnlargement: true })
    .toFormat(meta.format === "jpeg" ? "jpeg" : "png")
    .toBuffer();
  return out.length;
}

await once(); // warm-up: sharp loaded, libvips' operation cache and thread pool up
sharp.cache(false);
const before = rssMiB("VmRSS");
writeFileSync("/proc/self/clear_refs", "5");
const seconds: number[] = [];
let bytes = 0;
for (let i = 0; i < rounds; i += 1) {
  const started = performance.now();
  bytes = await once();
  seconds.push((performance.now() - started) / 1000);
}
console.log(JSON.stringify({ seconds, peakRssMiB: rssMiB("VmHWM"), rssBeforeMiB: before, bytes }));
