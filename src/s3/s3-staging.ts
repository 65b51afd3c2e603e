/**
 * tus staging on S3: each upload is one S3 multipart upload under `<staging prefix><upload id>` (the
 * upload id is 128 random bits; no scope in the key). A body is spooled to a local temp file (disk,
 * never memory); every full part (`partSize`, ≥ 5 MiB) goes up with `UploadPart`; what is left at the
 * end of a body (less than a part) goes up as a small "tail" object beside it and is prepended to the
 * next body, whichever replica receives it. The multipart upload id, the part list (number, ETag,
 * size) and the tail live in the state store, so the offset any replica continues from is the bytes
 * in completed parts plus the tail. A provisional body (under `Upload-Checksum`) records its parts
 * and tail as pending, out of the offset, until `confirm()`: a replica killed mid-body leaves none
 * of it counted, and the next body's parts overwrite its part numbers. At commit the multipart
 * upload is completed with the tail copied in server-side as its last part (`UploadPartCopy`), so
 * the whole upload is one object an `s3Store` adopts by server-side copy (`adoptable()`), or that
 * is read back. Removal and the sweep abort the multipart upload and delete the objects.
 */
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { StateStore } from "../storage/types.js";
import type { StagingObserver, StagingWrite, TusStaging } from "../uploads/tus/fs-staging.js";
import {
  partsSize,
  type StagedBytes,
  type StagedRecord,
  stagedRecords,
} from "../uploads/tus/staged-parts.js";
import { copySource } from "./s3-copy-source.js";
import { Spool, sweepSpools } from "./s3-spool.js";
import { multipartUploads, recordKey, sweepStaging } from "./s3-staging-sweep.js";

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
  /**
   * Local folder where a body is spooled up to one part: a folder of this user, mode 0700 (made so
   * when missing; checked on every use, refused with `STORAGE_ERROR` when it is not).
   * @default `<os temp>/mcp-file-bridge-tus-s3-<uid>`
   */
  dir?: string;
}

/** What the state store holds per staged upload (see `StagedRecord`). */
type S3StagingRecord = StagedRecord;

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

  async function deleteKey(key: string): Promise<void> {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  const records = stagedRecords<S3StagingRecord>({ label: "s3", state, recordKey, deleteKey });
  const { save } = records;

  /** Uploads the spool as the next part of `bytes` (creating the multipart upload first if needed). */
  async function uploadPart(
    id: string,
    record: S3StagingRecord,
    bytes: StagedBytes,
    spool: Spool,
  ): Promise<void> {
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
    const n = bytes.parts.length + 1;
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
    bytes.parts.push({ n, etag: response.ETag ?? "", size: spool.size });
    // The tail was consumed into this part: from here on it no longer counts.
    bytes.tail = 0;
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

  /** Stores what the spool holds as the new tail object of `bytes`. */
  async function storeTail(id: string, bytes: StagedBytes, spool: Spool): Promise<void> {
    if (spool.size === 0) {
      bytes.tail = 0;
      return;
    }
    const key = `${keyOf(id)}.${randomBytes(6).toString("base64url")}.part`;
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: spool.stream(), ContentLength: spool.size }),
    );
    bytes.tailKey = key;
    bytes.tail = spool.size;
  }

  /** Tail objects of an upload (current, previous, and any a crash left). */
  async function tailKeys(id: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: `${keyOf(id)}.`,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? []) keys.push(object.Key as string);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  /** Spools a body into `bytes`, each full part uploaded and `persist`ed as it fills. */
  async function spoolBody(
    id: string,
    record: S3StagingRecord,
    bytes: StagedBytes,
    spool: Spool,
    source: Readable,
    observe: StagingObserver | undefined,
    persist: () => Promise<void>,
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
            await uploadPart(id, record, bytes, spool);
            // Its bytes are in the part now: even when recording it fails, they are not the tail.
            await spool.reset();
            await persist();
          }
        }
      }
      return undefined;
    } catch (error) {
      source.destroy();
      return error;
    }
  }

  /**
   * Completes the multipart upload (the tail copied in as its last part, server-side) so the staged
   * bytes are one object; a record without parts (everything in the tail) stays as it is.
   */
  function finish(id: string): Promise<S3StagingRecord> {
    return records.finish(id, async (record) => {
      if (record.tail > 0 && record.tailKey) {
        const n = record.parts.length + 1;
        const copied = await client.send(
          new UploadPartCopyCommand({
            Bucket: bucket,
            Key: keyOf(id),
            UploadId: record.uploadId,
            PartNumber: n,
            CopySource: copySource(bucket, record.tailKey),
            CopySourceRange: `bytes=0-${record.tail - 1}`,
          }),
        );
        record.parts.push({ n, etag: copied.CopyPartResult?.ETag ?? "", size: record.tail });
        record.tail = 0;
      }
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: keyOf(id),
          UploadId: record.uploadId,
          MultipartUpload: { Parts: record.parts.map((part) => ({ PartNumber: part.n, ETag: part.etag })) },
        }),
      );
    });
  }

  return {
    async create(id, expiresAt) {
      await save(id, { expiresAt, parts: [], tail: 0 });
    },

    write(id, offset, source, observe, options = {}): Promise<StagingWrite> {
      return records.write(id, offset, source, options.provisional === true, {
        open: () => Spool.open(dir),
        fill: async (spool, record, bytes, persist) => {
          // The first `keep` bytes of the tail (what `bytes.tail` starts at) go in front of the body.
          if (bytes.tail > 0) await restoreTail(record.tailKey as string, bytes.tail, spool);
          return spoolBody(id, record, bytes, spool, source, observe, persist);
        },
        storeTail: (spool, bytes) => storeTail(id, bytes, spool),
        close: (spool) => spool.close(),
      });
    },

    confirm: records.confirm,

    truncate: records.truncate,

    read(id, length) {
      return records.read(id, length, keyOf(id), finish, async function* (key, take) {
        const body = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=0-${take - 1}` }),
        );
        for await (const chunk of body.Body as Readable) yield chunk as Uint8Array;
      });
    },

    async adoptable(id, length) {
      const record = await finish(id);
      if (!record.completed || partsSize(record.parts) !== length) return undefined;
      return { client, bucket, key: keyOf(id) };
    },

    size: records.size,

    async remove(id) {
      try {
        // Every multipart upload on the key, not only the recorded one: a part upload that failed
        // after its multipart upload was created (a flaky S3, a replica gone) left one unrecorded.
        for (const upload of await multipartUploads(client, bucket, keyOf(id))) {
          if (upload.key !== keyOf(id)) continue;
          await client
            .send(
              new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.key, UploadId: upload.uploadId }),
            )
            .catch(() => undefined);
        }
        await deleteKey(keyOf(id));
        await Promise.all((await tailKeys(id)).map(deleteKey));
      } catch (error) {
        throw records.error("remove the staged upload", error);
      }
      await state.delete(recordKey(id));
    },

    // Expired uploads in the bucket, and the spool files a killed process left on local disk.
    sweep: async (now) => {
      const [uploads] = await Promise.all([
        sweepStaging({ client, bucket, prefix, state, deleteKey }, now),
        sweepSpools(dir, now).catch(() => 0),
      ]);
      return uploads;
    },
  };
}
