import { constants } from "node:buffer";
import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { isId } from "../internal/ids.js";
import { optionCheck } from "../internal/options.js";
import { resolveRange } from "../storage/kit/byte-range.js";
import {
  decodeCursor,
  encodeCursor,
  isExpired,
  listKind,
  listLimit,
  unrefInterval,
} from "../storage/kit/list-page.js";
import { streamPut } from "../storage/kit/put-pipeline.js";
import { planPut, storedFileOf } from "../storage/kit/put-plan.js";
import { stagedFile } from "../storage/kit/staged-file.js";
import type {
  AdoptSource,
  ByteRange,
  DirectUploads,
  FileCatalog,
  FileStore,
  ListOptions,
  ListPage,
  PutOptions,
  PutSource,
  StagedFile,
  StateStore,
  StoredFile,
} from "../storage/types.js";
import type { TusStaging } from "../uploads/tus/fs-staging.js";
import type { TusStagingSource } from "../uploads/tus/service.js";
import { adoptObject, type S3AdoptContext } from "./s3-adopt.js";
import { s3DirectUploads } from "./s3-direct.js";
import { bucketSecret, MIN_KEY_SECRET, migrateLegacyKeys, type S3LayoutContext } from "./s3-key-layout.js";
import { parseMeta, S3Keys, serializeMeta } from "./s3-keys.js";
import { applyLifecycle, expiryTag, type LifecycleState } from "./s3-lifecycle.js";
import { type MetaEntry, metaEntries } from "./s3-list.js";
import { S3Multipart } from "./s3-multipart.js";
import { presignDownload } from "./s3-presign.js";
import { s3TusStaging } from "./s3-staging.js";
import { abortStaleUploads, type S3SweepContext, sweepObjects } from "./s3-sweep.js";

const check = optionCheck("s3Store");

/**
 * Options of {@link s3Store}.
 *
 * @example
 * ```ts
 * const options: S3StoreOptions = {
 *   bucket: "files",
 *   endpoint: "http://127.0.0.1:7480", // self-hosted S3 (Ceph radosgw, MinIO, …)
 *   forcePathStyle: true,
 *   credentials: { accessKeyId: "…", secretAccessKey: "…" },
 * };
 * ```
 */
export interface S3StoreOptions {
  /** The bucket (it must exist). */
  bucket: string;
  /** An `S3Client` to use; the store never destroys it. Overrides the connection options below. */
  client?: S3Client;
  /** S3 endpoint for self-hosted or non-AWS services. @default the AWS endpoint of `region` */
  endpoint?: string;
  /** @default process.env.AWS_REGION, else "us-east-1" */
  region?: string;
  /** @default the AWS SDK's default credential chain */
  credentials?: S3ClientConfig["credentials"];
  /** Path-style addressing (`endpoint/bucket/key`), needed by most self-hosted S3. @default false */
  forcePathStyle?: boolean;
  /** Prefix of every object key the store writes. @default "mcp-file-bridge/" */
  prefix?: string;
  /**
   * The secret that keys each scope's folder (`<prefix>k<hmac(scope)>/`), at least 32 bytes (a
   * string counts its UTF-8 bytes). Every replica of one bucket needs the same; changing it hides
   * the files written under the old one. Without it the store makes a random secret once and keeps
   * it in the bucket (`<prefix>.scope-key`), shared by every replica.
   * @default the bucket's own secret
   */
  keySecret?: string | Uint8Array;
  /**
   * Also read files written under the unkeyed layout of versions before issue 40
   * (`<prefix><sha256(scope)>/`). Turn it off once {@link S3FileStore.migrateKeys} has run.
   * @default true
   */
  legacyKeys?: boolean;
  /**
   * A shared index of file metadata (e.g. `redisCatalog()`): `head` and `list` read it instead of
   * S3, so listing is fast at any size and every replica sees the same files at once; deletes are
   * exactly-once across replicas. Without it the store lists the bucket and reads metadata objects.
   * @default none
   */
  catalog?: FileCatalog;
  /**
   * Multipart part size in bytes, from 5 MiB to 4 GiB. A body up to this size is one `PutObject`.
   * @default 8 MiB
   */
  partSize?: number;
  /**
   * Parts uploaded in parallel per put. A put holds at most `queueSize + 1` part buffers
   * (`(queueSize + 1) × partSize` bytes: 40 MiB with the defaults). @default 4
   */
  queueSize?: number;
  /**
   * Age after which `sweep()` removes leftovers of interrupted puts: unfinished multipart uploads
   * and data objects whose metadata never arrived (a replica killed mid-upload).
   * @default "1h"
   */
  staleAfter?: Duration;
  /** How often `sweep()` runs in the background (an `unref`'d timer). `0` turns it off. @default "10m" */
  sweepInterval?: Duration;
  /**
   * Also let the S3 server expire objects: merges rules into the bucket's lifecycle configuration
   * (abort unfinished multipart uploads after a day; expire objects tagged with their TTL in days)
   * and tags files that have a TTL. The sweep still runs: lifecycle rules work in whole days.
   * Turn on only where the store may change the bucket's lifecycle configuration.
   * @default false
   */
  lifecycle?: boolean;
  /**
   * Presigned S3 download URLs, so bytes skip your server (see {@link S3FileStore.presignedUrl}).
   * `false` keeps downloads on your own signed URLs. @default false
   */
  presign?: false | { expiresIn?: Duration };
  /** Clock, in milliseconds since the epoch. @default Date.now */
  now?: () => number;
}

