/**
 * The put pipeline: a source (`put-source.ts`) through a meter (`put-meter.ts`) into a sink, with
 * the plan's signal; what was measured comes back once the sink has finished.
 */
import type { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { PutSource } from "../types.js";
import type { FileSha256 } from "./file-sha256.js";
import { finalError, PutMeter } from "./put-meter.js";
import type { PutMeasure, PutPlan } from "./put-plan.js";
import { toPutError, toReadable } from "./put-source.js";
import type { StreamLimits } from "./quota.js";

/**
 * Streams `source` through a {@link PutMeter} into `sink`, honouring the plan's signal. Resolves
 * with what was measured once the sink has finished; rejects with a `FileBridgeError` (see
 * {@link toPutError}). `limits` adds driver-known caps (see {@link StreamLimits}). The caller owns
 * cleanup of whatever the sink wrote.
 *
 * @example
 * ```ts
 * const plan = planPut(options, now());
 * const sink = createWriteStream(stagingPath, { flags: "wx" });
 * try {
 *   const file = storedFileOf(plan, await streamPut(source, plan, sink));
 *   await rename(stagingPath, finalPath); // commit only after every check passed
 *   return file;
 * } catch (error) {
 *   await rm(stagingPath, { force: true }); // nothing partial is left
 *   throw error;
 * }
 * ```
 */
export async function streamPut(
  source: PutSource,
  plan: PutPlan,
  sink: Writable,
  limits?: StreamLimits,
): Promise<PutMeasure> {
  return runPut(source, plan, sink, limits, undefined);
}

/**
 * {@link streamPut} into a sink that writes a file from its start and reports its progress to
 * `fileHash` (see `FileSink`): the sha256 is taken from the file by the hashing worker as it fills
 * (no copy of the body on the main thread), then checked like a streamed one once the sink has
 * finished. Disposes `fileHash` on failure.
 *
 * @example
 * ```ts
 * const hash = new FileSha256(path);
 * const measure = await streamPutToFile(source, plan, new FileSink(fd, (n) => hash.written(n)), limits, hash);
 * ```
 */
export async function streamPutToFile(
  source: PutSource,
  plan: PutPlan,
  sink: Writable,
  limits: StreamLimits | undefined,
  fileHash: FileSha256,
): Promise<PutMeasure> {
  try {
    return await runPut(source, plan, sink, limits, fileHash);
  } finally {
    fileHash.dispose();
  }
}

async function runPut(
  source: PutSource,
  plan: PutPlan,
  sink: Writable,
  limits: StreamLimits | undefined,
  fileHash: FileSha256 | undefined,
): Promise<PutMeasure> {
  const meter = new PutMeter(plan, limits, fileHash);
  let readable: Readable;
  try {
    readable = toReadable(source);
  } catch (error) {
    sink.destroy();
    throw toPutError(error, plan.signal);
  }
  try {
    await pipeline(readable, meter, sink, plan.signal ? { signal: plan.signal } : {});
    if (fileHash) {
      meter.sha256 = await fileHash.digest(meter.size);
      const failed = finalError(plan, meter.size, meter.sha256);
      if (failed) throw failed;
    }
  } catch (error) {
    throw toPutError(error, plan.signal);
  }
  return { size: meter.size, sha256: meter.sha256, head: meter.head };
}
