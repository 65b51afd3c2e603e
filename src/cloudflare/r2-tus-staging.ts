/**
 * tus staging in R2, for Workers (what the tus endpoint uses by itself when its store is an
 * `r2Store`): each upload is one R2 multipart upload at `<staging prefix><upload id>` (the id is 128
 * random bits; no scope in the key). R2 takes a multipart upload only when every part but the last
 * has one size, and tus chunks come in any size, so a body fills one part buffer of `partSize` in
 * memory; each full buffer goes up with `uploadPart`, and what is left at the end of a body (less
 * than a part) is kept as a small "tail" object beside it and put in front of the next body,
 * whichever isolate receives it. The multipart upload id, the part list and the tail live in the
 * state store (a Durable Object), so the offset any isolate continues from is the bytes in uploaded
 * parts plus the tail. A provisional body (under `Upload-Checksum`) records its parts and tail as
 * pending, out of the offset, until `confirm()`. At commit the tail goes up as the last part and
 * the multipart upload is completed, so the staged bytes are one object that the store reads back
 * into the file. A marker object `<key>.upload` (expiry and multipart id in custom metadata) lets
 * the sweep find expired uploads (the binding cannot list multipart uploads); removal and the sweep
 * abort the multipart upload and delete every object of the upload.
 */
import type { Readable } from "node:stream";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { optionCheck } from "../internal/options.js";
import type { StateStore } from "../storage/types.js";
import type { StagingObserver, StagingWrite, TusStaging } from "../uploads/tus/fs-staging.js";
import { type StagedBytes, type StagedRecord, stagedRecords } from "../uploads/tus/staged-parts.js";
import type { R2BucketBinding, R2MultipartUploadLike } from "./bindings.js";

const check = optionCheck("r2TusStaging");
const MiB = 1024 * 1024;
/** R2's limit on the parts of one multipart upload. */
const MAX_PARTS = 10_000;
/** Objects of an upload with neither a record nor a marker are removed once older than this. */
const ORPHAN_MS = 24 * 3_600_000;
/** A tus upload id (`newUploadId`: 128 bits, base64url); only such ids are the sweep's. */
const UPLOAD_ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * Options of {@link r2TusStaging}.
 *
 * @example
 * ```ts
 * const options: R2TusStagingOptions = { bucket: env.FILES, state, partSize: 8 * 1024 * 1024 };
 * ```
 */
export interface R2TusStagingOptions {
  /** The R2 bucket binding the uploads are staged in. */
  bucket: R2BucketBinding;
  /** Where the part lists live: a strongly consistent store shared by isolates (`durableObjectState`). */
  state: StateStore;
  /**
   * Key prefix of staging objects, ending in `/`: a folder of their own (the sweep removes what it
   * finds there named like an upload). @default "files-tus/"
   */
  prefix?: string;
  /**
   * Bytes per multipart part, from 5 MiB (R2's minimum) to 100 MiB; one part buffer is held in
   * memory per running body. @default 8 MiB
   */
  partSize?: number;
}

/** What the state store holds per staged upload (the same shape as the S3 staging's). */
interface R2StagingRecord extends StagedRecord {
  /** The part size the upload was started with (every part but the last has it). */
  partSize: number;
}

/** The state store key of an upload's staging record. */
function recordKey(id: string): string {
  return `mcp-file-bridge:tus-r2:${id}`;
}

