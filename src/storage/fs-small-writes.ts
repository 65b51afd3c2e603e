/**
 * Small writes on the calling thread. A file of a few KiB costs `fsStore` three thread-pool round
 * trips when written with `fs.writeFile` (open, write, close), and on a 2-core machine those trips
 * cost more CPU than the syscalls themselves: about 50 µs against 28 µs for `writeFileSync` of the
 * same 5.6 KiB record (measured in docs/performance.md, Session 10). So records and small files are
 * written synchronously, and the event loop pays for it only while the disk is fast: a synchronous
 * write that takes longer than {@link SLOW_WRITE_MS} sends the next {@link OFFLOADED_WRITES} writes
 * back to the thread pool, after which the next one is timed again. A slow or networked disk
 * therefore blocks the loop once per few hundred writes, never for every write.
 */

import { rename as renameCb, renameSync, writeFile as writeFileCb, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";

// The callback forms: one thread-pool trip per step, without FileHandle's extra promise machinery.
export const writeFileAsync = promisify(writeFileCb);
export const renameAsync = promisify(renameCb);

/** A synchronous write slower than this (ms) means the disk is slow for now. */
export const SLOW_WRITE_MS = 1;
/** How many writes go to the thread pool after one slow synchronous write. */
export const OFFLOADED_WRITES = 256;

/** Where `fsStore` writes records and small files: synchronously while that stays fast. */
export class SmallWrites {
  #offloaded = 0;

  /** @param clock Milliseconds, for timing each synchronous write (a test passes its own). */
  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** How many of the next writes go to the thread pool (0 while synchronous writes are fast). */
  get offloaded(): number {
    return this.#offloaded;
  }

  /**
   * Writes `bytes` to a new file at `path` (`flag` `"wx"`: created exclusively) with `mode`.
   * Rejects as `fs.writeFile` would; whatever it created before failing is the caller's to remove.
   */
  async write(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    if (this.#offloaded > 0) {
      this.#offloaded--;
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

  /** Renames `from` to `to`, on the same terms as {@link write}. */
  async rename(from: string, to: string): Promise<void> {
    if (this.#offloaded > 0) {
      this.#offloaded--;
      await renameAsync(from, to);
      return;
    }
    const started = this.clock();
    try {
      renameSync(from, to);
    } finally {
      this.#timed(started);
    }
  }

  #timed(started: number): void {
    if (this.clock() - started > SLOW_WRITE_MS) this.#offloaded = OFFLOADED_WRITES;
  }
}
