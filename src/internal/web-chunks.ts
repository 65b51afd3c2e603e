/**
 * A web stream's chunks read large: a byte stream (a Worker's `request.body`) through a BYOB reader
 * with workerd's `readAtLeast`, each read filling a buffer of `size` bytes unless the stream ends;
 * any other stream in its own chunks. On workerd a request body read in its own (small) chunks costs
 * ~0.24 s of CPU per 64 MiB; in 1 MiB reads ~0.02 s. A reader that hands a chunk back once it is
 * done with its bytes ({@link ChunkReads.release}) has the next read fill that chunk's buffer: a
 * fresh 1 MiB buffer per read costs ~0.03 s of CPU per 64 MiB on workerd (Session 19).
 */

/** A BYOB reader with workerd's `readAtLeast` (fills the view with at least `min` bytes unless the stream ends). */
type AtLeastReader = ReadableStreamBYOBReader & {
  readAtLeast(min: number, view: Uint8Array): Promise<ReadableStreamReadResult<Uint8Array>>;
};

/**
 * Reads of a web stream's chunks; `read()` answers `undefined` at its end.
 *
 * @example
 * ```ts
 * const chunks = largeChunks(request.body, 1 << 20);
 * for (let chunk = await chunks.read(); chunk; chunk = await chunks.read()) hash.update(chunk);
 * ```
 */
export interface ChunkReads {
  read(): Promise<Uint8Array | undefined>;
  /**
   * Hands back a chunk `read` gave, once nothing reads its bytes any more (a write of it has
   * ended): a later read may fill its buffer. Optional for the caller; a chunk these reads did not
   * give (or one already handed back) is left alone.
   */
  release(chunk: Uint8Array): void;
  /** Cancels the stream (never throws). */
  cancel(reason: unknown): Promise<void>;
}

/** The reads behind each stream made by {@link streamOfChunks}. */
const readsOf = new WeakMap<ReadableStream<Uint8Array>, ChunkReads>();

/**
 * A web stream of the chunks `reads` gives (pulled one at a time, nothing read ahead). Given to
 * {@link largeChunks}, the stream is locked and `reads` itself is answered, so its reader goes
 * around the stream's own queue and can {@link ChunkReads.release} chunks.
 *
 * @example
 * ```ts
 * const body = streamOfChunks(largeChunks(request.body, 1 << 20));
 * ```
 */
export function streamOfChunks(reads: ChunkReads): ReadableStream<Uint8Array> {
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await reads.read();
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
      cancel: (reason) => reads.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  readsOf.set(stream, reads);
  return stream;
}

/**
 * Locks `source` and reads it in chunks of up to `size` bytes where it is a byte stream with
 * `readAtLeast` (workerd), each read waiting for at least `min` bytes (or the end), else in its own
 * chunks; a stream made by {@link streamOfChunks} answers its own reads. Every chunk is a buffer of
 * its own until it is {@link ChunkReads.release}d, so it may be handed on.
 *
 * @example
 * ```ts
 * const chunks = largeChunks(request.body, 1 << 20);
 * ```
 */
export function largeChunks(source: ReadableStream<Uint8Array>, size: number, min = size): ChunkReads {
  const own = readsOf.get(source);
  if (own) {
    // Locked as any reader locks it (a locked one throws here); the reads go around its queue.
    source.getReader();
    return own;
  }
  let byob: AtLeastReader | undefined;
  try {
    const reader = source.getReader({ mode: "byob" }) as AtLeastReader;
    if (typeof reader.readAtLeast === "function") byob = reader;
    else reader.releaseLock();
  } catch {
    // Not a byte stream: its own chunks.
  }
  const reader = byob ?? source.getReader();
  // Buffers handed back, for the next reads (two at most: one written, one read into).
  const spare: ArrayBuffer[] = [];
  // The buffers of the chunks BYOB reads gave and nobody handed back yet: only these may be read
  // into again (a caller's own bytes released by mistake would be transferred away by the read).
  const lent = new WeakSet<ArrayBuffer>();
  return {
    async read() {
      for (;;) {
        const { done, value } = byob
          ? await byob.readAtLeast(min, new Uint8Array(spare.pop() ?? new ArrayBuffer(size)))
          : await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
        if (value && value.byteLength > 0) {
          if (byob) lent.add(value.buffer as ArrayBuffer);
          return value;
        }
        if (done) return undefined;
      }
    },
    release(chunk) {
      // Only a BYOB read's chunk starts its own buffer of `size` bytes (a read transfers the
      // buffer it fills, so a chunk whose buffer was read into again has a detached one).
      const buffer = chunk.buffer as ArrayBuffer;
      if (
        lent.has(buffer) &&
        chunk.byteOffset === 0 &&
        buffer.byteLength === size &&
        spare.length < 2 &&
        !spare.includes(buffer)
      ) {
        lent.delete(buffer);
        spare.push(buffer);
      }
    },
    cancel: (reason) => reader.cancel(reason).catch(() => {}),
  };
}
