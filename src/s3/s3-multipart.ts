/**
 * The sink of an `s3Store` put: a `Writable` that stores what is written to it as one S3 object,
 * in bounded memory. Bytes are copied into part buffers of `partSize` taken from a pool of at most
 * `queueSize + 1` (allocated when first needed, then reused); each full buffer goes up with
 * `UploadPart`, at most `queueSize` at a time, and returns to the pool when S3 acknowledges its
 * part. While no buffer is free the write callback waits, so the source is not read. A body that
 * ends within its first part is one `PutObject` instead (a small one is sent as the chunks that
 * came, without a part buffer). The multipart upload is completed in `_final`, with the ETags in
 * part order; after any failure {@link S3Multipart.discard} aborts it.
 */
import { Writable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
  type Tag,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import type { FileBridgeError } from "../errors/file-bridge-error.js";

/** S3's limit on the parts of one multipart upload. */
const MAX_PARTS = 10_000;

/**
 * Bytes kept as the chunks that came before a part buffer is taken: a body this small is sent
 * with one `PutObject` of those chunks, and never costs a `partSize` buffer.
 */
const SMALL_BYTES = 1024 * 1024;

/** Where and how an {@link S3Multipart} stores its object. */
export interface S3MultipartOptions {
  client: S3Client;
  bucket: string;
  key: string;
  /** At least 5 MiB (S3's minimum for every part but the last). */
  partSize: number;
  /** Parts uploaded at once; the pool holds one buffer more. */
  queueSize: number;
  /** Set on the object: with its `PutObject`, or after the multipart upload is complete. */
  tag?: Tag | undefined;
  /** Maps an S3 failure to the store's error (`STORAGE_ERROR`). */
  error(action: string, cause: unknown): FileBridgeError;
  /** Makes a part buffer (tests count them). @default Buffer.allocUnsafeSlow */
  allocate?: (size: number) => Buffer;
}

/**
 * A `Writable` that stores its bytes as one S3 object (see the module comment). The object exists
 * once the stream has finished; after a failure call {@link discard}, which leaves neither an
 * object written by this stream's requests nor an unfinished multipart upload.
 *
 * @example
 * ```ts
 * const sink = new S3Multipart({ client, bucket, key, partSize: 8 * MiB, queueSize: 4, error: s3Error });
 * try {
 *   await pipeline(source, sink);
 * } catch (error) {
 *   await sink.discard();
 *   throw error;
 * }
 * ```
 */
export class S3Multipart extends Writable {
  private readonly options: S3MultipartOptions;
  private readonly allocate: (size: number) => Buffer;
  /** Cancels the requests that carry bytes once the put has failed. */
  private readonly requests = new AbortController();
  /** Chunks of a body still within {@link SMALL_BYTES}, before any part buffer. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The part buffer being filled, and how many of its bytes are set. */
  private buffer: Buffer | undefined;
  private filled = 0;
  /** Buffers not in use; {@link allocated} counts all that were made. */
  private readonly pool: Buffer[] = [];
  private allocated = 0;
  private uploadId: string | undefined;
  private readonly etags: string[] = [];
  /** Part uploads not yet settled. */
  private readonly sending = new Set<Promise<void>>();
  /** Called when a part settles (a slot and a buffer may be free). */
  private wake: (() => void) | undefined;
  /** The first failure; every wait ends with it. */
  private failure: Error | undefined;
  /** A request without a body in flight (create, complete, tagging). */
  private control: Promise<unknown> | undefined;
  /** A `PutObject` in flight. */
  private single: Promise<unknown> | undefined;
  private finished = false;
  private discarded: Promise<void> | undefined;

  constructor(options: S3MultipartOptions) {
    super();
    this.options = options;
    this.allocate = options.allocate ?? ((size) => Buffer.allocUnsafeSlow(size));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.take(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.finish().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (error) this.failure ??= error;
    this.discard().then(() => callback(error));
  }

  /**
   * After a failure (of the stream or around it): cancels the part uploads in flight, waits for
   * every request to settle, and aborts the multipart upload. A `PutObject` or a completed upload
   * may still have written the object; the caller deletes the key after this. Does nothing once
   * the stream has finished; safe to call more than once.
   */
  discard(): Promise<void> {
    if (this.finished) return Promise.resolve();
    this.discarded ??= (async () => {
      this.failure ??= new Error("the put was discarded");
      this.requests.abort();
      this.wake?.();
      // The control requests are not cancelled: their answer says whether there is anything to undo.
      await Promise.allSettled([...this.sending, this.control, this.single]);
      const { client, bucket, key } = this.options;
      if (this.uploadId !== undefined) {
        await client
          .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: this.uploadId }))
          .catch(() => undefined);
      }
      this.release();
    })();
    return this.discarded;
  }

  /** Copies a chunk into part buffers, sending each one that fills once more bytes follow it. */
  private async take(chunk: Buffer): Promise<void> {
    if (this.buffer === undefined) {
      if (this.heldBytes + chunk.byteLength <= SMALL_BYTES) {
        this.held.push(chunk);
        this.heldBytes += chunk.byteLength;
        return;
      }
      // Past the small size: from here on every byte goes through part buffers.
      this.buffer = this.takeBuffer();
      for (const held of this.held) this.append(held, 0, held.byteLength);
      this.held = [];
      this.heldBytes = 0;
    }
    let offset = 0;
    while (offset < chunk.byteLength) {
      // A full buffer is sent only when a byte follows it: a body of exactly one part stays one PUT.
      if (this.filled === this.options.partSize) await this.sendCurrent();
      offset += this.append(chunk, offset, chunk.byteLength);
    }
  }

  /** Copies `chunk[start, end)` into the current buffer as far as it fits; returns the bytes copied. */
  private append(chunk: Buffer, start: number, end: number): number {
    const buffer = this.buffer as Buffer;
    const count = Math.min(this.options.partSize - this.filled, end - start);
    chunk.copy(buffer, this.filled, start, start + count);
    this.filled += count;
    return count;
  }

  /** A free buffer from the pool, or a new one while fewer than `queueSize + 1` exist. */
  private takeBuffer(): Buffer {
    const free = this.pool.pop();
    if (free) return free;
    if (this.allocated > this.options.queueSize) {
      throw new Error("s3Multipart: no free part buffer (a part was sent without a free slot)");
    }
    this.allocated++;
    return this.allocate(this.options.partSize);
  }

  /** Waits for a free slot, sends the current buffer as the next part, and starts a new buffer. */
  private async sendCurrent(): Promise<void> {
    await this.freeSlot();
    if (this.uploadId === undefined) await this.create();
    this.check();
    this.sendPart(this.buffer as Buffer, this.filled);
    // A slot was free, so at most `queueSize` buffers are in flight and one is free or can be made.
    this.buffer = this.takeBuffer();
    this.filled = 0;
  }

  /** Resolves once fewer than `queueSize` parts are in flight; throws the failure if there is one. */
  private async freeSlot(): Promise<void> {
    this.check();
    while (this.sending.size >= this.options.queueSize) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
      this.check();
    }
  }

  private check(): void {
    if (this.failure) throw this.failure;
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    this.wake?.();
    this.destroy(error);
  }

  private async create(): Promise<void> {
    const { client, bucket, key } = this.options;
    // No `Tagging` here: radosgw (16.2) ignores it on CreateMultipartUpload; see `finish`.
    const created = client.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: "application/octet-stream" }),
    );
    this.control = created;
    try {
      const { UploadId } = await created;
      if (!UploadId) throw new Error("CreateMultipartUpload returned no UploadId");
      this.uploadId = UploadId;
    } catch (error) {
      throw this.options.error("start the multipart upload", error);
    }
  }

  /** Uploads one part in the background; its buffer goes back to the pool once S3 has it. */
  private sendPart(buffer: Buffer, length: number): void {
    const number = this.etags.length + 1;
    if (number > MAX_PARTS) {
      throw this.options.error(
        "upload the file",
        new Error(`more than ${MAX_PARTS} parts of ${this.options.partSize} bytes`),
      );
    }
    this.etags.push("");
    const { client, bucket, key } = this.options;
    const sent: Promise<void> = client
      .send(
        new UploadPartCommand({
          Bucket: bucket,
          Key: key,
          UploadId: this.uploadId,
          PartNumber: number,
          Body: buffer.subarray(0, length),
          ContentLength: length,
        }),
        { abortSignal: this.requests.signal },
      )
      .then(
        (result) => {
          this.etags[number - 1] = result.ETag ?? "";
          if (!this.failure) this.pool.push(buffer);
        },
        (error: unknown) => {
          if (!this.failure) this.fail(this.options.error("upload the file", error));
        },
      )
      .finally(() => {
        this.sending.delete(sent);
        this.wake?.();
      });
    this.sending.add(sent);
  }

  /** Sends what is left: one `PutObject` for a body within one part, else the last part and the completion. */
  private async finish(): Promise<void> {
    this.check();
    const { client, bucket, key, tag } = this.options;
    if (this.uploadId === undefined) {
      const body =
        this.buffer !== undefined
          ? this.buffer.subarray(0, this.filled)
          : this.held.length === 1
            ? (this.held[0] as Buffer)
            : Buffer.concat(this.held, this.heldBytes);
      this.single = client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentLength: body.byteLength,
          ContentType: "application/octet-stream",
          ...(tag ? { Tagging: `${tag.Key}=${tag.Value}` } : {}),
        }),
        { abortSignal: this.requests.signal },
      );
      try {
        await this.single;
      } catch (error) {
        throw this.options.error("upload the file", error);
      }
    } else {
      if (this.filled > 0) {
        await this.freeSlot();
        this.sendPart(this.buffer as Buffer, this.filled);
        this.buffer = undefined;
      }
      while (this.sending.size > 0) await Promise.allSettled([...this.sending]);
      this.check();
      this.control = client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: this.uploadId,
          MultipartUpload: { Parts: this.etags.map((ETag, index) => ({ PartNumber: index + 1, ETag })) },
        }),
      );
      try {
        await this.control;
      } catch (error) {
        throw this.options.error("complete the multipart upload", error);
      }
      if (tag) {
        this.check();
        this.control = client.send(
          new PutObjectTaggingCommand({ Bucket: bucket, Key: key, Tagging: { TagSet: [tag] } }),
        );
        try {
          await this.control;
        } catch (error) {
          throw this.options.error("tag the file", error);
        }
      }
    }
    this.check();
    if (this.discarded) return;
    this.finished = true;
    this.release();
  }

  /** Drops every buffer and held chunk, so a finished or failed put holds no memory. */
  private release(): void {
    this.pool.length = 0;
    this.buffer = undefined;
    this.held = [];
  }
}
