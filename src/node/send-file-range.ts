/**
 * The Node adapter's download send for a range of an open file (an `fsStore` read, see
 * `storage/kit/file-range.ts`): positioned reads into a few buffers that are used again once the
 * socket has taken them, instead of a new buffer per read from a read stream. A 1 GiB download
 * then allocates ~1 MiB of buffers instead of 1 GiB of them, which spares the garbage collector the
 * work those cost (docs/performance.md, Session 16).
 */
import { read } from "node:fs";
import type { ServerResponse } from "node:http";
import type { Readable } from "node:stream";
import type { FileRange } from "../storage/kit/file-range.js";

/** Bytes per read; at most {@link BUFFERS} of them are in flight. */
const READ_BYTES = 256 * 1024;
const BUFFERS = 4;

function readAt(fd: number, buffer: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, 0, length, position, (error, bytes) => (error ? reject(error) : resolve(bytes)));
  });
}

/**
 * Sends bytes `[range.start, range.end)` of `range.fd` as the body of `res` (headers already
 * written) and ends it. `download` is the route's stream for it (its timeouts destroy it, with an
 * error, which stops the send); `progress()` is called as the socket takes each buffer. Closes the
 * file (by destroying `source`, which owns it) and `download` when it stops, however it stops;
 * rejects, with `res` destroyed, when it could not send every byte.
 *
 * @example
 * ```ts
 * const taken = takeDownloadSource(download, takeFileRange);
 * if (taken) await sendFileRange(res, taken.value, { download, ...taken });
 * ```
 */
export async function sendFileRange(
  res: ServerResponse,
  range: FileRange,
  parts: { download: Readable; source: Readable; progress(): void },
): Promise<void> {
  const { download, source, progress } = parts;
  const free: Buffer[] = [];
  let buffers = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const stop = (error: Error) => {
    failure ??= error;
    wake?.();
  };
  const onDownloadError = (error: Error) => stop(error);
  const onDownloadClose = () => stop(new Error("the download was closed"));
  const onResClose = () => {
    if (!res.writableFinished) stop(new Error("the response was closed before its end"));
  };
  const onDrain = () => wake?.();
  download.once("error", onDownloadError);
  download.once("close", onDownloadClose);
  res.once("close", onResClose);
  res.on("drain", onDrain);
  const waitFor = (ready: () => boolean) =>
    new Promise<void>((resolve) => {
      if (ready() || failure) {
        resolve();
        return;
      }
      wake = () => {
        if (!ready() && !failure) return;
        wake = undefined;
        resolve();
      };
    });
  try {
    let position = range.start;
    while (position < range.end) {
      if (failure) throw failure;
      if (free.length === 0 && buffers === BUFFERS) await waitFor(() => free.length > 0);
      if (failure) throw failure;
      let buffer = free.pop();
      if (!buffer) {
        buffers++;
        buffer = Buffer.allocUnsafeSlow(READ_BYTES);
      }
      const bytes = await readAt(range.fd, buffer, Math.min(READ_BYTES, range.end - position), position);
      if (failure) throw failure;
      if (bytes === 0) throw new Error("the file ended before the bytes its record names");
      position += bytes;
      const sent = buffer;
      const more = res.write(bytes === sent.length ? sent : sent.subarray(0, bytes), (error) => {
        if (error) return;
        free.push(sent);
        progress();
        wake?.();
      });
      if (!more) await waitFor(() => !res.writableNeedDrain);
    }
    if (failure) throw failure;
    await new Promise<void>((resolve) => {
      res.once("close", resolve);
      res.end(resolve);
    });
    if (!res.writableFinished) throw failure ?? new Error("the response was closed before its end");
  } catch (error) {
    res.destroy();
    throw error;
  } finally {
    download.off("error", onDownloadError);
    download.off("close", onDownloadClose);
    res.off("close", onResClose);
    res.off("drain", onDrain);
    download.destroy();
    source.destroy();
  }
}
