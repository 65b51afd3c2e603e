/**
 * A stream to shape is spooled to a private temp file first, so libvips reads it from a path in
 * bounded memory (sharp's own stream input collects the whole input in memory before decoding).
 * The file lives in a fresh 0700 call folder under `tmpDir` (made and checked like every call
 * folder: `createCallDir`) and is removed, folder and all, when the shaping is done or fails.
 */
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { createCallDir, removeDir } from "../internal/temp-dir.js";

/** A spooled stream: its path, and `remove()` to take the file and its folder away. */
export interface SpooledImage {
  path: string;
  remove(): Promise<void>;
}

/** Passes bytes on until `limit`; one more is `FILE_TOO_LARGE` (the copy stops there). */
function capped(limit: number): Transform {
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > limit) {
        done(new FileBridgeError("FILE_TOO_LARGE", `the image exceeds ${limit} bytes`, { data: { limit } }));
        return;
      }
      done(null, chunk);
    },
  });
}

/**
 * Copies `stream` into a new private file under `tmpDir` (at most `limit` bytes; more is
 * `FILE_TOO_LARGE`, with nothing left behind). Memory: the stream's chunks in flight, never the whole.
 */
export async function spoolImage(stream: Readable, tmpDir: string, limit: number): Promise<SpooledImage> {
  const dir = await createCallDir(tmpDir);
  const path = join(dir, "image");
  const remove = () => removeDir(dir, path);
  try {
    // `wx` and 0600: a file made here, in a folder made here, never one found in place.
    await pipeline(stream, capped(limit), createWriteStream(path, { flags: "wx", mode: 0o600 }));
  } catch (error) {
    stream.destroy();
    await remove();
    throw error;
  }
  return { path, remove };
}
