/**
 * What a `memoryStore`'s async methods run: collecting a put's bytes (counted against the store's
 * cap, the scope's share and its quota), committing, reading, listing, deleting and the sweep, over
 * the store's scope indexes. Loaded at a store's first put (`loadMemoryStoreWork()` in
 * memory-store.ts; issue 39), so a server that makes a store does not compile it at start. The store
 * checks its options, and each call what it checked before its first await (a put's plan, a list's
 * limit, kind and cursor), before the load, and hands over the results; before the first put the
 * store holds nothing, and its reads answer without loading this.
 */

import { Readable, Writable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { isId } from "../internal/ids.js";
import { resolveRange } from "./kit/byte-range.js";
import { encodeCursor, isExpired, upperBound } from "./kit/list-page.js";
import { measureBytes } from "./kit/put-meter.js";
import { type PutPlan, storedFileOf } from "./kit/put-plan.js";
import { quotaExceeded, quotaViolation } from "./kit/quota.js";
import { loadPutPipeline } from "./load-put-pipeline.js";
import type {
  ByteRange,
  FileKind,
  ListPage,
  PutSource,
  ScopeQuota,
  ScopeUsage,
  StagedFile,
  StoredFile,
} from "./types.js";

/** A `memoryStore`'s checked options, as its work uses them. */
export interface MemorySettings {
  /** Cap on the bytes of the whole store; `undefined`: no cap. */
  readonly maxTotalBytes: number | undefined;
  /** Most bytes one scope may hold (in flight, staged, stored); `undefined`: no share. */
  readonly scopeCap: number | undefined;
  readonly quota: Readonly<ScopeQuota> | undefined;
  readonly now: () => number;
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
 * The files of one `memoryStore` and what its async methods do with them (see the file's comment).
 * Made at the store's first put; the store's methods hand over their checked arguments.
 *
 * @example
 * ```ts
 * const work = new MemoryStoreWork({ maxTotalBytes: undefined, scopeCap: undefined, quota: undefined, now: Date.now });
 * const file = await work.put(bytes, planPut({ scope: "s1", name: "a.txt" }, Date.now()));
 * ```
 */
export class MemoryStoreWork {
  readonly #settings: MemorySettings;
  readonly #scopes = new Map<string, ScopeIndex>();
  /** Bytes each scope holds: committed (expired or not) and staged files, and puts in flight. */
  readonly #held = new Map<string, number>();
  #usedBytes = 0;
  /** No committed entry of any scope expires before this time (a lower bound). */
  #nextExpiry = Number.POSITIVE_INFINITY;

  constructor(settings: MemorySettings) {
    this.#settings = settings;
  }

  /** Collects and commits a put (the plan checked by the store). */
  async put(source: PutSource, plan: PutPlan): Promise<StoredFile> {
    const entry = await this.#collect(source, plan);
    this.#commitEntry(entry);
    return entry.file;
  }

  /** Collects a put and holds it staged until its `commit()` (or frees it at `abort()`). */
  async stage(source: PutSource, plan: PutPlan): Promise<StagedFile> {
    const entry = await this.#collect(source, plan);
    let state: "staged" | "committed" | "aborted" = "staged";
    return {
      file: entry.file,
      commit: async (): Promise<StoredFile> => {
        if (state === "aborted") {
          throw new FileBridgeError("ABORTED", "the staged file was aborted and cannot be committed");
        }
        if (state === "staged") {
          // A refused commit frees the bytes: the staged file is aborted.
          state = "aborted";
          this.#commitEntry(entry);
          state = "committed";
        }
        return entry.file;
      },
      abort: async (): Promise<void> => {
        if (state !== "staged") return;
        state = "aborted";
        this.#release(entry.file.scope, entry.file.size);
      },
    };
  }

  head(scope: string, id: string): StoredFile | null {
    return this.#live(scope, id)?.file ?? null;
  }

  read(scope: string, id: string, range?: ByteRange): Readable | null {
    const entry = this.#live(scope, id);
    if (!entry) return null;
    const bounds = resolveRange(range, entry.file.size) ?? { start: 0, end: entry.file.size - 1 };
    return Readable.from(sliceChunks(entry.chunks, bounds.start, bounds.end), { objectMode: false });
  }

  /** A page of the scope's live files (`limit`, `kind` and `after` checked by the store). */
  list(scope: string, limit: number, kind: FileKind | undefined, after: string | undefined): ListPage {
    const index = typeof scope === "string" ? this.#scopes.get(scope) : undefined;
    if (!index) return { files: [] };
    const at = this.#settings.now();
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
  }

  delete(scope: string, id: string): boolean {
    if (!this.#live(scope, id)) return false;
    return this.#remove(scope, id);
  }

  /** Removes the expired files of every scope; how many. */
  sweep(): number {
    const at = this.#settings.now();
    let removed = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const scope of [...this.#scopes.keys()]) {
      removed += this.#purgeScope(scope, at);
      next = Math.min(next, this.#scopes.get(scope)?.nextExpiry ?? Number.POSITIVE_INFINITY);
    }
    this.#nextExpiry = next;
    return removed;
  }

  usage(scope: string): ScopeUsage {
    return typeof scope === "string" ? this.#liveUsage(scope) : { bytes: 0, files: 0 };
  }

  #release(scope: string, bytes: number): void {
    if (bytes === 0) return;
    this.#usedBytes -= bytes;
    const left = (this.#held.get(scope) ?? 0) - bytes;
    if (left > 0) this.#held.set(scope, left);
    else this.#held.delete(scope);
  }

  /** Removes the expired entries of one scope, if any can have expired. */
  #purgeScope(scope: string, at: number): number {
    const index = this.#scopes.get(scope);
    if (!index || index.nextExpiry > at) return 0;
    let removed = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const [id, entry] of [...index.entries]) {
      if (isExpired(entry.file, at)) {
        if (this.#remove(scope, id)) removed++;
      } else if (entry.file.expiresAt !== undefined) {
        next = Math.min(next, entry.file.expiresAt);
      }
    }
    index.nextExpiry = next;
    return removed;
  }

  /** What the live files of a scope hold (expired ones are removed first). */
  #liveUsage(scope: string): ScopeUsage {
    this.#purgeScope(scope, this.#settings.now());
    const index = this.#scopes.get(scope);
    return index ? { bytes: index.bytes, files: index.entries.size } : { bytes: 0, files: 0 };
  }

  /**
   * Counts `bytes` more of a put in flight against the store's cap, the scope's share of it and the
   * scope's byte quota (`soFar`: what this put already holds). Expired files are freed before a
   * refusal, so they never count.
   */
  #reserve(scope: string, bytes: number, soFar: number): void {
    const { maxTotalBytes, scopeCap, quota, now } = this.#settings;
    if (maxTotalBytes !== undefined && this.#usedBytes + bytes > maxTotalBytes) {
      if (this.#nextExpiry <= now()) this.sweep();
      if (this.#usedBytes + bytes > maxTotalBytes) {
        throw new FileBridgeError(
          "FILE_TOO_LARGE",
          `the store is limited to ${maxTotalBytes} bytes in total`,
          {
            data: { limit: maxTotalBytes },
          },
        );
      }
    }
    if (scopeCap !== undefined && (this.#held.get(scope) ?? 0) + bytes > scopeCap) {
      this.#purgeScope(scope, now());
      if ((this.#held.get(scope) ?? 0) + bytes > scopeCap) throw quotaExceeded("bytes", scopeCap);
    }
    const maxBytes = quota?.maxBytesPerScope;
    if (maxBytes !== undefined && this.#liveUsage(scope).bytes + soFar + bytes > maxBytes) {
      throw quotaExceeded("bytes", maxBytes);
    }
    this.#usedBytes += bytes;
    this.#held.set(scope, (this.#held.get(scope) ?? 0) + bytes);
  }

  async #collect(source: PutSource, plan: PutPlan): Promise<Entry> {
    const { scope } = plan;
    const { quota } = this.#settings;
    if (quota) {
      // Early refusals: a put that cannot be committed as things stand reads nothing.
      const usage = this.#liveUsage(scope);
      if (quota.maxFilesPerScope !== undefined && usage.files >= quota.maxFilesPerScope) {
        throw quotaExceeded("files", quota.maxFilesPerScope);
      }
      const declared = quotaViolation(quota, { bytes: usage.bytes, files: 0 }, plan.expectedSize ?? 0);
      if (declared) throw declared;
    }
    let reserved = 0;
    const sink = new ChunkSink((bytes) => {
      this.#reserve(scope, bytes, reserved);
      reserved += bytes;
    });
    try {
      if (source instanceof Uint8Array) {
        // Bytes already in memory: same checks, one copy, no stream machinery.
        const measure = measureBytes(source, plan);
        this.#reserve(scope, measure.size, 0);
        reserved = measure.size;
        return { file: storedFileOf(plan, measure), chunks: [Buffer.from(source)] };
      }
      const measure = await (await loadPutPipeline()).streamPut(source, plan, sink);
      return { file: storedFileOf(plan, measure), chunks: sink.chunks };
    } catch (error) {
      this.#release(scope, reserved);
      throw error;
    }
  }

  /**
   * Makes a collected entry visible if the scope's quota allows it; otherwise frees its bytes and
   * throws `QUOTA_EXCEEDED`. Synchronous, so no other commit can slip in between check and insert.
   */
  #commitEntry(entry: Entry): void {
    const violation = quotaViolation(
      this.#settings.quota,
      this.#liveUsage(entry.file.scope),
      entry.file.size,
    );
    if (violation) {
      this.#release(entry.file.scope, entry.file.size);
      throw violation;
    }
    this.#insert(entry);
  }

  #insert(entry: Entry): void {
    const { scope, id, size, expiresAt } = entry.file;
    let index = this.#scopes.get(scope);
    if (!index) {
      index = { ids: [], entries: new Map(), bytes: 0, nextExpiry: Number.POSITIVE_INFINITY };
      this.#scopes.set(scope, index);
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
      this.#nextExpiry = Math.min(this.#nextExpiry, expiresAt);
    }
  }

  #remove(scope: string, id: string): boolean {
    const index = this.#scopes.get(scope);
    const entry = index?.entries.get(id);
    if (!index || !entry) return false;
    index.entries.delete(id);
    const at = upperBound(index.ids, id) - 1;
    if (index.ids[at] === id) index.ids.splice(at, 1);
    index.bytes -= entry.file.size;
    if (index.entries.size === 0) this.#scopes.delete(scope);
    this.#release(scope, entry.file.size);
    return true;
  }

  /** The live entry, or `null`. Expired entries read as missing; `sweep()` frees them. */
  #live(scope: unknown, id: unknown): Entry | null {
    if (typeof scope !== "string" || !isId(id)) return null;
    const entry = this.#scopes.get(scope)?.entries.get(id);
    return entry && !isExpired(entry.file, this.#settings.now()) ? entry : null;
  }
}
