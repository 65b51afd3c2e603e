/**
 * A few reused buffers that a file writer copies incoming chunks into, so the chunks themselves
 * (Node's new buffer for every socket read) are free the moment they are copied.
 *
 * Why it matters (docs/performance.md, Session 17): V8 promotes a young `ArrayBuffer` that is still
 * referenced when a scavenge runs, and a promoted one's memory is freed only by a full (mark-compact)
 * collection. A writer that kept ~1–3 MiB of socket chunks queued while a `writev` ran had some of
 * them alive at every scavenge: 2–5 MiB of dead old-generation buffers per 64 MiB uploaded, counted
 * against the old generation's limit until V8 ran a mark-compact, after which the process stayed in
 * back-to-back full GCs (30–40 per GiB, ~+1 s CPU per GiB) for the rest of its life. Copying into
 * these slots costs one `memcpy` per byte and keeps no caller buffer past its write call.
 */

/** Bytes of one slot. */
export const SLOT_BYTES = 64 * 1024;
/** Slots one ring uses at most: the bytes a writer holds before it makes its source wait. */
export const RING_SLOTS = 4;
/** Free slots the process keeps for the next writer (at most 512 KiB). */
const POOL_SLOTS = 8;
const pool: Buffer[] = [];

/** The bytes of one write: views of the filled slots, in order, and the slots to give back after it. */
export interface RingBatch {
  readonly views: Buffer[];
  readonly slots: Buffer[];
}

/**
 * Copies chunks into at most {@link RING_SLOTS} slots of {@link SLOT_BYTES}, taken from a process
 * pool on first use and given back by {@link dispose}; {@link take} hands every filled byte to one
 * write, {@link release} gives its slots back once it is done.
 *
 * @example
 * ```ts
 * const ring = new WriteRing();
 * const copied = ring.copy(chunk, 0); // < chunk.byteLength: every slot is full or being written
 * const batch = ring.take();
 * await handle.writev(batch.views, position);
 * ring.release(batch.slots);
 * ```
 */
export class WriteRing {
  /** Slots of this ring that hold nothing. */
  readonly #free: Buffer[] = [];
  /** Slots taken so far (free, filling, filled or being written). */
  #owned = 0;
  /** Slots filled up, in order, not yet taken. */
  readonly #full: Buffer[] = [];
  #filling: Buffer | null = null;
  #fill = 0;

  /** True when some copied bytes are not yet taken. */
  get hasBytes(): boolean {
    return this.#full.length > 0 || this.#fill > 0;
  }

  /**
   * Copies `chunk` from `offset` into free slots; returns the offset reached (the chunk's length
   * when all of it was copied; less when every slot is full or being written).
   */
  copy(chunk: Uint8Array, offset: number): number {
    let at = offset;
    while (at < chunk.byteLength) {
      if (!this.#filling) {
        const slot = this.#slot();
        if (!slot) break;
        this.#filling = slot;
        this.#fill = 0;
      }
      const filling = this.#filling;
      const take = Math.min(SLOT_BYTES - this.#fill, chunk.byteLength - at);
      filling.set(chunk.subarray(at, at + take), this.#fill);
      this.#fill += take;
      at += take;
      if (this.#fill === SLOT_BYTES) {
        this.#full.push(filling);
        this.#filling = null;
        this.#fill = 0;
      }
    }
    return at;
  }

  /** Every copied byte not yet taken (full slots and the partly filled one), for one write. */
  take(): RingBatch {
    const slots = this.#full.splice(0);
    const views = [...slots];
    if (this.#filling && this.#fill > 0) {
      views.push(this.#filling.subarray(0, this.#fill));
      slots.push(this.#filling);
      this.#filling = null;
      this.#fill = 0;
    }
    return { views, slots };
  }

  /** Gives back the slots of a batch whose write is over. */
  release(slots: Buffer[]): void {
    this.#free.push(...slots);
  }

  /** Gives every slot of this ring back to the process pool (call once no write uses them). */
  dispose(): void {
    const slots = [...this.#free, ...this.#full];
    if (this.#filling) slots.push(this.#filling);
    this.#free.length = 0;
    this.#full.length = 0;
    this.#filling = null;
    this.#fill = 0;
    this.#owned = 0;
    for (const slot of slots) if (pool.length < POOL_SLOTS) pool.push(slot);
  }

  #slot(): Buffer | undefined {
    const free = this.#free.pop();
    if (free) return free;
    if (this.#owned >= RING_SLOTS) return undefined;
    this.#owned++;
    return pool.pop() ?? Buffer.allocUnsafeSlow(SLOT_BYTES);
  }
}
