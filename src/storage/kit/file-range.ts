/**
 * A store's read stream over a byte range of an open file, remembered as that range, so a consumer
 * that owns the whole transfer (the Node adapter sending a download) can read the file itself into
 * buffers it reuses instead of taking a new buffer from the stream for every read.
 */
import { createReadStream, type ReadStream } from "node:fs";
import type { Readable } from "node:stream";

/** Bytes `[start, end)` of the open file `fd`. */
export interface FileRange {
  readonly fd: number;
  readonly start: number;
  readonly end: number;
}

const ranges = new WeakMap<Readable, FileRange>();

/**
 * `createReadStream` over `fd` for the inclusive `bounds` (the whole file when absent), remembered
 * as the range `[start, end)` (`size`: the file's size, for the whole file; see
 * {@link takeFileRange}). The stream owns `fd` and closes it when it ends or is destroyed.
 *
 * @example
 * ```ts
 * const stream = fileRangeStream(path, fd, { start: 0, end: 99 }, file.size, 256 * 1024);
 * ```
 */
export function fileRangeStream(
  path: string,
  fd: number,
  bounds: { start: number; end: number } | null | undefined,
  size: number,
  highWaterMark: number,
): ReadStream {
  const stream = createReadStream(path, { fd, ...bounds, highWaterMark });
  const start = bounds ? bounds.start : 0;
  const end = bounds ? bounds.end + 1 : size;
  if (end > start) ranges.set(stream, { fd, start, end });
  return stream;
}

/**
 * The range behind a stream made by {@link fileRangeStream}, once, while nothing of it has been
 * read: the caller then reads the range from `fd` with positioned reads and destroys the stream
 * when it is done (which closes `fd`; Node waits for a read the stream itself may have started).
 * `undefined` for any other stream, or one already read from.
 *
 * @example
 * ```ts
 * const range = takeFileRange(stream);
 * if (range) await sendRange(range);
 * stream.destroy();
 * ```
 */
export function takeFileRange(stream: Readable): FileRange | undefined {
  const range = ranges.get(stream);
  if (!range) return undefined;
  ranges.delete(stream);
  const file = stream as ReadStream;
  if (file.destroyed || file.bytesRead !== 0 || file.readableLength > 0 || file.readableFlowing) {
    return undefined;
  }
  return range;
}
