/**
 * The byte side of tus uploads, as a staging offers it to the tus endpoint (`fsTusStaging`, the
 * in-memory one, an `s3Store`'s own): the interfaces only, shared by the stagings and their code.
 */
import type { Readable } from "node:stream";
import type { AdoptObject } from "../../storage/types.js";

/**
 * The result of one write: how many bytes reached the file, and the failure that ended it early.
 *
 * @example
 * ```ts
 * const { written, error }: StagingWrite = await staging.write(id, offset, body);
 * ```
 */
export interface StagingWrite {
  written: number;
  error?: unknown;
}

/**
 * The byte side of tus uploads: one growing staging object per upload id.
 *
 * @example
 * ```ts
 * const staging = fsTusStaging("/var/lib/app/tus");
 * await staging.create(id, Date.now() + 86_400_000);
 * const { written } = await staging.write(id, 0, body);
 * ```
 */
export interface TusStaging {
  /** Creates an empty staging object that expires at `expiresAt` (epoch ms). */
  create(id: string, expiresAt: number): Promise<void>;
  /**
   * Writes `source` at `offset`, cutting off anything past it first; never rejects. `observe` sees
   * each chunk once it is stored, in order (so it sees exactly the `written` bytes); a promise it
   * returns holds the next write back. A `provisional` write (a body under a checksum) counts in
   * {@link size} only once {@link confirm}ed.
   */
  write(
    id: string,
    offset: number,
    source: Readable,
    observe?: StagingObserver,
    options?: StagingWriteOptions,
  ): Promise<StagingWrite>;
  /**
   * Makes the last provisional write count (its checksum verified), for stagings whose {@link size}
   * can run ahead of the recorded offset; the others count a write only through the recorded offset.
   */
  confirm?(id: string): Promise<void>;
  /** Cuts the staging object back to `length` bytes (a refused checksum). */
  truncate(id: string, length: number): Promise<void>;
  /** The first `length` bytes of the staging object. */
  read(id: string, length: number): Readable;
  /** Removes the staging object; missing is fine. */
  remove(id: string): Promise<void>;
  /** Removes every staging object past its expiry; resolves with how many. */
  sweep(now: number): Promise<number>;
  /**
   * The local file holding the staging object, for stores that take a file over at commit
   * (`FileStore.adopt`); absent on stagings that hold bytes elsewhere.
   */
  localPath?(id: string): string;
  /**
   * The object holding exactly the first `length` staged bytes, for stores that copy it into place
   * at commit (`FileStore.adopt` of an `s3Store` in the same bucket); `undefined` when there is none
   * (S3: an upload smaller than one part). Once asked, the upload takes no more writes.
   */
  adoptable?(id: string, length: number): Promise<AdoptObject | undefined>;
  /**
   * The bytes the staging holds durably for upload `id` (`undefined` when unknown), for stagings that
   * can hold more than the recorded offset after a replica died mid-body (S3: parts uploaded before
   * the crash): the upload continues from there.
   */
  size?(id: string): Promise<number | undefined>;
  /**
   * The bytes the staging object holds when that is fewer than `offset`, the recorded offset (a
   * crash lost written pages the record had counted); `undefined` when it holds at least `offset`
   * bytes or cannot tell. The upload then continues from the bytes that are there.
   */
  shortfall?(id: string, offset: number): Promise<number | undefined>;
}

/**
 * Options of one {@link TusStaging.write}.
 *
 * @example
 * ```ts
 * await staging.write(id, offset, body, undefined, { provisional: true });
 * ```
 */
export interface StagingWriteOptions {
  /** The body counts only once confirmed (`Upload-Checksum`: whole and verified, or not at all). */
  provisional?: boolean;
}

/**
 * Sees each chunk a staging stored; see {@link TusStaging.write}.
 *
 * @example
 * ```ts
 * const observe: StagingObserver = (chunk) => hash.update(chunk);
 * ```
 */
export type StagingObserver = (chunk: Uint8Array) => Promise<void> | undefined;
