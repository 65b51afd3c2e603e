/**
 * Small writes on the calling thread. A file of a few KiB costs `fsStore` three thread-pool round
 * trips when written with `fs.writeFile` (open, write, close), and on a 2-core machine those trips
 * cost more CPU than the syscalls themselves: 46–80 µs against 27–42 µs for `writeFileSync` of the
 * same 5.6 KiB record (docs/performance.md, Session 10). So records and small files are written
 * synchronously while the disk is fast. When it is not (the ext4 disk the benches run on has spells
 * in which a create costs 0.5 ms of CPU), a thread-pool trip costs little next to the write and keeps
 * the event loop free: {@link SLOW_WRITES} synchronous creates in a row slower than
 * {@link SLOW_WRITE_MS} (or one slower than {@link STALLED_WRITE_MS}) send the next
 * {@link OFFLOADED_WRITES} creates, and the renames between them, to the thread pool; then the disk is
 * timed again. Only creates are timed: on that disk a rename stays cheap while creates are slow.
 */

import { rename as renameCb, renameSync, writeFile as writeFileCb, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";

// The callback forms: one thread-pool trip per step, without FileHandle's extra promise machinery.
const writeFileAsync = promisify(writeFileCb);
const renameAsync = promisify(renameCb);

/**
 * A synchronous write slower than this (ms) costs so much more than a thread-pool trip (about 20 µs
 * of CPU) that the trip is worth taking: the disk is slow for now.
 */
export const SLOW_WRITE_MS = 0.25;
/** Synchronous creates in a row over {@link SLOW_WRITE_MS} that say so (one may just have been preempted). */
export const SLOW_WRITES = 4;
/** A single synchronous create slower than this (ms) says so alone. */
export const STALLED_WRITE_MS = 5;
/** How many creates go to the thread pool once the disk is slow, before it is timed again. */
export const OFFLOADED_WRITES = 256;

/** Where `fsStore` writes records and small files: synchronously while that stays fast. */
export class FsSmallWrites {
  #offloaded = 0;
  /** Synchronous creates in a row slower than {@link SLOW_WRITE_MS}. */
  #slow = 0;

  /**
   * @param sync Whether writes may happen on the calling thread at all (`fsStore`'s `smallWrites`).
   * @param clock Milliseconds, for timing each synchronous create (a test passes its own).
   */
  constructor(
    private readonly sync = true,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** How many of the next creates go to the thread pool (0 while synchronous ones are fast). */
  get offloaded(): number {
    return this.sync ? this.#offloaded : Number.POSITIVE_INFINITY;
  }

  /**
   * Writes `bytes` to a new file at `path` (`flag` `"wx"`: created exclusively) with `mode`.
   * Rejects as `fs.writeFile` would; whatever it created before failing is the caller's to remove.
   */
  async write(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    if (!this.sync || this.#offloaded > 0) {
      if (this.#offloaded > 0) this.#offloaded--;
      await writeFileAsync(path, bytes, { mode, flag: "wx" });
      return;
    }
    const started = this.clock();
    try {
      writeFileSync(path, bytes, { mode, flag: "wx" });
    } finally {
      this.#timed(started);
    }
  }

  /**
   * Renames `from` to `to`: on the thread pool while creates go there, else on the calling thread.
   * Not timed, and not counted against the creates sent to the thread pool.
   */
  async rename(from: string, to: string): Promise<void> {
    if (!this.sync || this.#offloaded > 0) {
      await renameAsync(from, to);
      return;
    }
    renameSync(from, to);
  }

  #timed(started: number): void {
    const took = this.clock() - started;
    this.#slow = took > SLOW_WRITE_MS ? this.#slow + 1 : 0;
    if (this.#slow >= SLOW_WRITES || took > STALLED_WRITE_MS) {
      this.#slow = 0;
      this.#offloaded = OFFLOADED_WRITES;
    }
  }
}
