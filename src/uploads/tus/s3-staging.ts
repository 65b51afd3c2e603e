/**
 * tus staging on S3: each upload is one S3 multipart upload under `<staging prefix><upload id>` (the
 * upload id is 128 random bits; no scope in the key). A body is spooled to a local temp file (disk,
 * never memory); every full part (`partSize`, ≥ 5 MiB) goes up with `UploadPart`; what is left at the
 * end of a body (less than a part) goes up as a small "tail" object beside it and is prepended to the
 * next body, whichever replica receives it. The multipart upload id, the part list (number, ETag,
 * size) and the tail live in the state store, so the offset any replica continues from is the bytes
 * in completed parts plus the tail. Reading (at commit) completes the multipart upload (every part
 * is full-sized) and streams it followed by the tail. Removal and the sweep abort the multipart
 * upload and delete the objects.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { type FileHandle, mkdir, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { StateStore } from "../../storage/types.js";
import type { StagingObserver, StagingWrite, TusStaging } from "./fs-staging.js";

const MiB = 1024 * 1024;

/**
 * What the S3 staging needs of its store: `S3FileStore` has all of it.
 *
 * @example
 * ```ts
 * const target: S3StagingTarget = s3Store({ bucket: "files" });
 * ```
 */
export interface S3StagingTarget {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
}

/**
 * Options of {@link s3TusStaging}.
 *
 * @example
 * ```ts
 * const options: S3TusStagingOptions = { partSize: 8 * 1024 * 1024, dir: "/var/tmp/tus-spool" };
 * ```
 */
export interface S3TusStagingOptions {
  /** Bytes per multipart part (at least 5 MiB). @default 8 MiB */
  partSize?: number;
  /** Key prefix of staging objects. @default the store's prefix with `-tus/` for its trailing `/` */
  prefix?: string;
  /** Local folder where a body is spooled up to one part. @default a folder under the OS temp folder */
  dir?: string;
}

/** One uploaded part. */
interface StagedPart {
  n: number;
  etag: string;
  size: number;
}

/** What the state store holds per staged upload. */
interface S3StagingRecord {
  expiresAt: number;
  /** The multipart upload, once the first full part went up. */
  uploadId?: string;
  parts: StagedPart[];
  /** The tail object and how many of its first bytes count. */
  tailKey?: string;
  tail: number;
  /** The state before the last body, so a body refused by its checksum can be cut off again. */
  previous?: { parts: number; tailKey?: string; tail: number };
  /** Set once the multipart upload was completed (for reading at commit). */
  completed?: boolean;
}

function recordKey(id: string): string {
  return `mcp-file-bridge:tus-s3:${id}`;
}

/** How long a staging record outlives its upload's expiry, so the sweep still finds what to remove. */
const RECORD_GRACE_S = 24 * 60 * 60;

function partsSize(parts: StagedPart[]): number {
  return parts.reduce((sum, part) => sum + part.size, 0);
}

function stagingError(action: string, cause: unknown): FileBridgeError {
  if (cause instanceof FileBridgeError) return cause;
  return new FileBridgeError("STORAGE_ERROR", `tus s3 staging: could not ${action}`, { cause });
}

/** A local spool file holding at most one part. */
class Spool {
  size = 0;
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  static async open(dir: string): Promise<Spool> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, randomBytes(12).toString("base64url"));
    return new Spool(path, await open(path, "w+", 0o600));
  }

  async append(chunk: Uint8Array): Promise<void> {
    let done = 0;
    while (done < chunk.length) {
      const { bytesWritten } = await this.handle.write(chunk, done, chunk.length - done, this.size);
      done += bytesWritten;
      this.size += bytesWritten;
    }
  }

  stream(): Readable {
    return createReadStream(this.path, { start: 0, end: this.size - 1, highWaterMark: MiB });
  }

  async reset(): Promise<void> {
    await this.handle.truncate(0);
    this.size = 0;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.path, { force: true });
  }
}

