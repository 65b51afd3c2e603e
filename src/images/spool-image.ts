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

/** Bytes of the stream's head given to the header check (an EXIF block fits before a JPEG's frame header). */
export const HEAD_BYTES = 128 * 1024;

/**
 * Passes bytes on until `limit`; one more is `FILE_TOO_LARGE` (the copy stops there). The first
 * {@link HEAD_BYTES} (or the whole stream, when shorter) go to `checkHead` before a byte is written:
 * a decompression bomb is refused from its header before the rest of the stream is read.
 */
function capped(limit: number, checkHead: (head: Buffer) => Promise<void>): Transform {
  let size = 0;
  let head: Buffer[] | undefined = [];
  let headSize = 0;
  const release = (transform: Transform, done: (error?: Error | null) => void) => {
    const bytes = Buffer.concat(head ?? []);
    head = undefined;
    checkHead(bytes).then(
      () => {
        transform.push(bytes);
        done();
      },
      (error: Error) => done(error),
    );
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > limit) {
        done(new FileBridgeError("FILE_TOO_LARGE", `the image exceeds ${limit} bytes`, { data: { limit } }));
        return;
      }
      if (head === undefined) {
        done(null, chunk);
        return;
      }
      head.push(chunk);
      headSize += chunk.length;
      if (headSize < HEAD_BYTES) done();
      else release(this, done);
    },
    flush(done) {
      if (head === undefined) done();
      else release(this, done);
    },
  });
}

/**
 * Copies `stream` into a new private file under `tmpDir` (at most `limit` bytes; more is
 * `FILE_TOO_LARGE`, with nothing left behind). `checkHead` sees the stream's first bytes before any
 * is written; what it throws stops the copy. Memory: the head and the chunks in flight, never the whole.
 */
export async function spoolImage(
  stream: Readable,
  tmpDir: string,
  limit: number,
  checkHead: (head: Buffer) => Promise<void>,
): Promise<SpooledImage> {
  const dir = await createCallDir(tmpDir);
  const path = join(dir, "image");
  const remove = () => removeDir(dir, path);
  try {
    // `wx` and 0600: a file made here, in a folder made here, never one found in place.
    await pipeline(stream, capped(limit, checkHead), createWriteStream(path, { flags: "wx", mode: 0o600 }));
  } catch (error) {
    stream.destroy();
    await remove();
    throw error;
  }
  return { path, remove };
}
