/**
 * The record bookkeeping the multipart tus stagings (S3, R2) share: an upload's parts and "tail"
 * object live in the state store, and this module keeps them — which bytes count, what a
 * provisional body left pending, the state before the last body (so a body refused by its checksum
 * can be cut off again), and which tail objects are no longer needed. The bytes themselves move in
 * the staging's own file (`S3Client` calls, R2 binding calls): it hands this module how to open a
 * body, fill it, keep what is left as the tail, and delete an object.
 */
import { Readable } from "node:stream";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { StateStore } from "../../storage/types.js";
import type { StagingWrite } from "./fs-staging.js";

/**
 * One uploaded part.
 *
 * @example
 * ```ts
 * const part: StagedPart = { n: 1, etag: '"abc"', size: 8 * 1024 * 1024 };
 * ```
 */
export interface StagedPart {
  n: number;
  etag: string;
  size: number;
}

/**
 * Uploaded parts and the tail object with how many of its first bytes count.
 *
 * @example
 * ```ts
 * const bytes: StagedBytes = { parts: [], tail: 0 };
 * ```
 */
export interface StagedBytes {
  parts: StagedPart[];
  tailKey?: string;
  tail: number;
}

/**
 * What the state store holds per staged upload: the bytes that count, and what waits to.
 *
 * @example
 * ```ts
 * const record: StagedRecord = { expiresAt: Date.now() + 3_600_000, parts: [], tail: 0 };
 * ```
 */
export interface StagedRecord extends StagedBytes {
  expiresAt: number;
  /** The multipart upload, once the first full part went up. */
  uploadId?: string;
  /** The state before the last body, so a body refused by its checksum can be cut off again. */
  previous?: { parts: number; tailKey?: string; tail: number };
  /**
   * A provisional body's parts (numbered on from `parts`) and tail: they count only once
   * `confirm()`ed. A replica killed mid-body leaves them here, left out of the offset; the next body
   * drops them (its parts overwrite theirs) and the completion lists only `parts`.
   */
  pending?: StagedBytes;
  /** Set once the multipart upload was completed (for reading and adopting at commit). */
  completed?: boolean;
}

/**
 * How a staging moves one body's bytes (see {@link StagedRecords.write}): `open` what the body
 * fills (and put the first `keep` bytes of the tail in front), `fill` it from the source (each full
 * part uploaded into `bytes` and `persist`ed; the source's error returned, not thrown), keep what
 * is left as the new tail (`storeTail`), and `close` it whatever happened.
 *
 * @example
 * ```ts
 * const io: BodyIo<Spool> = { open, fill, storeTail, close: (spool) => spool.close() };
 * ```
 */
export interface BodyIo<B, R extends StagedRecord = StagedRecord> {
  open(record: R, keep: number): Promise<B>;
  fill(body: B, record: R, bytes: StagedBytes, persist: () => Promise<void>): Promise<unknown>;
  storeTail(body: B, bytes: StagedBytes): Promise<void>;
  close?(body: B): Promise<void>;
}

/**
 * Options of {@link stagedRecords}.
 *
 * @example
 * ```ts
 * const options: StagedRecordsOptions = { label: "s3", state, recordKey, deleteKey };
 * ```
 */
export interface StagedRecordsOptions {
  /** The staging's name in error messages (`tus <label> staging: …`). */
  label: string;
  state: StateStore;
  /** The state store key of an upload's record. */
  recordKey(id: string): string;
  /** Deletes an object of the staging (a tail no longer needed). */
  deleteKey(key: string): Promise<void>;
}

/** How long a staging record outlives its upload's expiry, so the sweep still finds what to remove. */
const RECORD_GRACE_S = 24 * 60 * 60;

/**
 * `bytes` with `tailKey` set, or left out when there is none.
 *
 * @example
 * ```ts
 * withTailKey({ parts: [], tail: 0 }, undefined); // { parts: [], tail: 0 }
 * ```
 */
export function withTailKey<T extends object>(
  bytes: T,
  tailKey: string | undefined,
): T & { tailKey?: string } {
  return tailKey === undefined ? bytes : { ...bytes, tailKey };
}

