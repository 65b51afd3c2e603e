import { Readable, Writable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { isId } from "../internal/ids.js";
import { DEFAULT_MEMORY_SCOPE_SHARE } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { resolveRange } from "./kit/byte-range.js";
import {
  decodeCursor,
  encodeCursor,
  isExpired,
  listKind,
  listLimit,
  unrefInterval,
  upperBound,
} from "./kit/list-page.js";
import { measureBytes } from "./kit/put-meter.js";
import { type PutPlan, planPut, storedFileOf } from "./kit/put-plan.js";
import { checkScopeQuota, quotaExceeded, quotaViolation } from "./kit/quota.js";
import { loadPutPipeline } from "./load-put-pipeline.js";
import type {
  ByteRange,
  FileStore,
  ListOptions,
  ListPage,
  PutOptions,
  PutSource,
  ScopeQuota,
  ScopeUsage,
  StagedFile,
  StoredFile,
} from "./types.js";

const check = optionCheck("memoryStore");

/**
 * Options of {@link memoryStore}.
 *
 * @example
 * ```ts
 * const store = memoryStore({ maxTotalBytes: 64 * 1024 * 1024, sweepInterval: "30s" });
 * ```
 */
export interface MemoryStoreOptions {
  /**
   * Cap on the bytes held by the whole store (committed and staged files, and puts in flight). A put
   * that would go over fails with `FILE_TOO_LARGE` (`data.limit` is this cap) and stores nothing.
   * @default no cap
   */
  maxTotalBytes?: number;
  /**
   * The fraction of `maxTotalBytes` one scope may hold (its committed and staged files and its puts
   * in flight), so one scope cannot fill the store and starve the others. A put that would take its
   * scope over fails with `QUOTA_EXCEEDED` while streaming. A number above 0, at most 1 (`1`: no
   * share, the old behaviour, fine for a single-scope stdio server). Ignored without `maxTotalBytes`.
   * @default 0.25
   */
  maxScopeShare?: number;
  /**
   * Per-scope limits on the live files, checked when a file is committed (`put()` or `commit()`):
   * over them the commit fails with `QUOTA_EXCEEDED` and stores nothing. See {@link ScopeQuota}.
   * @default no limits
   */
  quota?: ScopeQuota;
  /**
   * How often expired files are removed in the background (an `unref`'d timer, so it never keeps
   * the process alive). `0` turns it off; expired files are invisible to readers either way.
   * @default "1m"
   */
  sweepInterval?: Duration;
  /**
   * Clock, in milliseconds since the epoch. Inject one to test expiry without sleeping.
   * @default Date.now
   */
  now?: () => number;
}

/** Size of the blocks small chunks are copied into. */
const BLOCK_SIZE = 64 * 1024;

interface Entry {
  readonly file: StoredFile;
  readonly chunks: readonly Buffer[];
}

interface ScopeIndex {
  /** Ids in sorted order: list pages cost O(log n + limit). */
  readonly ids: string[];
  readonly entries: Map<string, Entry>;
  /** Bytes of the committed entries (expired ones included until they are removed). */
  bytes: number;
  /** No entry expires before this time (a lower bound: `Infinity` when none expires). */
  nextExpiry: number;
}

/**
 * Collects the bytes of a put as copies (callers may reuse their buffers), coalescing small chunks
 * into 64 KiB blocks. Counts against the store's byte budget while it writes.
 */
class ChunkSink extends Writable {
  readonly chunks: Buffer[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly reserve: (bytes: number) => void) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    try {
      this.reserve(chunk.byteLength);
    } catch (error) {
      callback(error as Error);
      return;
    }
    if (chunk.byteLength >= BLOCK_SIZE) {
      this.flushPending();
      this.chunks.push(Buffer.from(chunk));
    } else {
      this.pending.push(Buffer.from(chunk));
      this.pendingBytes += chunk.byteLength;
      if (this.pendingBytes >= BLOCK_SIZE) this.flushPending();
    }
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.flushPending();
    callback();
  }

  private flushPending(): void {
    if (this.pending.length === 0) return;
    this.chunks.push(this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/**
 * The stored bytes from `start` to `end` (inclusive), as copies: a reader that changes the chunks it
 * gets (some transforms work in place) must not change what is stored.
 */
function* sliceChunks(chunks: readonly Buffer[], start: number, end: number): Generator<Buffer> {
  let offset = 0;
  for (const chunk of chunks) {
    const chunkEnd = offset + chunk.byteLength; // exclusive
    if (chunkEnd > start && offset <= end) {
      yield Buffer.from(
        chunk.subarray(Math.max(0, start - offset), Math.min(chunk.byteLength, end - offset + 1)),
      );
    }
    if (chunkEnd > end) return;
    offset = chunkEnd;
  }
}

/**
 * A {@link FileStore} that keeps files in memory, in chunks (never concatenated). For tests, demos
 * and single-process servers with small files; contents are lost when the process exits.
 *
 * @example
 * ```ts
 * import { memoryStore } from "mcp-file-bridge";
 *
 * const store = memoryStore({ maxTotalBytes: 256 * 1024 * 1024 });
 * const file = await store.put(new TextEncoder().encode("hello"), {
 *   scope: "session-1",
 *   name: "hello.txt",
 *   ttl: "1h",
 * });
 * const stream = await store.read("session-1", file.id); // Readable | null
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): FileStore {
  if (typeof options !== "object" || options === null) {
    throw check.error("options", "must be an object");
  }
  const { maxTotalBytes } = options;
  if (
    maxTotalBytes !== undefined &&
    (typeof maxTotalBytes !== "number" || !Number.isSafeInteger(maxTotalBytes) || maxTotalBytes < 0)
  ) {
    throw check.error("maxTotalBytes", "must be a non-negative integer");
  }
  const share = options.maxScopeShare ?? DEFAULT_MEMORY_SCOPE_SHARE;
  if (typeof share !== "number" || !(share > 0 && share <= 1)) {
    throw check.error("maxScopeShare", "must be a number above 0 and at most 1");
  }
  const quota = checkScopeQuota(options.quota, "memoryStore: quota");
  if (options.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  const now = options.now ?? Date.now;
  const sweepMs = durationToMs(options.sweepInterval ?? "1m", "sweepInterval");
  /** Most bytes one scope may hold (in flight, staged, stored): its share of the total. */
  const scopeCap = maxTotalBytes !== undefined && share < 1 ? Math.floor(maxTotalBytes * share) : undefined;

  const scopes = new Map<string, ScopeIndex>();
  /** Bytes each scope holds: committed (expired or not) and staged files, and puts in flight. */
  const held = new Map<string, number>();
  let usedBytes = 0;
  /** No committed entry of any scope expires before this time (a lower bound). */
  let nextExpiry = Number.POSITIVE_INFINITY;

  function release(scope: string, bytes: number): void {
    if (bytes === 0) return;
    usedBytes -= bytes;
    const left = (held.get(scope) ?? 0) - bytes;
    if (left > 0) held.set(scope, left);
    else held.delete(scope);
  }

  /** Removes the expired entries of one scope, if any can have expired. */
  function purgeScope(scope: string, at: number): number {
    const index = scopes.get(scope);
    if (!index || index.nextExpiry > at) return 0;
    let removed = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const [id, entry] of [...index.entries]) {
      if (isExpired(entry.file, at)) {
        if (remove(scope, id)) removed++;
      } else if (entry.file.expiresAt !== undefined) {
        next = Math.min(next, entry.file.expiresAt);
      }
    }
    index.nextExpiry = next;
    return removed;
  }

  /** What the live files of a scope hold (expired ones are removed first). */
  function liveUsage(scope: string): ScopeUsage {
    purgeScope(scope, now());
    const index = scopes.get(scope);
    return index ? { bytes: index.bytes, files: index.entries.size } : { bytes: 0, files: 0 };
  }

  /**
   * Counts `bytes` more of a put in flight against the store's cap, the scope's share of it and the
   * scope's byte quota (`soFar`: what this put already holds). Expired files are freed before a
   * refusal, so they never count.
   */
  function reserve(scope: string, bytes: number, soFar: number): void {
    if (maxTotalBytes !== undefined && usedBytes + bytes > maxTotalBytes) {
      if (nextExpiry <= now()) sweep();
      if (usedBytes + bytes > maxTotalBytes) {
        throw new FileBridgeError(
          "FILE_TOO_LARGE",
          `the store is limited to ${maxTotalBytes} bytes in total`,
          {
            data: { limit: maxTotalBytes },
          },
        );
      }
    }
    if (scopeCap !== undefined && (held.get(scope) ?? 0) + bytes > scopeCap) {
      purgeScope(scope, now());
      if ((held.get(scope) ?? 0) + bytes > scopeCap) throw quotaExceeded("bytes", scopeCap);
    }
    const maxBytes = quota?.maxBytesPerScope;
    if (maxBytes !== undefined && liveUsage(scope).bytes + soFar + bytes > maxBytes) {
      throw quotaExceeded("bytes", maxBytes);
    }
    usedBytes += bytes;
    held.set(scope, (held.get(scope) ?? 0) + bytes);
  }

  async function collect(source: PutSource, options: PutOptions): Promise<{ plan: PutPlan; entry: Entry }> {
    const plan = planPut(options, now());
    const { scope } = plan;
    if (quota) {
      // Early refusals: a put that cannot be committed as things stand reads nothing.
      const usage = liveUsage(scope);
      if (quota.maxFilesPerScope !== undefined && usage.files >= quota.maxFilesPerScope) {
        throw quotaExceeded("files", quota.maxFilesPerScope);
      }
      const declared = quotaViolation(quota, { bytes: usage.bytes, files: 0 }, plan.expectedSize ?? 0);
      if (declared) throw declared;
    }
    let reserved = 0;
    const sink = new ChunkSink((bytes) => {
      reserve(scope, bytes, reserved);
      reserved += bytes;
    });
    try {
      if (source instanceof Uint8Array) {
        // Bytes already in memory: same checks, one copy, no stream machinery.
        const measure = measureBytes(source, plan);
        reserve(scope, measure.size, 0);
        reserved = measure.size;
        return { plan, entry: { file: storedFileOf(plan, measure), chunks: [Buffer.from(source)] } };
      }
      const measure = await (await loadPutPipeline()).streamPut(source, plan, sink);
      return { plan, entry: { file: storedFileOf(plan, measure), chunks: sink.chunks } };
    } catch (error) {
      release(scope, reserved);
      throw error;
    }
  }

  /**
   * Makes a collected entry visible if the scope's quota allows it; otherwise frees its bytes and
   * throws `QUOTA_EXCEEDED`. Synchronous, so no other commit can slip in between check and insert.
   */
  function commitEntry(entry: Entry): void {
    const violation = quotaViolation(quota, liveUsage(entry.file.scope), entry.file.size);
    if (violation) {
      release(entry.file.scope, entry.file.size);
      throw violation;
    }
    insert(entry);
  }

  function insert(entry: Entry): void {
    const { scope, id, size, expiresAt } = entry.file;
    let index = scopes.get(scope);
    if (!index) {
      index = { ids: [], entries: new Map(), bytes: 0, nextExpiry: Number.POSITIVE_INFINITY };
      scopes.set(scope, index);
    }
    const { ids } = index;
    // Ids are time-sortable, so this is almost always an append.
    const last = ids[ids.length - 1];
    if (last === undefined || last < id) ids.push(id);
    else ids.splice(upperBound(ids, id), 0, id);
    index.entries.set(id, entry);
    index.bytes += size;
    if (expiresAt !== undefined) {
      index.nextExpiry = Math.min(index.nextExpiry, expiresAt);
      nextExpiry = Math.min(nextExpiry, expiresAt);
    }
  }

  function remove(scope: string, id: string): boolean {
    const index = scopes.get(scope);
    const entry = index?.entries.get(id);
    if (!index || !entry) return false;
    index.entries.delete(id);
    const at = upperBound(index.ids, id) - 1;
    if (index.ids[at] === id) index.ids.splice(at, 1);
    index.bytes -= entry.file.size;
    if (index.entries.size === 0) scopes.delete(scope);
    release(scope, entry.file.size);
    return true;
  }

  /** The live entry, or `null`. Expired entries read as missing; `sweep()` frees them. */
  function live(scope: unknown, id: unknown): Entry | null {
    if (typeof scope !== "string" || !isId(id)) return null;
    const entry = scopes.get(scope)?.entries.get(id);
    return entry && !isExpired(entry.file, now()) ? entry : null;
  }

  function sweep(): number {
    const at = now();
    let removed = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const scope of [...scopes.keys()]) {
      removed += purgeScope(scope, at);
      next = Math.min(next, scopes.get(scope)?.nextExpiry ?? Number.POSITIVE_INFINITY);
    }
    nextExpiry = next;
    return removed;
  }

  const timer = unrefInterval(sweepMs, sweep);

  const store: FileStore = {
    driver: "memory",
    ...(quota ? { quota } : {}),

    async put(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
      const { entry } = await collect(source, putOptions);
      commitEntry(entry);
      return entry.file;
    },

    async stage(source: PutSource, putOptions: PutOptions): Promise<StagedFile> {
      const { entry } = await collect(source, putOptions);
      let state: "staged" | "committed" | "aborted" = "staged";
      return {
        file: entry.file,
        async commit(): Promise<StoredFile> {
          if (state === "aborted") {
            throw new FileBridgeError("ABORTED", "the staged file was aborted and cannot be committed");
          }
          if (state === "staged") {
            // A refused commit frees the bytes: the staged file is aborted.
            state = "aborted";
            commitEntry(entry);
            state = "committed";
          }
          return entry.file;
        },
        async abort(): Promise<void> {
          if (state !== "staged") return;
          state = "aborted";
          release(entry.file.scope, entry.file.size);
        },
      };
    },

    async head(scope: string, id: string): Promise<StoredFile | null> {
      return live(scope, id)?.file ?? null;
    },

    async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
      const entry = live(scope, id);
      if (!entry) return null;
      const bounds = resolveRange(range, entry.file.size) ?? { start: 0, end: entry.file.size - 1 };
      return Readable.from(sliceChunks(entry.chunks, bounds.start, bounds.end), { objectMode: false });
    },

    async list(scope: string, listOptions: ListOptions = {}): Promise<ListPage> {
      const limit = listLimit(listOptions.limit);
      const kind = listKind(listOptions.kind);
      const after = listOptions.cursor === undefined ? undefined : decodeCursor(listOptions.cursor);
      const index = typeof scope === "string" ? scopes.get(scope) : undefined;
      if (!index) return { files: [] };
      const at = now();
      const files: StoredFile[] = [];
      const { ids, entries } = index;
      let i = after === undefined ? 0 : upperBound(ids, after);
      for (; i < ids.length; i++) {
        const entry = entries.get(ids[i] as string);
        if (!entry || isExpired(entry.file, at) || (kind && entry.file.kind !== kind)) continue;
        if (files.length === limit) {
          // One more match exists: there is a next page.
          const lastFile = files[files.length - 1] as StoredFile;
          return { files, nextCursor: encodeCursor(lastFile.id) };
        }
        files.push(entry.file);
      }
      return { files };
    },

    async delete(scope: string, id: string): Promise<boolean> {
      if (!live(scope, id)) return false;
      return remove(scope, id);
    },

    async sweep(): Promise<number> {
      return sweep();
    },

    async usage(scope: string): Promise<ScopeUsage> {
      return typeof scope === "string" ? liveUsage(scope) : { bytes: 0, files: 0 };
    },

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
    },
  };
  return store;
}