/** A random suffix for tail objects (a new one per body, so an older tail stays readable). */
function randomSuffix(): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The bytes of a web stream, chunk by chunk. */
async function* chunksOf(body: unknown): AsyncGenerator<Uint8Array> {
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * tus staging in an R2 bucket (see the module comment): what `r2Store(…).tusStaging(state)` gives
 * the tus endpoint by itself. Memory per running body: one part buffer (`partSize`).
 *
 * @example
 * ```ts
 * import { durableObjectState, r2Store, r2TusStaging } from "mcp-file-bridge/cloudflare";
 * const store = r2Store({ bucket: env.FILES });
 * const state = durableObjectState({ namespace: env.STATE });
 * // The same as the default for an r2Store; named here to pick the part size.
 * const staging = r2TusStaging({ bucket: env.FILES, state, partSize: 16 * 1024 * 1024 });
 * const routes = createFileRoutes({ store, state, minter, tus: { staging } });
 * ```
 */
export function r2TusStaging(options: R2TusStagingOptions): TusStaging {
  check.object(options);
  const bucket = check.implementing<R2BucketBinding>(
    options.bucket,
    "bucket",
    ["head", "get", "put", "delete", "list", "createMultipartUpload", "resumeMultipartUpload"],
    "an R2 bucket binding",
  );
  const state = check.implementing<StateStore>(
    options.state,
    "state",
    ["get", "set", "delete"],
    "a StateStore",
  );
  const prefix = options.prefix ?? "files-tus/";
  check.require(
    typeof prefix === "string" && prefix.length > 1 && prefix.endsWith("/") && prefix.length <= 256,
    "prefix",
    'must end with "/" (a folder of its own: the sweep removes what it finds there)',
  );
  const partSize = check.integer(options.partSize, "partSize", 8 * MiB, { min: 5 * MiB, max: 100 * MiB });
  const keyOf = (id: string) => prefix + id;
  const markerOf = (id: string) => `${keyOf(id)}.upload`;

  const records = stagedRecords<R2StagingRecord>({
    label: "r2",
    state,
    recordKey,
    deleteKey: (key) => bucket.delete(key),
  });
  const { save } = records;

  /** The marker the sweep finds an upload by: its expiry, and its multipart upload once there is one. */
  async function mark(id: string, expiresAt: number, uploadId?: string): Promise<void> {
    const meta: Record<string, string> = { e: String(expiresAt) };
    if (uploadId) meta.u = uploadId;
    await bucket.put(markerOf(id), "", { customMetadata: meta });
  }

  function multipart(id: string, record: R2StagingRecord): R2MultipartUploadLike {
    return bucket.resumeMultipartUpload(keyOf(id), record.uploadId as string);
  }

  /** Uploads `bytes` as the next part (creating the multipart upload first if needed). */
  async function uploadPart(
    id: string,
    record: R2StagingRecord,
    staged: StagedBytes,
    bytes: Uint8Array,
  ): Promise<void> {
    if (staged.parts.length >= MAX_PARTS) {
      throw new FileBridgeError("STORAGE_ERROR", `tus r2 staging: more than ${MAX_PARTS} parts`);
    }
    if (!record.uploadId) {
      const created = await bucket.createMultipartUpload(keyOf(id));
      record.uploadId = created.uploadId;
      await mark(id, record.expiresAt, created.uploadId);
    }
    const n = staged.parts.length + 1;
    const part = await multipart(id, record).uploadPart(n, bytes);
    staged.parts.push({ n, etag: part.etag, size: bytes.byteLength });
    // The tail was consumed into this part: from here on it no longer counts.
    staged.tail = 0;
  }

  /** The first `length` bytes of object `key`, into `into` (a tail is less than one part). */
  async function readInto(key: string, length: number, into: Uint8Array): Promise<void> {
    const object = await bucket.get(key, { range: { offset: 0, length } });
    let at = 0;
    if (object) {
      for await (const chunk of chunksOf(object.body)) {
        into.set(chunk.subarray(0, length - at), at);
        at += Math.min(chunk.byteLength, length - at);
      }
    }
    if (at !== length) throw new FileBridgeError("STORAGE_ERROR", "tus r2 staging: tail object is short");
  }

  /** Stores the first `filled` bytes of `buffer` as the new tail object of `staged`. */
  async function storeTail(id: string, staged: StagedBytes, buffer: Uint8Array, filled: number) {
    if (filled === 0) {
      staged.tail = 0;
      return;
    }
    const key = `${keyOf(id)}.${randomSuffix()}.tail`;
    await bucket.put(key, buffer.subarray(0, filled));
    staged.tailKey = key;
    staged.tail = filled;
  }

  /** Objects of an upload beside its multipart object (tails, the marker). */
  async function sideKeys(id: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix: `${keyOf(id)}.`, ...(cursor ? { cursor } : {}) });
      keys.push(...page.objects.map((object) => object.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return keys;
  }

  /**
   * Completes the multipart upload (the tail uploaded as its last part) so the staged bytes are one
   * object; a record without parts (everything in the tail) stays as it is.
   */
  function finish(id: string): Promise<R2StagingRecord> {
    return records.finish(id, async (record) => {
      if (record.tail > 0 && record.tailKey) {
        const tail = new Uint8Array(record.tail);
        await readInto(record.tailKey, record.tail, tail);
        await uploadPart(id, record, record, tail);
      }
      await multipart(id, record).complete(record.parts.map(({ n, etag }) => ({ partNumber: n, etag })));
    });
  }

  /**
   * Reads a body into the part buffer, uploading each full part (`sendPart`) and recording it
   * (`recordPart`). Once a part went up the buffer counts as empty, even when recording it fails:
   * its bytes are in the part and must not be kept as the tail again.
   */
  async function fill(
    source: Readable,
    buffer: Uint8Array,
    start: number,
    observe: StagingObserver | undefined,
    sendPart: () => Promise<void>,
    recordPart: () => Promise<void>,
  ): Promise<{ filled: number; error?: unknown }> {
    let filled = start;
    try {
      for await (const chunk of source as AsyncIterable<Uint8Array>) {
        let rest = chunk;
        while (rest.byteLength > 0) {
          const piece = rest.subarray(0, buffer.byteLength - filled);
          buffer.set(piece, filled);
          filled += piece.byteLength;
          await observe?.(piece);
          rest = rest.subarray(piece.byteLength);
          if (filled === buffer.byteLength) {
            await sendPart();
            filled = 0;
            await recordPart();
          }
        }
      }
      return { filled };
    } catch (error) {
      source.destroy();
      return { filled, error };
    }
  }

  async function removeUpload(id: string, record: R2StagingRecord | null): Promise<void> {
    const sides = await sideKeys(id);
    const uploadIds = new Set<string>();
    if (record?.uploadId) uploadIds.add(record.uploadId);
    // A multipart upload made by a request that died before recording it is named by the marker.
    if (sides.includes(markerOf(id))) {
      const marker = await bucket.head(markerOf(id));
      const uploadId = marker?.customMetadata?.u;
      if (uploadId) uploadIds.add(uploadId);
    }
    for (const uploadId of uploadIds) {
      // Aborting a completed or already aborted upload fails: there is nothing left to abort then.
      await bucket
        .resumeMultipartUpload(keyOf(id), uploadId)
        .abort()
        .catch(() => undefined);
    }
    const keys = [keyOf(id), ...sides];
    // R2 deletes at most 1,000 keys a call.
    for (let at = 0; at < keys.length; at += 1000) await bucket.delete(keys.slice(at, at + 1000));
    await state.delete(recordKey(id));
  }

  return {
    async create(id, expiresAt) {
      await save(id, { expiresAt, partSize, parts: [], tail: 0 });
      await mark(id, expiresAt);
    },

    write(id, offset, source, observe, writeOptions = {}): Promise<StagingWrite> {
      return records.write(id, offset, source, writeOptions.provisional === true, {
        open: async (record, keep) => {
          const body = { buffer: new Uint8Array(record.partSize), filled: keep };
          if (keep > 0) await readInto(record.tailKey as string, keep, body.buffer);
          return body;
        },
        fill: async (body, record, staged, persist) => {
          const sendPart = () => uploadPart(id, record, staged, body.buffer);
          const result = await fill(source, body.buffer, body.filled, observe, sendPart, persist);
          body.filled = result.filled;
          return result.error;
        },
        storeTail: (body, staged) => storeTail(id, staged, body.buffer, body.filled),
      });
    },

    confirm: records.confirm,

    truncate: records.truncate,

    read(id, length) {
      return records.read(id, length, keyOf(id), finish, async function* (key, take, what) {
        const object = await bucket.get(key, { range: { offset: 0, length: take } });
        if (!object) throw new FileBridgeError("STORAGE_ERROR", `tus r2 staging: ${what} missing`);
        yield* chunksOf(object.body);
      });
    },

    size: records.size,

    async remove(id) {
      try {
        await removeUpload(id, await state.get<R2StagingRecord>(recordKey(id)));
      } catch (error) {
        throw records.error("remove the staged upload", error);
      }
    },

    async sweep(now) {
      try {
        const objects = new Map<string, { uploaded: number; expiresAt?: number }>();
        let cursor: string | undefined;
        do {
          const page = await bucket.list({
            prefix,
            include: ["customMetadata"],
            ...(cursor ? { cursor } : {}),
          });
          for (const object of page.objects) {
            const id = object.key.slice(prefix.length).split(".")[0] as string;
            // Only an upload's objects (`<id>`, `<id>.upload`, `<id>.<random>.tail`) are the sweep's.
            if (!UPLOAD_ID.test(id)) continue;
            const seen = objects.get(id) ?? { uploaded: object.uploaded.getTime() };
            const expiry = Number(object.customMetadata?.e);
            if (object.key === markerOf(id) && Number.isFinite(expiry)) seen.expiresAt = expiry;
            seen.uploaded = Math.min(seen.uploaded, object.uploaded.getTime());
            objects.set(id, seen);
          }
          cursor = page.truncated ? page.cursor : undefined;
        } while (cursor);
        let removed = 0;
        for (const [id, seen] of objects) {
          // The marker's expiry is the upload's (fixed at creation): live uploads cost no state call,
          // so a sweep makes list pages plus a few calls per expired upload (subrequest limits).
          if (seen.expiresAt !== undefined && seen.expiresAt > now) continue;
          const record = await state.get<R2StagingRecord>(recordKey(id));
          const expiresAt = record?.expiresAt ?? seen.expiresAt ?? seen.uploaded + ORPHAN_MS;
          if (expiresAt > now) continue;
          await removeUpload(id, record);
          removed++;
        }
        return removed;
      } catch (error) {
        throw records.error("sweep", error);
      }
    },
  };
}
