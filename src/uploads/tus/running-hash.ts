/**
 * The sha256 of each upload's staged bytes, kept while they arrive, so a commit that hands the
 * staging file to the store (`FileStore.adopt`) reads nothing again. A hash lives in the process
 * that received the bytes, keyed by the offset it covers; a body that arrives elsewhere (another
 * replica, or after a restart) finds no hash at its offset and hashes the staged prefix once, then
 * goes on incrementally. Hashing runs off the main thread: on a staging with a local file the
 * hashing worker reads the file itself as it grows (`FileSha256`: the main thread copies nothing and
 * posts a few bytes per 4 MiB), elsewhere the bytes go to it in batches (`Sha256Stream`).
 */
import { FileSha256 } from "../../storage/kit/file-sha256.js";
import { Sha256Stream } from "../../storage/kit/sha256-stream.js";
import type { TusStaging } from "./fs-staging.js";

/** An incremental sha256 of an upload's staged bytes, fed each chunk once it is stored. */
export interface RunningSha256 {
  /** Adds a stored chunk; a promise means: wait before the next one. */
  update(chunk: Uint8Array): Promise<void> | undefined;
  /** The hex digest of every byte covered. Call once. */
  digest(): Promise<string>;
  /** Drops the hash unfinished. */
  dispose(): void;
}

/**
 * The sha256 of a staging file read back by the hashing worker as it grows: each stored chunk only
 * moves the written mark (the worker hears of it every 4 MiB), so the main thread neither copies nor
 * posts the bytes. The digest is of the bytes the file holds.
 */
class StagedFileSha256 implements RunningSha256 {
  readonly #hash: FileSha256;
  #size: number;

  private constructor(hash: FileSha256, size: number) {
    this.#hash = hash;
    this.#size = size;
  }

  /** A hash of the file at `path` whose first `offset` bytes are staged already; null without a worker. */
  static at(path: string, offset: number): StagedFileSha256 | null {
    const hash = new FileSha256(path);
    if (!hash.startAt(offset)) {
      hash.dispose();
      return null;
    }
    return new StagedFileSha256(hash, offset);
  }

  update(chunk: Uint8Array): undefined {
    this.#hash.update(chunk);
    this.#size += chunk.byteLength;
    this.#hash.written(this.#size);
    return undefined;
  }

  digest(): Promise<string> {
    return this.#hash.digest(this.#size);
  }

  dispose(): void {
    this.#hash.dispose();
  }
}

/**
 * Hashes kept at once (one per upload being sent); past it the least recent goes (its upload hashes
 * its staged prefix again if it comes back). Each may hold a partly filled 1 MiB batch, so this also
 * bounds their memory (32 MiB).
 */
const MAX_HASHES = 32;

interface Running {
  hash: RunningSha256;
  /** The bytes the hash covers: the staging object's first `offset` bytes. */
  offset: number;
}

/** The running sha256 of the uploads this process writes. */
export class RunningHashes {
  readonly #running = new Map<string, Running>();

  /**
   * Takes the hash of upload `id` covering its first `offset` staged bytes: the kept one when it
   * covers exactly those, else a new one over the staged prefix (on a local staging file the worker
   * reads it; elsewhere it is read once here and fed in batches). The caller owns it until it hands
   * it back with {@link keep}.
   */
  async take(staging: TusStaging, id: string, offset: number): Promise<RunningSha256> {
    const kept = this.#running.get(id);
    this.#running.delete(id);
    if (kept && kept.offset === offset) return kept.hash;
    kept?.hash.dispose();
    const path = staging.localPath?.(id);
    const file = path === undefined ? null : StagedFileSha256.at(path, offset);
    if (file) return file;
    const hash = new Sha256Stream();
    if (offset === 0) return hash;
    try {
      for await (const chunk of staging.read(id, offset)) await hash.update(chunk as Uint8Array);
    } catch (error) {
      hash.dispose();
      throw error;
    }
    return hash;
  }

  /**
   * Like {@link take}, without reading anything: the kept hash when it covers exactly `offset`
   * bytes (a new one at 0), else `undefined` — for stagings whose prefix cannot be read before the
   * upload is complete (S3 parts); the commit then hashes the staged bytes once.
   */
  takeKept(id: string, offset: number): RunningSha256 | undefined {
    const kept = this.#running.get(id);
    this.#running.delete(id);
    if (kept && kept.offset === offset) return kept.hash;
    kept?.hash.dispose();
    return offset === 0 ? new Sha256Stream() : undefined;
  }

  /** Keeps `hash` as covering the first `offset` staged bytes of upload `id`. */
  keep(id: string, offset: number, hash: RunningSha256): void {
    this.drop(id);
    this.#running.set(id, { hash, offset });
    if (this.#running.size > MAX_HASHES) {
      const [oldest, running] = this.#running.entries().next().value as [string, Running];
      this.#running.delete(oldest);
      running.hash.dispose();
    }
  }

  /** The hex sha256 of the first `offset` staged bytes of upload `id` (the hash is used up). */
  async digest(staging: TusStaging, id: string, offset: number): Promise<string> {
    return (await this.take(staging, id, offset)).digest();
  }

  /** Forgets upload `id` (terminated, committed, or its bytes cut back). */
  drop(id: string): void {
    this.#running.get(id)?.hash.dispose();
    this.#running.delete(id);
  }
}