/**
 * The bytes in `parts`.
 *
 * @example
 * ```ts
 * partsSize([{ n: 1, etag: "", size: 5 }]); // 5
 * ```
 */
export function partsSize(parts: StagedPart[]): number {
  return parts.reduce((sum, part) => sum + part.size, 0);
}

/**
 * The staged records of one multipart staging: loading and saving them, and the bookkeeping of
 * `write`, `confirm`, `truncate` and `size` around the staging's own I/O.
 *
 * @example
 * ```ts
 * const records = stagedRecords<S3StagingRecord>({ label: "s3", state, recordKey, deleteKey });
 * const record = await records.load(id);
 * ```
 */
export function stagedRecords<R extends StagedRecord>(options: StagedRecordsOptions) {
  const { label, state, recordKey, deleteKey } = options;

  function error(action: string, cause: unknown): FileBridgeError {
    if (cause instanceof FileBridgeError) return cause;
    return new FileBridgeError("STORAGE_ERROR", `tus ${label} staging: could not ${action}`, { cause });
  }

  async function load(id: string): Promise<R> {
    const record = await state.get<R>(recordKey(id));
    if (!record) throw new FileBridgeError("NOT_FOUND", "No such staged upload");
    return record;
  }

  async function save(id: string, record: R): Promise<void> {
    const ttl = Math.max(1, Math.ceil((record.expiresAt - Date.now()) / 1000)) + RECORD_GRACE_S;
    await state.set(recordKey(id), record, { ttl });
  }

  /** Forgets a provisional body that was never confirmed (its tail object goes; its parts get overwritten). */
  async function dropPending(record: R): Promise<void> {
    const tailKey = record.pending?.tailKey;
    delete record.pending;
    if (tailKey && tailKey !== record.tailKey && tailKey !== record.previous?.tailKey) {
      await deleteKey(tailKey).catch(() => undefined);
    }
  }

  /** Stages one body at `offset` through `io` (see {@link BodyIo}). */
  async function write<B>(
    id: string,
    offset: number,
    source: Readable,
    provisional: boolean,
    io: BodyIo<B, R>,
  ): Promise<StagingWrite> {
    let record: R;
    let body: B;
    let keep: number;
    try {
      record = await load(id);
      if (record.completed)
        throw new FileBridgeError("STORAGE_ERROR", `tus ${label} staging: the upload is complete`);
      const inParts = partsSize(record.parts);
      if (offset < inParts || offset > inParts + record.tail) {
        throw new FileBridgeError("STORAGE_ERROR", `tus ${label} staging: cannot write at ${offset}`);
      }
      if (record.pending) await dropPending(record);
      keep = offset - inParts;
      body = await io.open(record, keep);
    } catch (cause) {
      source.resume();
      return { written: 0, error: error("start the write", cause) };
    }
    const base = record.parts.length;
    const previousTailKey = record.previous?.tailKey;
    // What this body builds: the record's bytes (then its own), or pending ones (`provisional`).
    const bytes: StagedBytes = withTailKey({ parts: [...record.parts], tail: keep }, record.tailKey);
    const settled = (): R =>
      provisional
        ? {
            ...record,
            pending: withTailKey({ parts: bytes.parts.slice(base), tail: bytes.tail }, bytes.tailKey),
          }
        : withTailKey(
            {
              ...record,
              parts: bytes.parts,
              tail: bytes.tail,
              previous: withTailKey({ parts: base, tail: keep }, record.tailKey),
            },
            bytes.tailKey,
          );
    const persist = () => save(id, settled());
    let failure: unknown;
    try {
      failure = await io.fill(body, record, bytes, persist);
      // What arrived counts even when the body ended early: it is kept as the tail.
      await io.storeTail(body, bytes);
    } catch (cause) {
      source.resume();
      failure ??= error("stage the body", cause);
      // The tail object is unchanged when no part went up (its first `keep` bytes still count).
      bytes.tail = bytes.parts.length === base ? keep : 0;
      if (bytes.parts.length === base && record.tailKey) bytes.tailKey = record.tailKey;
    }
    try {
      await persist();
      // Two bodies back: no longer needed to cut a refused body off.
      if (
        !provisional &&
        previousTailKey &&
        previousTailKey !== bytes.tailKey &&
        previousTailKey !== record.tailKey
      ) {
        await deleteKey(previousTailKey).catch(() => undefined);
      }
    } catch (cause) {
      failure ??= error("record the staged parts", cause);
    } finally {
      await io.close?.(body);
    }
    const written = partsSize(bytes.parts) + bytes.tail - offset;
    return failure === undefined ? { written } : { written: Math.max(0, written), error: failure };
  }

  /** Counts a provisional body's parts and tail. */
  async function confirm(id: string): Promise<void> {
    const record = await load(id);
    const pending = record.pending;
    if (!pending) return;
    const oldTailKey = record.tailKey;
    const superseded = record.previous?.tailKey;
    record.previous = withTailKey({ parts: record.parts.length, tail: record.tail }, oldTailKey);
    record.parts = [...record.parts, ...pending.parts];
    record.tail = pending.tail;
    if (pending.tailKey) record.tailKey = pending.tailKey;
    delete record.pending;
    await save(id, record);
    // Two bodies back: no longer needed to cut a refused body off (as after a plain write).
    if (superseded && superseded !== record.tailKey && superseded !== oldTailKey) {
      await deleteKey(superseded).catch(() => undefined);
    }
  }

  /** Cuts the staged bytes back to `length`: within the tail, or to the state before the last body. */
  async function truncate(id: string, length: number): Promise<void> {
    const record = await load(id);
    if (record.pending) await dropPending(record);
    const previous = record.previous;
    const inParts = partsSize(record.parts);
    if (length >= inParts && length <= inParts + record.tail) {
      record.tail = length - inParts;
    } else if (previous && length === partsSize(record.parts.slice(0, previous.parts)) + previous.tail) {
      // A refused body: back to the state before it (its parts are left out of the completion).
      record.parts = record.parts.slice(0, previous.parts);
      record.tail = previous.tail;
      if (previous.tailKey) record.tailKey = previous.tailKey;
      else delete record.tailKey;
    } else {
      throw new FileBridgeError("STORAGE_ERROR", `tus ${label} staging: cannot cut back to ${length}`);
    }
    await save(id, record);
  }

  /**
   * Completes the upload once through `complete` (the tail put in as its last part, the multipart
   * upload completed) so the staged bytes are one object; a record without parts (everything in
   * the tail) stays as it is.
   */
  async function finish(id: string, complete: (record: R) => Promise<void>): Promise<R> {
    const record = await load(id);
    if (record.completed || record.parts.length === 0) return record;
    if (record.pending) await dropPending(record);
    await complete(record);
    record.completed = true;
    await save(id, record);
    return record;
  }

  /**
   * The first `length` staged bytes, once the upload is `finish`ed: from the completed object at
   * `key`, then from the tail, each read by `range` (an object's first bytes).
   */
  function read(
    id: string,
    length: number,
    key: string,
    finish: (id: string) => Promise<R>,
    range: (key: string, length: number, what: "staged object" | "tail object") => AsyncIterable<Uint8Array>,
  ): Readable {
    return Readable.from(
      (async function* () {
        const record = await finish(id);
        let left = length;
        if (record.completed && left > 0) {
          const take = Math.min(partsSize(record.parts), left);
          yield* range(key, take, "staged object");
          left -= take;
        }
        if (left > 0 && record.tailKey) {
          yield* range(record.tailKey, Math.min(record.tail, left), "tail object");
        }
      })(),
    );
  }

  /** The bytes that count, or `undefined` for an upload without a record. */
  async function size(id: string): Promise<number | undefined> {
    const record = await state.get<R>(recordKey(id));
    return record ? partsSize(record.parts) + record.tail : undefined;
  }

  return { error, load, save, dropPending, write, confirm, truncate, finish, read, size };
}

/**
 * What {@link stagedRecords} gives a staging.
 *
 * @example
 * ```ts
 * const records: StagedRecords<StagedRecord> = stagedRecords({ label: "s3", state, recordKey, deleteKey });
 * ```
 */
export type StagedRecords<R extends StagedRecord> = ReturnType<typeof stagedRecords<R>>;