/**
 * The {@link FileStore} {@link s3Store} returns: also hands out presigned S3 download URLs when
 * configured, and names its bucket and key prefix.
 *
 * @example
 * ```ts
 * const store: S3FileStore = s3Store({ bucket: "files", presign: { expiresIn: "5m" } });
 * const url = await store.presignedUrl(scope, id); // null when missing or presign is off
 * ```
 */
export interface S3FileStore extends FileStore, TusStagingSource {
  /** The S3 client the store sends through (the tus endpoint's S3 staging shares it). */
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  /**
   * Presigned `PUT`s of staging objects and their verified commit, so upload bytes skip your server
   * (the files extension's `direct` option uses them; needs `@aws-sdk/s3-request-presigner`).
   */
  readonly directUploads: DirectUploads;
  /**
   * Moves the files of the unkeyed layout written before issue 40 to their keyed folders (see
   * `keySecret`); safe while the store serves and to run again. Resolves how many files moved.
   */
  migrateKeys(): Promise<{ moved: number }>;
  /**
   * A presigned S3 GET URL for the file (as an `attachment` with its name), or `null` when the file
   * is missing, expired, in another scope, or `presign` is off.
   */
  presignedUrl(
    scope: string,
    id: string,
    options?: { expiresIn?: Duration; inline?: boolean },
  ): Promise<string | null>;
}

const MiB = 1024 * 1024;
/**
 * The largest part: each of the `queueSize + 1` part buffers is one Node buffer (4 GiB at most on
 * Node 20), and S3 takes parts of up to 5 GiB.
 */
const MAX_PART_SIZE = Math.min(4 * 1024 * MiB, constants.MAX_LENGTH);

function awsErrorName(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { name?: string }).name : undefined;
}

