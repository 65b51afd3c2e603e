/**
 * The put's source stage: any {@link PutSource} as a Node stream, a small source read whole, and the
 * mapping of any failure of a put to a `FileBridgeError`. Then `put-meter.ts` measures the bytes and
 * `put-pipeline.ts` joins source, meter and sink.
 */
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../../errors/file-bridge-error.js";
import type { PutSource } from "../types.js";

function isNodeReadable(value: unknown): value is Readable {
  return (
    value instanceof Readable ||
    (typeof value === "object" &&
      value !== null &&
      typeof (value as Readable).pipe === "function" &&
      typeof (value as Readable).on === "function" &&
      typeof (value as Readable).read === "function")
  );
}

function isWebReadable(value: unknown): value is ReadableStream<Uint8Array> {
  return (
    typeof value === "object" && value !== null && typeof (value as ReadableStream).getReader === "function"
  );
}

/**
 * Turns any {@link PutSource} into a Node `Readable` of bytes without reading it whole: streams pass
 * through, web streams are adapted, async iterables are pulled lazily, `{ path }` is a read stream.
 * An unusable source fails with `INVALID_INPUT`.
 *
 * @example
 * ```ts
 * for await (const chunk of toReadable(source)) sink.write(chunk);
 * ```
 */
export function toReadable(source: PutSource): Readable {
  if (source instanceof Uint8Array) {
    return Readable.from([source], { objectMode: false });
  }
  if (isNodeReadable(source)) return source;
  if (isWebReadable(source)) return Readable.fromWeb(source as import("node:stream/web").ReadableStream);
  if (typeof source === "object" && source !== null) {
    if (Symbol.asyncIterator in source || Symbol.iterator in source) {
      return Readable.from(source as AsyncIterable<Uint8Array>, { objectMode: false });
    }
    const path = (source as { path?: unknown }).path;
    if (typeof path === "string" && path.length > 0 && !path.includes("\0")) {
      return createReadStream(path);
    }
  }
  throw new FileBridgeError(
    "INVALID_INPUT",
    "put source must be a stream, an async iterable of bytes, bytes, or { path }",
  );
}

/**
 * Maps any failure of a put pipeline to a {@link FileBridgeError}: an aborted signal is `ABORTED`,
 * a `FileBridgeError` from the source or the meter stays as it is, anything else is `STORAGE_ERROR`
 * with the original as `cause`.
 *
 * @example
 * ```ts
 * try {
 *   await upload.done();
 * } catch (error) {
 *   throw toPutError(error, plan.signal); // ABORTED, the meter's own error, or STORAGE_ERROR
 * }
 * ```
 */
export function toPutError(error: unknown, signal: AbortSignal | undefined): FileBridgeError {
  if (signal?.aborted) {
    return new FileBridgeError("ABORTED", "the put was aborted", { cause: signal.reason ?? error });
  }
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", "the file could not be stored", { cause: error });
}

/**
 * What {@link readSmall} found: the whole source when it ended within the limit, or the bytes read so
 * far and a stream of the whole source (those bytes first, then the rest) to put the long way.
 *
 * @example
 * ```ts
 * const read = await readSmall(source, 64 * 1024, plan.signal);
 * if ("bytes" in read) writeInOneGo(read.bytes);
 * else await streamPut(read.stream, plan, sink);
 * ```
 */
export type SmallRead = { readonly bytes: Uint8Array } | { readonly stream: Readable };

/**
 * Reads a {@link PutSource} until it ends or passes `limit` bytes. A small source comes back whole,
 * so a driver can measure it with {@link measureBytes} and store it in one write instead of a
 * stream pipeline; a larger one comes back as a stream that yields every byte read so far and then
 * the rest, so nothing is read twice and memory stays bounded by `limit`. Chunks that are not bytes
 * fail with `INVALID_INPUT`, an aborted signal with `ABORTED`, like {@link streamPut}.
 *
 * @example
 * ```ts
 * const read = await readSmall(source, SMALL_PUT_BYTES, plan.signal);
 * const measure = "bytes" in read ? measureBytes(read.bytes, plan) : await streamPut(read.stream, plan, sink);
 * ```
 */
export async function readSmall(source: PutSource, limit: number, signal?: AbortSignal): Promise<SmallRead> {
  if (source instanceof Uint8Array) {
    return source.byteLength <= limit ? { bytes: source } : { stream: toReadable(source) };
  }
  let readable: Readable;
  try {
    readable = toReadable(source);
  } catch (error) {
    throw toPutError(error, signal);
  }
  return readAhead(readable, limit, signal);
}

/**
 * Reads `readable` until it ends (the bytes come back whole) or passes `limit` bytes: then it is
 * paused, the chunks read are put back in front of it (`unshift`), and the stream itself comes back,
 * so the long way adds no stream of its own between the source and the sink. `signal` is watched
 * while reading ahead only (an abort destroys the source and fails with `ABORTED`): the stream that
 * comes back is wired to the signal by what writes it (`streamPut`, `streamPutToFile`), so nothing
 * of the read-ahead stays attached to it for the rest of the put (docs/performance.md, Session 20).
 */
function readAhead(readable: Readable, limit: number, signal: AbortSignal | undefined): Promise<SmallRead> {
  return new Promise<SmallRead>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const stop = () => {
      signal?.removeEventListener("abort", onAbort);
      readable.off("data", onData);
      readable.off("end", onEnd);
      readable.off("error", onError);
      readable.off("close", onClose);
    };
    const fail = (error: unknown) => {
      stop();
      readable.destroy();
      reject(toPutError(error, signal));
    };
    const onData = (chunk: unknown) => {
      if (!(chunk instanceof Uint8Array)) {
        fail(new FileBridgeError("INVALID_INPUT", "put sources must produce bytes (Uint8Array chunks)"));
        return;
      }
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size <= limit) return;
      readable.pause();
      stop();
      for (let i = chunks.length - 1; i >= 0; i--) readable.unshift(chunks[i]);
      resolve({ stream: readable });
    };
    const onEnd = () => {
      stop();
      resolve({ bytes: chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size) });
    };
    const onError = (error: Error) => fail(error);
    const onClose = () =>
      fail(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    const onAbort = () => fail(signal?.reason);
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    readable.on("error", onError);
    readable.on("end", onEnd);
    readable.on("close", onClose);
    readable.on("data", onData);
  });
}
