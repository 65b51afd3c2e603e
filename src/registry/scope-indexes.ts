import { Mutex } from "../internal/mutex.js";
import type { FileStore, StoredFile } from "../storage/types.js";
import { type IndexPage, ScopeIndex } from "./scope-index.js";

/** Files asked of the store per page while loading a scope. */
const LOAD_PAGE = 1000;

/**
 * A scope being loaded from the store, a page at a time, in the background. Its index holds exactly
 * the files up to the last one loaded (the store lists in id order, and nothing else changes a
 * loading index: every other use waits for the whole load), so a list page that ends before that
 * file can be answered from it at once.
 */
interface Loading {
  readonly index: ScopeIndex;
  done: boolean;
  /** Resolves when the next store page is in (or the load ended or failed). */
  next: Promise<void>;
  /** The whole index, once loaded. */
  full: Promise<ScopeIndex>;
}

/**
 * The registry's in-memory view of the scopes in use: one {@link ScopeIndex} (ids and names, never
 * bytes) and one mutex per scope, loaded from the store on first use and dropped again after
 * `indexIdleTimeout` without use (least recently used first) unless a connected session belongs to
 * the scope.
 */
export class ScopeIndexes {
  private readonly indexes = new Map<string, ScopeIndex>();
  private readonly loading = new Map<string, Loading>();
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
    this.loading.delete(scope);
  }

  /** Replaces a scope's index (after a re-read from the store); call under the scope's mutex. */
  replace(scope: string, index: ScopeIndex): void {
    this.indexes.set(scope, index);
    this.loading.delete(scope);
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

  /**
   * A list page of a scope: from its index when loaded; else from the part loaded so far, as soon
   * as that part holds the page (the first page of a large scope does not wait for the rest).
   * Starts the load in the background if nobody has. Expired files met on the way are dropped.
   */
  async page(
    scope: string,
    after: string | undefined,
    limit: number,
    isLive: (file: StoredFile) => boolean,
  ): Promise<IndexPage> {
    for (;;) {
      const loading = this.indexes.has(scope) ? undefined : this.startLoad(scope);
      if (!loading || loading.done) {
        return this.with(scope, (index) => {
          const result = index.page(after, limit, isLive);
          for (const id of result.dead) index.delete(id);
          return result;
        });
      }
      // Only a prefix of the scope is in: the page is whole once a file past it is known to follow.
      const result = loading.index.page(after, limit, isLive);
      if (result.more && result.files.length === limit) return { ...result, dead: [] };
      await loading.next;
      this.touch(scope);
    }
  }

  /** The scope's background load, started if none is running. */
  private startLoad(scope: string): Loading {
    const running = this.loading.get(scope);
    if (running) return running;
    let wake = () => {};
    const state: Loading = {
      index: new ScopeIndex(this.templateOf),
      done: false,
      next: new Promise<void>((resolve) => {
        wake = resolve;
      }),
      full: Promise.resolve(new ScopeIndex(this.templateOf)),
    };
    state.full = (async () => {
      try {
        let cursor: string | undefined;
        do {
          const page = await this.store.list(scope, {
            limit: LOAD_PAGE,
            ...(cursor === undefined ? {} : { cursor }),
          });
          for (const file of page.files) state.index.upsert(file);
          cursor = page.nextCursor;
          if (cursor !== undefined) {
            const woken = wake;
            state.next = new Promise<void>((resolve) => {
              wake = resolve;
            });
            woken();
          }
        } while (cursor !== undefined);
        state.done = true;
        return state.index;
      } catch (error) {
        // A failed load is forgotten: the next use starts again (and meets the error itself).
        if (this.loading.get(scope) === state) this.loading.delete(scope);
        throw error;
      } finally {
        state.done = true;
        wake();
      }
    })();
    state.full.catch(() => {}); // its users await it themselves
    this.loading.set(scope, state);
    return state;
  }

  /** Runs `fn` with the scope's index, loading it from the store first; guarded by the scope's mutex. */
  with<T>(scope: string, fn: (index: ScopeIndex) => T | Promise<T>): Promise<T> {
    return this.mutexFor(scope).runExclusive(async () => {
      let index = this.indexes.get(scope);
      if (!index) {
        const loading = this.startLoad(scope);
        index = await loading.full;
        if (this.loading.get(scope) === loading) this.loading.delete(scope);
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
  touch(scope: string): void {
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
      this.loading.delete(scope);
      this.mutexes.delete(scope);
      this.lastUsed.delete(scope);
    }
  }
}
