/**
 * The sha256 of each upload's staged bytes, kept while they arrive, so a commit that hands the
 * staging file to the store (`FileStore.adopt`) reads nothing again. A hash lives in the process
 * that received the bytes, keyed by the offset it covers; a body that arrives elsewhere (another
 * replica, or after a restart) finds no hash at its offset and hashes the staged prefix once, then
 * goes on incrementally. Hashing runs off the main thread (`Sha256Stream`).
 */
import { Sha256Stream } from "../../storage/kit/sha256-stream.js";
import type { TusStaging } from "./fs-staging.js";

/**
 * Hashes kept at once (one per upload being sent); past it the least recent goes (its upload hashes
 * its staged prefix again if it comes back). Each may hold a partly filled 1 MiB batch, so this also
 * bounds their memory (32 MiB).
 */
const MAX_HASHES = 32;

interface Running {
  hash: Sha256Stream;
  /** The bytes the hash covers: the staging object's first `offset` bytes. */
  offset: number;
}

/** The running sha256 of the uploads this process writes. */
export class RunningHashes {
  readonly #running = new Map<string, Running>();

  /**
   * Takes the hash of upload `id` covering its first `offset` staged bytes: the kept one when it
   * covers exactly those, else a new one fed the staged prefix (one read of it). The caller owns it
   * until it hands it back with {@link keep}.
   */
  async take(staging: TusStaging, id: string, offset: number): Promise<Sha256Stream> {
    const kept = this.#running.get(id);
    this.#running.delete(id);
    if (kept && kept.offset === offset) return kept.hash;
    kept?.hash.dispose();
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
  takeKept(id: string, offset: number): Sha256Stream | undefined {
    const kept = this.#running.get(id);
    this.#running.delete(id);
    if (kept && kept.offset === offset) return kept.hash;
    kept?.hash.dispose();
    return offset === 0 ? new Sha256Stream() : undefined;
  }

  /** Keeps `hash` as covering the first `offset` staged bytes of upload `id`. */
  keep(id: string, offset: number, hash: Sha256Stream): void {
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
