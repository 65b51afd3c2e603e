/**
 * Where `fsStore` writes records and small files: on the process's writer thread (see
 * `fs-writer-thread.ts`), or on the thread pool (`fs.writeFile`, `fs.rename`) for `fsStore`'s
 * `smallWrites: "thread-pool"`, for writes too large for a writer slot, and once the writer thread
 * has failed. Either way the calling thread never waits for the disk.
 */

import { renameAsync, writeFileAsync } from "../internal/fs-callbacks.js";
import { type FsWriterThread, fsWriterThread, WriterUnavailable } from "./fs-writer-thread.js";

// The callback forms (internal/fs-callbacks.ts): one thread-pool trip per step, without
// FileHandle's extra promise machinery.

/** Where small writes go: the writer thread, or the thread pool. */
export type SmallWrites = "writer-thread" | "thread-pool";

/** Writes records and small files (see the module comment). */
export class FsSmallWrites {
  /**
   * @param where `fsStore`'s `smallWrites`.
   * @param writerThread The writer thread while it is usable (tests pass their own).
   */
  constructor(
    readonly where: SmallWrites = "writer-thread",
    private readonly writerThread: () => FsWriterThread | undefined = fsWriterThread,
  ) {}

  /** The writer thread to use now, if any. */
  #writer(): FsWriterThread | undefined {
    if (this.where !== "writer-thread") return undefined;
    const writer = this.writerThread();
    return writer?.usable ? writer : undefined;
  }

  /**
   * Writes `bytes` to a new file at `path` (created exclusively) with `mode`. Rejects as
   * `fs.writeFile` would (a Node system error with its `code`); whatever it created before failing is
   * the caller's to remove.
   */
  async write(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    const writer = this.#writer();
    if (writer?.fits(path, bytes)) {
      try {
        return await writer.write(path, bytes, mode);
      } catch (error) {
        // The thread failed before it took this write: nothing was written.
        if (!(error instanceof WriterUnavailable)) throw error;
      }
    }
    await writeFileAsync(path, bytes, { mode, flag: "wx" });
  }

  /** Renames `from` to `to`, as `fs.rename` does. */
  async rename(from: string, to: string): Promise<void> {
    const writer = this.#writer();
    if (writer?.fits(from, to)) {
      try {
        return await writer.rename(from, to);
      } catch (error) {
        if (!(error instanceof WriterUnavailable)) throw error;
      }
    }
    await renameAsync(from, to);
  }
}