/** The default spool folder: one per user under the OS temp folder. */
function defaultSpoolDir(): string {
  const user = typeof process.getuid === "function" ? String(process.getuid()) : "user";
  return join(tmpdir(), `mcp-file-bridge-tus-s3-${user}`);
}

function defaultPrefix(storePrefix: string): string {
  if (storePrefix === "") return "mcp-file-bridge-tus/";
  return storePrefix.endsWith("/") ? `${storePrefix.slice(0, -1)}-tus/` : `${storePrefix}-tus/`;
}

/**
 * tus staging in the S3 bucket of an `s3Store` (what the tus endpoint uses by itself when its store
 * is an `s3Store`): a multipart upload per upload, parts of `partSize`, bodies spooled on local disk,
 * the part list in `state` — so any replica sharing the bucket and the state store continues an
 * upload another one started.
 *
 * @example
 * ```ts
 * const store = s3Store({ bucket: "files" });
 * const state = redisState({ url });
 * createFileRoutes({ store, minter, state, tus: { staging: s3TusStaging(store, state) } });
 * ```
 */
export function s3TusStaging(
  target: S3StagingTarget,
  state: StateStore,
  options: S3TusStagingOptions = {},
): TusStaging {
  const { client, bucket } = target;
  const partSize = options.partSize ?? 8 * MiB;
  if (!Number.isSafeInteger(partSize) || partSize < 5 * MiB) {
    throw new FileBridgeError(
      "INVALID_OPTION",
      "s3TusStaging: partSize must be an integer of at least 5 MiB",
    );
  }
  const prefix = options.prefix ?? defaultPrefix(target.prefix);
  const dir = options.dir ?? defaultSpoolDir();
  const keyOf = (id: string) => prefix + id;

  async function load(id: string): Promise<S3StagingRecord> {
    const record = await state.get<S3StagingRecord>(recordKey(id));
    if (!record) throw new FileBridgeError("NOT_FOUND", "No such staged upload");
    return record;
  }

  async function save(id: string, record: S3StagingRecord): Promise<void> {
    const ttl = Math.max(1, Math.ceil((record.expiresAt - Date.now()) / 1000)) + RECORD_GRACE_S;
    await state.set(recordKey(id), record, { ttl });
  }

  async function deleteKey(key: string): Promise<void> {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  async function uploadPart(id: string, record: S3StagingRecord, spool: Spool): Promise<void> {
    if (!record.uploadId) {
      const created = await client.send(
        new CreateMultipartUploadCommand({
          Bucket: bucket,
          Key: keyOf(id),
          ContentType: "application/octet-stream",
        }),
      );
      record.uploadId = created.UploadId as string;
    }
    const n = record.parts.length + 1;
    const response = await client.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: keyOf(id),
        UploadId: record.uploadId,
        PartNumber: n,
        Body: spool.stream(),
        ContentLength: spool.size,
      }),
    );
    record.parts.push({ n, etag: response.ETag ?? "", size: spool.size });
    // The tail was consumed into this part: from here on it no longer counts.
    record.tail = 0;
    await save(id, record);
  }

  /** Copies the first `length` bytes of a tail object into the spool. */
  async function restoreTail(key: string, length: number, spool: Spool): Promise<void> {
    const response = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=0-${length - 1}` }),
    );
    for await (const chunk of response.Body as Readable) await spool.append(chunk as Uint8Array);
    if (spool.size !== length)
      throw new FileBridgeError("STORAGE_ERROR", "tus s3 staging: tail object is short");
  }

  /** Stores what the spool holds as the new tail object. */
  async function storeTail(id: string, record: S3StagingRecord, spool: Spool): Promise<void> {
    if (spool.size === 0) {
      record.tail = 0;
      return;
    }
    const key = `${keyOf(id)}.${randomBytes(6).toString("base64url")}.part`;
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: spool.stream(), ContentLength: spool.size }),
    );
    record.tailKey = key;
    record.tail = spool.size;
  }

  /** Tail objects of an upload (current, previous, and any a crash left). */
  async function tailKeys(id: string): Promise<string[]> {
    const response = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${keyOf(id)}.` }));
    return (response.Contents ?? []).map((object) => object.Key as string);
  }

  async function spoolBody(
    id: string,
    record: S3StagingRecord,
    spool: Spool,
    source: Readable,
    observe: StagingObserver | undefined,
  ): Promise<unknown> {
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        let rest: Uint8Array = chunk;
        while (rest.length > 0) {
          const piece = rest.subarray(0, partSize - spool.size);
          await spool.append(piece);
          await observe?.(piece);
          rest = rest.subarray(piece.length);
          if (spool.size === partSize) {
            await uploadPart(id, record, spool);
            await spool.reset();
          }
        }
      }
      return undefined;
    } catch (error) {
      source.destroy();
      return error;
    }
  }

  return {
    async create(id, expiresAt) {
      await save(id, { expiresAt, parts: [], tail: 0 });
    },

    async write(id, offset, source, observe): Promise<StagingWrite> {
      let record: S3StagingRecord;
      let spool: Spool;
      const inParts = () => partsSize(record.parts);
      try {
        record = await load(id);
        if (record.completed)
          throw new FileBridgeError("STORAGE_ERROR", "tus s3 staging: the upload is complete");
        if (offset < inParts() || offset > inParts() + record.tail) {
          throw new FileBridgeError("STORAGE_ERROR", `tus s3 staging: cannot write at ${offset}`);
        }
        spool = await Spool.open(dir);
      } catch (error) {
        source.resume();
        return { written: 0, error: stagingError("start the write", error) };
      }
      const keep = offset - inParts();
      const previousTailKey = record.previous?.tailKey;
      record.previous = {
        parts: record.parts.length,
        tail: keep,
        ...(record.tailKey ? { tailKey: record.tailKey } : {}),
      };
      let error: unknown;
      try {
        if (keep > 0) await restoreTail(record.tailKey as string, keep, spool);
        error = await spoolBody(id, record, spool, source, observe);
        await storeTail(id, record, spool);
      } catch (cause) {
        source.resume();
        error ??= stagingError("stage the body", cause);
        // The tail object is unchanged when no part went up (its first `keep` bytes still count).
        if (record.parts.length === record.previous.parts) record.tail = keep;
        else record.tail = 0;
      }
      try {
        await save(id, record);
        // Two bodies back: no longer needed to cut a refused body off.
        if (
          previousTailKey &&
          previousTailKey !== record.tailKey &&
          previousTailKey !== record.previous.tailKey
        ) {
          await deleteKey(previousTailKey).catch(() => undefined);
        }
      } catch (cause) {
        error ??= stagingError("record the staged parts", cause);
      } finally {
        await spool.close();
      }
      const written = inParts() + record.tail - offset;
      return error === undefined ? { written } : { written: Math.max(0, written), error };
    },

    async truncate(id, length) {
      const record = await load(id);
      const previous = record.previous;
      if (previous && length === partsSize(record.parts.slice(0, previous.parts)) + previous.tail) {
        // A refused body: back to the state before it (its parts are left out of the completion).
        record.parts = record.parts.slice(0, previous.parts);
        record.tail = previous.tail;
        if (previous.tailKey) record.tailKey = previous.tailKey;
        else delete record.tailKey;
      } else if (length >= partsSize(record.parts) && length <= partsSize(record.parts) + record.tail) {
        record.tail = length - partsSize(record.parts);
      } else {
        throw new FileBridgeError("STORAGE_ERROR", `tus s3 staging: cannot cut back to ${length}`);
      }
      await save(id, record);
    },

    read(id, length) {
      return Readable.from(
        (async function* () {
          const record = await load(id);
          const inParts = partsSize(record.parts);
          if (record.parts.length > 0 && !record.completed) {
            await client.send(
              new CompleteMultipartUploadCommand({
                Bucket: bucket,
                Key: keyOf(id),
                UploadId: record.uploadId,
                MultipartUpload: {
                  Parts: record.parts.map((part) => ({ PartNumber: part.n, ETag: part.etag })),
                },
              }),
            );
            record.completed = true;
            await save(id, record);
          }
          let left = length;
          if (inParts > 0 && left > 0) {
            const end = Math.min(inParts, left) - 1;
            const body = await client.send(
              new GetObjectCommand({ Bucket: bucket, Key: keyOf(id), Range: `bytes=0-${end}` }),
            );
            for await (const chunk of body.Body as Readable) yield chunk as Uint8Array;
            left -= end + 1;
          }
          if (left > 0 && record.tailKey) {
            const end = Math.min(record.tail, left) - 1;
            const body = await client.send(
              new GetObjectCommand({ Bucket: bucket, Key: record.tailKey, Range: `bytes=0-${end}` }),
            );
            for await (const chunk of body.Body as Readable) yield chunk as Uint8Array;
          }
        })(),
      );
    },

    async size(id) {
      const record = await state.get<S3StagingRecord>(recordKey(id));
      return record ? partsSize(record.parts) + record.tail : undefined;
    },

    async remove(id) {
      const record = await state.get<S3StagingRecord>(recordKey(id));
      try {
        if (record?.uploadId && !record.completed) {
          await client
            .send(
              new AbortMultipartUploadCommand({ Bucket: bucket, Key: keyOf(id), UploadId: record.uploadId }),
            )
            .catch(() => undefined);
        }
        await deleteKey(keyOf(id));
        await Promise.all((await tailKeys(id)).map(deleteKey));
      } catch (error) {
        throw stagingError("remove the staged upload", error);
      }
      await state.delete(recordKey(id));
    },

    async sweep(now) {
      const idOf = (key: string) => key.slice(prefix.length).split(".")[0] as string;
      const objects: string[] = [];
      const uploads: Array<{ key: string; uploadId: string }> = [];
      try {
        let token: string | undefined;
        do {
          const page = await client.send(
            new ListObjectsV2Command({
              Bucket: bucket,
              Prefix: prefix,
              ...(token ? { ContinuationToken: token } : {}),
            }),
          );
          for (const object of page.Contents ?? []) objects.push(object.Key as string);
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
        let keyMarker: string | undefined;
        let uploadMarker: string | undefined;
        for (;;) {
          const page = await client.send(
            new ListMultipartUploadsCommand({
              Bucket: bucket,
              Prefix: prefix,
              ...(keyMarker ? { KeyMarker: keyMarker, UploadIdMarker: uploadMarker } : {}),
            }),
          );
          for (const upload of page.Uploads ?? []) {
            uploads.push({ key: upload.Key as string, uploadId: upload.UploadId as string });
          }
          if (!page.IsTruncated) break;
          keyMarker = page.NextKeyMarker;
          uploadMarker = page.NextUploadIdMarker;
        }
        const ids = new Set([...objects, ...uploads.map((upload) => upload.key)].map(idOf));
        let removed = 0;
        for (const id of ids) {
          const record = await state.get<S3StagingRecord>(recordKey(id));
          // No record: expired past its grace, removed, or never recorded (a crash): nothing uses it.
          if (record && record.expiresAt > now) continue;
          for (const upload of uploads.filter((each) => idOf(each.key) === id)) {
            await client.send(
              new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.key, UploadId: upload.uploadId }),
            );
          }
          await Promise.all(objects.filter((key) => idOf(key) === id).map(deleteKey));
          await state.delete(recordKey(id));
          removed++;
        }
        return removed;
      } catch (error) {
        throw stagingError("sweep", error);
      }
    },
  };
}
