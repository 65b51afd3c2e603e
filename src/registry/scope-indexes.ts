import { Mutex } from "../internal/mutex.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import { ScopeIndex } from "./scope-index.js";

/**
 * The registry's in-memory view of the scopes in use: one {@link ScopeIndex} (ids and names, never
 * bytes) and one mutex per scope, loaded from the store on first use and dropped again after
 * `indexIdleTimeout` without use (least recently used first) unless a connected session belongs to
 * the scope.
 */
export class ScopeIndexes {
  private readonly indexes = new Map<string, ScopeIndex>();
  private readonly mutexes = new Map<string, Mutex>();
  /** Last use of each scope's index and mutex, least recently used first. */
  private readonly lastUsed = new Map<string, number>();
  private lastSweep = Number.NEGATIVE_INFINITY;

  /**
   * @param templateOf which template a file belongs to (see {@link ScopeIndex}).
   * @param indexIdleMs how long an unused scope is kept; `undefined` keeps every scope.
   * @param pinned the scopes of connected sessions, never dropped.
   */
  constructor(
    private readonly store: FileStore,
    private readonly templateOf: (file: StoredFile) => number,
    private readonly now: () => number,
    private readonly indexIdleMs: number | undefined,
    private readonly pinned: () => Set<string>,
  ) {}

  /** The loaded index of a scope, without loading or touching it. */
  peek(scope: string): ScopeIndex | undefined {
    return this.indexes.get(scope);
  }

  /** The scopes whose index is loaded. */
  loadedScopes(): string[] {
    return [...this.indexes.keys()];
  }

  /** Forgets a scope's index (the next use reloads it from the store); call under the scope's mutex. */
  forget(scope: string): void {
    this.indexes.delete(scope);
  }

  /** Replaces a scope's index (after a re-read from the store); call under the scope's mutex. */
  replace(scope: string, index: ScopeIndex): void {
    this.indexes.set(scope, index);
  }

  mutexFor(scope: string): Mutex {
    this.touch(scope);
    let mutex = this.mutexes.get(scope);
    if (!mutex) {
      mutex = new Mutex();
      this.mutexes.set(scope, mutex);
    }
    return mutex;
  }

  async load(scope: string): Promise<ScopeIndex> {
    const index = new ScopeIndex(this.templateOf);
    let cursor: string | undefined;
    do {
      const page = await this.store.list(scope, { limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
      for (const file of page.files) index.upsert(file);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return index;
  }

  /** Runs `fn` with the scope's index, loading it from the store first; guarded by the scope's mutex. */
  with<T>(scope: string, fn: (index: ScopeIndex) => T | Promise<T>): Promise<T> {
    return this.mutexFor(scope).runExclusive(async () => {
      let index = this.indexes.get(scope);
      if (!index) {
        index = await this.load(scope);
        this.indexes.set(scope, index);
      }
      try {
        return await fn(index);
      } finally {
        this.touch(scope);
      }
    });
  }

  /** Marks a scope as used now (moving it to the back of the LRU order) and sweeps idle ones. */
  private touch(scope: string): void {
    if (this.indexIdleMs === undefined) return;
    const now = this.now();
    this.lastUsed.delete(scope);
    this.lastUsed.set(scope, now);
    if (now - this.lastSweep >= this.indexIdleMs / 2) this.sweep(now);
  }

  /**
   * Drops the index and mutex of every scope idle for `indexIdleTimeout` that no attached session
   * belongs to and nobody holds or waits for (a waiter keeps the mutex locked). Synchronous, so
   * nothing interleaves; the next use reloads the scope from the store.
   */
  private sweep(now: number): void {
    this.lastSweep = now;
    const idleMs = this.indexIdleMs as number;
    let pinned: Set<string> | undefined;
    for (const [scope, used] of this.lastUsed) {
      // Least recently used first: the first scope still in use ends the sweep.
      if (now - used < idleMs) break;
      if (this.mutexes.get(scope)?.isLocked()) continue;
      pinned ??= this.pinned();
      if (pinned.has(scope)) continue;
      this.indexes.delete(scope);
      this.mutexes.delete(scope);
      this.lastUsed.delete(scope);
    }
  }
}