function isMissing(error: unknown): boolean {
  const name = awsErrorName(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  return name === "NoSuchKey" || name === "NotFound" || status === 404;
}

function s3Error(action: string, error: unknown): FileBridgeError {
  if (isFileBridgeError(error)) return error;
  return new FileBridgeError("STORAGE_ERROR", `s3: could not ${action} (is the S3 endpoint reachable?)`, {
    cause: error,
  });
}

function validate(options: S3StoreOptions): void {
  if (typeof options !== "object" || options === null) {
    throw check.error("options", "must be an object");
  }
  if (typeof options.bucket !== "string" || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(options.bucket)) {
    throw check.error("bucket", "must be a valid S3 bucket name");
  }
  if (options.client !== undefined && !(options.client instanceof S3Client)) {
    throw check.error("client", "must be an S3Client from @aws-sdk/client-s3");
  }
  const prefix = options.prefix;
  if (prefix !== undefined && (typeof prefix !== "string" || prefix.length > 512 || prefix.startsWith("/"))) {
    throw check.error("prefix", "must be a string of at most 512 characters, not starting with /");
  }
  const { partSize, queueSize } = options;
  if (
    partSize !== undefined &&
    (!Number.isSafeInteger(partSize) || partSize < 5 * MiB || partSize > MAX_PART_SIZE)
  ) {
    throw check.error("partSize", "must be an integer from 5 MiB to 4 GiB");
  }
  if (queueSize !== undefined && (!Number.isSafeInteger(queueSize) || queueSize < 1 || queueSize > 64)) {
    throw check.error("queueSize", "must be an integer from 1 to 64");
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw check.error("now", "must be a function returning milliseconds");
  }
  const secret = options.keySecret;
  if (
    secret !== undefined &&
    !(typeof secret === "string" && Buffer.byteLength(secret, "utf8") >= MIN_KEY_SECRET) &&
    !(secret instanceof Uint8Array && secret.length >= MIN_KEY_SECRET)
  ) {
    throw check.error("keySecret", `must be a string or bytes of at least ${MIN_KEY_SECRET} bytes`);
  }
  if (options.legacyKeys !== undefined && typeof options.legacyKeys !== "boolean") {
    throw check.error("legacyKeys", "must be a boolean");
  }
  const catalog = options.catalog;
  if (
    catalog !== undefined &&
    (typeof catalog !== "object" || catalog === null || typeof catalog.page !== "function")
  ) {
    throw check.error("catalog", "must be a FileCatalog");
  }
}

/**
 * A {@link FileStore} on S3 or any S3-compatible object storage (Ceph radosgw, MinIO, R2, …), on the
 * official AWS SDK v3. Puts stream through the storage kit's pipeline (size cap and sha256 while
 * streaming) into a multipart upload in part buffers from a bounded pool (`queueSize + 1` of
 * `partSize`; a body within one part is one `PutObject`); on any failure the upload is aborted and
 * nothing is left behind. Each file is `<prefix><scope hash>/<id>` (bytes) beside
 * `<id>.json` (metadata, written last: it makes the file visible), so neither scopes nor user file
 * names reach a key. Range reads, TTLs (sweep, optionally bucket lifecycle rules), and optional
 * presigned downloads. Several replicas can share one bucket; give them a shared `catalog` for fast
 * listing and exactly-once deletes.
 *
 * @example
 * ```ts
 * import { s3Store } from "mcp-file-bridge/s3";
 * import { redisCatalog } from "mcp-file-bridge/redis";
 *
 * const store = s3Store({
 *   bucket: "mcp-files",
 *   endpoint: process.env.S3_ENDPOINT, // omit for AWS
 *   forcePathStyle: true,
 *   catalog: redisCatalog({ url: process.env.REDIS_URL }),
 * });
 * const file = await store.put(request.body, { scope, name: "report.pdf", maxBytes: 100 * 1024 * 1024 });
 * ```
 */
export function s3Store(options: S3StoreOptions): S3FileStore {
  validate(options);
  const bucket = options.bucket;
  const keys = new S3Keys(options.prefix ?? "mcp-file-bridge/");
  const now = options.now ?? Date.now;
  const catalog = options.catalog;
  const partSize = options.partSize ?? 8 * MiB;
  const queueSize = options.queueSize ?? 4;
  const staleMs = durationToMs(options.staleAfter ?? "1h", "staleAfter");
  const sweepMs = durationToMs(options.sweepInterval ?? "10m", "sweepInterval");
  const presignSeconds =
    options.presign === undefined || options.presign === false
      ? undefined
      : durationToMs(options.presign.expiresIn ?? "5m", "presign.expiresIn") / 1000;
  const ownsClient = options.client === undefined;
  const client =
    options.client ??
    new S3Client({
      region: options.region ?? process.env.AWS_REGION ?? "us-east-1",
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      forcePathStyle: options.forcePathStyle ?? false,
      // Only checksum when the operation requires it: S3-compatible servers differ in what they accept.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  const lifecycle: LifecycleState | undefined = options.lifecycle ? { applied: undefined } : undefined;
  const legacyKeys = options.legacyKeys ?? true;
  const layout: S3LayoutContext = { client, bucket, keys, isMissing, error: s3Error };
  if (options.keySecret !== undefined) {
    keys.useSecret(
      typeof options.keySecret === "string" ? Buffer.from(options.keySecret, "utf8") : options.keySecret,
    );
  }
  let loadingSecret: Promise<void> | undefined;
  /** Loads the bucket's scope-folder secret once (every operation waits for it). */
  async function keyed(): Promise<void> {
    if (keys.ready) return;
    loadingSecret ??= bucketSecret(layout).then(
      (loaded) => keys.useSecret(loaded),
      (error: unknown) => {
        loadingSecret = undefined;
        throw error;
      },
    );
    await loadingSecret;
  }

  async function getText(key: string): Promise<string | null> {
    try {
      const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return (await response.Body?.transformToString("utf8")) ?? "";
    } catch (error) {
      if (isMissing(error)) return null;
      throw s3Error("read metadata", error);
    }
  }

  async function deleteKey(key: string): Promise<void> {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  /** Metadata of a file, expired or not; `null` when missing. */
  async function readMeta(scope: string, id: string): Promise<StoredFile | null> {
    if (catalog) {
      const file = await catalog.get(scope, id);
      return file && file.scope === scope ? file : null;
    }
    await keyed();
    let text = await getText(keys.meta(scope, id));
    if (text === null && legacyKeys) text = await getText(keys.legacyMeta(scope, id));
    const file = text === null ? null : parseMeta(text, id);
    return file && file.scope === scope ? file : null;
  }

  /** The data key of a live file: its keyed one, else (read compatibility) its legacy one. */
  async function dataKeyOf(scope: string, id: string): Promise<string> {
    const key = keys.data(scope, id);
    if (!legacyKeys) return key;
    try {
      await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return key;
    } catch (error) {
      if (isMissing(error)) return keys.legacyData(scope, id);
      throw error;
    }
  }

  async function liveMeta(scope: unknown, id: unknown): Promise<StoredFile | null> {
    if (typeof scope !== "string" || scope.length === 0 || !isId(id)) return null;
    const file = await readMeta(scope, id);
    return file && !isExpired(file, now()) ? file : null;
  }

  /**
   * Streams a put into the data object (see `S3Multipart`); on any failure nothing is left: the
   * multipart upload is aborted and the key deleted (a `PutObject` may have landed).
   */
  async function upload(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
    const plan = planPut(putOptions, now());
    await keyed();
    if (lifecycle) await applyLifecycle(client, bucket, keys.prefix, lifecycle);
    const key = keys.data(plan.scope, plan.id);
    const tag =
      lifecycle && plan.expiresAt !== undefined ? expiryTag(plan.expiresAt - plan.createdAt) : undefined;
    const sink = new S3Multipart({ client, bucket, key, partSize, queueSize, tag, error: s3Error });
    try {
      return storedFileOf(plan, await streamPut(source, plan, sink));
    } catch (error) {
      await sink.discard();
      await deleteKey(key).catch(() => {});
      throw error;
    }
  }

  /** Writes the metadata (and the catalog entry) that make an uploaded file visible. */
  async function commit(file: StoredFile): Promise<void> {
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: keys.meta(file.scope, file.id),
          Body: serializeMeta(file),
          ContentType: "application/json",
        }),
      );
      if (catalog) await catalog.add(file);
    } catch (error) {
      await Promise.allSettled([
        deleteKey(keys.meta(file.scope, file.id)),
        deleteKey(keys.data(file.scope, file.id)),
      ]);
      if (catalog) await catalog.remove(file.scope, file.id).catch(() => {});
      throw s3Error("commit the file", error);
    }
  }

  async function removeObjects(scope: string, id: string): Promise<void> {
    await keyed();
    // Metadata first: the file is invisible from here on, then the bytes go (in either layout).
    await deleteKey(keys.meta(scope, id));
    if (legacyKeys) await deleteKey(keys.legacyMeta(scope, id));
    await deleteKey(keys.data(scope, id));
    if (legacyKeys) await deleteKey(keys.legacyData(scope, id));
  }

  /** In-process deletes in flight, so concurrent deletes of one file report `true` once. */
  const deleting = new Map<string, Promise<boolean>>();

  async function deleteFile(scope: string, id: string): Promise<boolean> {
    if (catalog) {
      const file = await liveMeta(scope, id);
      if (!file) return false;
      const removed = await catalog.remove(scope, id);
      if (!removed) return false;
      await removeObjects(scope, id);
      return true;
    }
    const file = await liveMeta(scope, id);
    if (!file) return false;
    await removeObjects(scope, id);
    return true;
  }

  async function listPage(scope: string, listOptions: ListOptions): Promise<ListPage> {
    const limit = listLimit(listOptions.limit);
    const kind = listKind(listOptions.kind);
    let after = listOptions.cursor === undefined ? undefined : decodeCursor(listOptions.cursor);
    if (typeof scope !== "string" || scope.length === 0) return { files: [] };
    const at = now();
    const files: StoredFile[] = [];
    if (catalog) {
      for (;;) {
        const page = await catalog.page(scope, {
          limit: limit + 1 - files.length,
          ...(after ? { after } : {}),
          ...(kind ? { kind } : {}),
        });
        for (const file of page.files) {
          after = file.id;
          if (file.scope !== scope || isExpired(file, at)) continue;
          if (files.length === limit)
            return { files, nextCursor: encodeCursor((files.at(-1) as StoredFile).id) };
          files.push(file);
        }
        if (!page.more) return { files };
      }
    }
    await keyed();
    const folders = [keys.scopeFolder(scope), ...(legacyKeys ? [keys.legacyFolder(scope)] : [])];
    const entries = metaEntries(client, bucket, folders, after);
    for (;;) {
      const batch: MetaEntry[] = [];
      while (batch.length < Math.min(limit + 1 - files.length, 32)) {
        const next = await entries.next();
        if (next.done) break;
        batch.push(next.value);
      }
      if (batch.length === 0) return { files };
      const metas = await Promise.all(
        batch.map(async ({ id, key }) => {
          const text = await getText(key);
          const file = text === null ? null : parseMeta(text, id);
          return file && file.scope === scope ? file : null;
        }),
      );
      for (const file of metas) {
        if (!file || isExpired(file, at) || (kind && file.kind !== kind)) continue;
        if (files.length === limit)
          return { files, nextCursor: encodeCursor((files.at(-1) as StoredFile).id) };
        files.push(file);
      }
    }
  }

  async function sweep(): Promise<number> {
    const at = now();
    let removed = 0;
    try {
      await keyed();
      if (catalog) {
        for (;;) {
          const due = await catalog.expired(at, 500);
          if (due.length === 0) break;
          for (const { scope, id } of due) {
            const file = await catalog.remove(scope, id);
            await removeObjects(scope, id);
            if (file) removed++;
          }
        }
      }
      const leftovers: S3SweepContext = {
        client,
        bucket,
        keys,
        staleMs,
        catalog: catalog !== undefined,
        getText,
        deleteKey,
        removeObjects,
      };
      removed += await sweepObjects(leftovers, at);
      removed += await abortStaleUploads(leftovers, at);
    } catch (error) {
      throw s3Error("sweep", error);
    }
    return removed;
  }

  const timer = unrefInterval(sweepMs, sweep);
  const directUploads = s3DirectUploads({
    client,
    bucket,
    keys,
    ready: keyed,
    now,
    commit,
    tagFor: async (ttlMs) => {
      if (!lifecycle || ttlMs === undefined) return undefined;
      await applyLifecycle(client, bucket, keys.prefix, lifecycle);
      return expiryTag(ttlMs);
    },
    error: s3Error,
    isMissing,
  });

  const adoption: S3AdoptContext = {
    client,
    bucket,
    dataKey: (scope, id) => keys.data(scope, id),
    tagFor: async (plan) => {
      if (!lifecycle || plan.expiresAt === undefined) return undefined;
      await applyLifecycle(client, bucket, keys.prefix, lifecycle);
      return expiryTag(plan.expiresAt - plan.createdAt);
    },
    error: s3Error,
  };

  return {
    driver: "s3",
    client,
    bucket,
    prefix: keys.prefix,
    directUploads,

    /** The tus endpoint's staging: a multipart upload in this bucket, adopted by server-side copy. */
    tusStaging(state: StateStore): TusStaging {
      return s3TusStaging(this, state);
    },

    async put(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
      const file = await upload(source, putOptions);
      await commit(file);
      return file;
    },

    async stage(source: PutSource, putOptions: PutOptions): Promise<StagedFile> {
      const file = await upload(source, putOptions);
      return stagedFile(
        file,
        (staged) => commit(staged),
        (staged) => deleteKey(keys.data(staged.scope, staged.id)),
      );
    },

    /** An object of this bucket (a tus upload's staging object), copied into place server-side. */
    async adopt(source: AdoptSource, putOptions: PutOptions): Promise<StagedFile | null> {
      await keyed();
      const file = await adoptObject(adoption, source, planPut(putOptions, now()));
      if (!file) return null;
      return stagedFile(
        file,
        (staged) => commit(staged),
        (staged) => deleteKey(keys.data(staged.scope, staged.id)),
      );
    },

    async head(scope: string, id: string): Promise<StoredFile | null> {
      try {
        return await liveMeta(scope, id);
      } catch (error) {
        throw s3Error("read metadata", error);
      }
    },

    async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
      const file = await this.head(scope, id);
      if (!file) return null;
      const bounds = resolveRange(range, file.size);
      const get = async (key: string) =>
        (
          await client.send(
            new GetObjectCommand({
              Bucket: bucket,
              Key: key,
              ...(bounds ? { Range: `bytes=${bounds.start}-${bounds.end}` } : {}),
            }),
          )
        ).Body as Readable;
      try {
        await keyed();
        try {
          return await get(keys.data(scope, file.id));
        } catch (error) {
          // A file of the unkeyed layout (before `migrateKeys()`), else deleted meanwhile.
          if (!isMissing(error) || !legacyKeys) throw error;
          return await get(keys.legacyData(scope, file.id));
        }
      } catch (error) {
        if (isMissing(error)) return null; // deleted meanwhile
        throw s3Error("read the file", error);
      }
    },

    async list(scope: string, listOptions: ListOptions = {}): Promise<ListPage> {
      try {
        return await listPage(scope, listOptions);
      } catch (error) {
        throw s3Error("list files", error);
      }
    },

    delete(scope: string, id: string): Promise<boolean> {
      const key = `${scope}\u0000${id}`;
      const running = deleting.get(key);
      if (running) return running.then(() => false);
      const attempt = deleteFile(scope, id)
        .catch((error: unknown) => {
          throw s3Error("delete the file", error);
        })
        .finally(() => deleting.delete(key));
      deleting.set(key, attempt);
      return attempt;
    },

    sweep,

    async migrateKeys(): Promise<{ moved: number }> {
      await keyed();
      return migrateLegacyKeys(layout);
    },

    async presignedUrl(scope, id, presignOptions = {}): Promise<string | null> {
      if (presignSeconds === undefined) return null;
      const file = await this.head(scope, id);
      if (!file) return null;
      const seconds =
        presignOptions.expiresIn === undefined
          ? presignSeconds
          : durationToMs(presignOptions.expiresIn, "expiresIn") / 1000;
      try {
        await keyed();
        return await presignDownload(
          client,
          bucket,
          await dataKeyOf(scope, file.id),
          file,
          seconds,
          presignOptions.inline === true,
        );
      } catch (error) {
        throw s3Error("presign a download", error);
      }
    },

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
      if (ownsClient) client.destroy();
    },
  };
}
