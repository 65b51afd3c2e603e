/**
 * A promise-chain mutex: `runExclusive` runs tasks one at a time in call order. `isLocked()` is true
 * while a task runs or waits (a waiter keeps it locked), what the registry's idle sweep asks before
 * dropping a scope. Replaces `async-mutex`, whose two methods were all the registry used.
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;

  /** Whether a task holds the mutex or waits for it. */
  isLocked(): boolean {
    return this.#pending > 0;
  }

  /** Runs `task` once every task queued before it has settled; resolves or rejects as it does. */
  async runExclusive<T>(task: () => T | Promise<T>): Promise<T> {
    this.#pending++;
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await previous;
      return await task();
    } finally {
      this.#pending--;
      release();
    }
  }
}
