/**
 * The resolutions under way per temp dir (`FileBridge.resolve` and `resolveEach`, whatever started
 * them: a call of `withFiles`, `resolveAll`), so `FileBridge.close()` can wait for those started
 * before it: each has then written its file (in use until disposed) or failed and removed its
 * folder, and nothing of theirs is made in the temp dir after `close()` resolves. Shared by every
 * bridge on the same temp dir, like its pool of call folders (call-folders.ts).
 *
 * Cheap on a call's way: a counter per batch, and a promise only when someone waits. `close()` waits
 * for the batch under way and starts a new one, so calls started after it never hold it up.
 */

/** Resolutions started since the last {@link ResolutionsUnderWay.settled}. */
class Batch {
  count = 0;
  #idle: (() => void) | undefined;
  #settled: Promise<void> | undefined;

  end(): void {
    this.count -= 1;
    if (this.count === 0) this.#idle?.();
  }

  settled(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    this.#settled ??= new Promise((done) => {
      this.#idle = done;
    });
    return this.#settled;
  }
}

/**
 * Counts the resolutions under way in one temp dir.
 *
 * @example
 * ```ts
 * const file = await resolutionsIn(tmpDir).run(() => resolveOne(input));
 * // in close(): every resolution started before this line has settled after it
 * await resolutionsIn(tmpDir).settled();
 * ```
 */
export class ResolutionsUnderWay {
  #batch = new Batch();

  /** Runs `resolution`, counted as under way until it settles. */
  async run<T>(resolution: () => Promise<T>): Promise<T> {
    const batch = this.#batch;
    batch.count += 1;
    try {
      return await resolution();
    } finally {
      batch.end();
    }
  }

  /** Settles once every resolution started before this call has settled (whatever its outcome). */
  settled(): Promise<void> {
    const batch = this.#batch;
    if (batch.count > 0) this.#batch = new Batch();
    return batch.settled();
  }
}

const underWay = new Map<string, ResolutionsUnderWay>();

/** The resolutions under way in `tmpDir` (one counter per temp dir, made on first use). */
export function resolutionsIn(tmpDir: string): ResolutionsUnderWay {
  let resolutions = underWay.get(tmpDir);
  if (resolutions === undefined) {
    resolutions = new ResolutionsUnderWay();
    underWay.set(tmpDir, resolutions);
  }
  return resolutions;
}
