/**
 * The sink of an `r2Store` put: a `Writable` that stores what is written to it as one R2 object in
 * bounded memory. R2 takes a stream only when its length is known up front, and a multipart upload
 * only with parts of one size (all but the last), so bytes are copied into one part buffer of
 * `partSize`; each full buffer goes up with `uploadPart` while the next one fills (at most
 * `queueSize` parts in flight), and the write callback waits while the queue is full, so the source
 * is not read faster than R2 takes it. A body that ends within its first part is one `put` instead.
 * The upload is completed in `_final`; after any failure {@link R2PartSink.discard} aborts it.
 */
import { Writable } from "node:stream";
import type { FileBridgeError } from "../errors/file-bridge-error.js";
import type { R2BucketBinding, R2MultipartUploadLike, R2UploadedPartLike } from "./bindings.js";

/** R2's limit on the parts of one multipart upload. */
const MAX_PARTS = 10_000;

/**
 * Where and how an {@link R2PartSink} stores its object.
 *
 * @example
 * ```ts
 * const options: R2PartSinkOptions = { bucket: env.FILES, key, partSize: 8 << 20, queueSize: 2, error };
 * ```
 */
export interface R2PartSinkOptions {
  bucket: R2BucketBinding;
  key: string;
  /** At least 5 MiB (R2's minimum for every part but the last); every part but the last has it. */
  partSize: number;
  /** Parts uploaded at once. */
  queueSize: number;
  /** Maps an R2 failure to the store's error (`STORAGE_ERROR`). */
  error(action: string, cause: unknown): FileBridgeError;
}

/**
 * A `Writable` that stores its bytes as one R2 object (see the module comment).
 *
 * @example
 * ```ts
 * const sink = new R2PartSink({ bucket: env.FILES, key, partSize: 8 << 20, queueSize: 2, error });
 * try {
 *   await pipeline(source, sink);
 * } catch (error) {
 *   await sink.discard();
 *   throw error;
 * }
 * ```
 */
export class R2PartSink extends Writable {
  private buffer: Uint8Array | undefined;
  private filled = 0;
  private upload: Promise<R2MultipartUploadLike> | undefined;
  private readonly parts: Promise<R2UploadedPartLike>[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private wroteSingle = false;

  constructor(private readonly options: R2PartSinkOptions) {
    super({ highWaterMark: options.partSize });
  }

  override _write(
    chunk: Uint8Array,
    _encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ): void {
    this.take(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.finish().then(() => callback(), callback);
  }

  /** Aborts the multipart upload and removes a single `put`'s object, if any; never throws. */
  async discard(): Promise<void> {
    const upload = this.upload;
    this.upload = undefined;
    await Promise.allSettled([...this.inFlight]);
    if (upload) await upload.then((u) => u.abort()).catch(() => {});
    if (this.wroteSingle) await this.options.bucket.delete(this.options.key).catch(() => {});
  }

  private async take(chunk: Uint8Array): Promise<void> {
    const { partSize } = this.options;
    let offset = 0;
    while (offset < chunk.byteLength) {
      this.buffer ??= new Uint8Array(partSize);
      const count = Math.min(partSize - this.filled, chunk.byteLength - offset);
      this.buffer.set(chunk.subarray(offset, offset + count), this.filled);
      this.filled += count;
      offset += count;
      if (this.filled === partSize) await this.sendPart();
    }
  }

  /** Sends the full buffer as the next part, waiting while `queueSize` parts are in flight. */
  private async sendPart(): Promise<void> {
    const { bucket, key, queueSize, error } = this.options;
    const bytes = this.buffer as Uint8Array;
    this.buffer = undefined;
    this.filled = 0;
    if (this.parts.length === MAX_PARTS) throw error("upload a part", new Error("too many parts"));
    this.upload ??= bucket.createMultipartUpload(key);
    const upload = this.upload;
    const partNumber = this.parts.length + 1;
    const part = upload.then((u) => u.uploadPart(partNumber, bytes));
    this.parts.push(part);
    const settled: Promise<unknown> = part.then(
      (): unknown => this.inFlight.delete(settled),
      (): unknown => this.inFlight.delete(settled),
    );
    this.inFlight.add(settled);
    while (this.inFlight.size >= queueSize) {
      await Promise.race(this.inFlight);
      // A failed part fails the put now rather than at the end.
      await Promise.all(this.parts).catch((cause: unknown) => {
        throw error("upload a part", cause);
      });
    }
  }

  private async finish(): Promise<void> {
    const { bucket, key, error } = this.options;
    const rest = this.buffer ? this.buffer.subarray(0, this.filled) : new Uint8Array(0);
    if (!this.upload) {
      try {
        this.wroteSingle = true;
        await bucket.put(key, rest);
      } catch (cause) {
        throw error("store the file", cause);
      }
      return;
    }
    try {
      // The last part may be smaller; an empty one is left out (R2 refuses it).
      if (rest.byteLength > 0) {
        const upload = this.upload;
        const partNumber = this.parts.length + 1;
        this.parts.push(upload.then((u) => u.uploadPart(partNumber, rest)));
      }
      const parts = await Promise.all(this.parts);
      await (await this.upload).complete(parts);
      this.upload = undefined;
      this.wroteSingle = true;
    } catch (cause) {
      throw error("complete the upload", cause);
    }
  }
}
