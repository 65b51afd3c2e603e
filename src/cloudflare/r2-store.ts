/**
 * `r2Store`: a `FileStore` on an R2 bucket binding, for Workers. A file is two objects: its bytes
 * (`<prefix><scope key>/d/<id>`) and its metadata record (`<prefix><scope key>/m/<id>`), written
 * last so that it is what makes the file visible. The scope key is an HMAC of the scope, so object
 * keys never show who a file belongs to. The record also rides in the metadata object's custom
 * metadata when it is small, so a list page is one `list` call instead of one `get` per file.
 */
import type { Readable } from "node:stream";
import { Readable as NodeReadable } from "node:stream";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { isId } from "../internal/ids.js";
import { optionCheck } from "../internal/options.js";
import { resolveRange } from "../storage/kit/byte-range.js";
import { decodeCursor, encodeCursor, isExpired, listKind, listLimit } from "../storage/kit/list-page.js";
import { parseMetadataRecord, serializeMetadataRecord } from "../storage/kit/metadata-record.js";
import { measureBytes } from "../storage/kit/put-meter.js";
import { streamPut } from "../storage/kit/put-pipeline.js";
import { planPut, storedFileOf } from "../storage/kit/put-plan.js";
import { stagedFile } from "../storage/kit/staged-file.js";
import type {
  ByteRange,
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
import type { R2BucketBinding, R2ObjectLike } from "./bindings.js";
import { hashedPut, hashedPutFits } from "./r2-hashed-put.js";
import { nativeDigestPut, nativePutAvailable, nativePutFits } from "./r2-native-put.js";
import { R2PartSink } from "./r2-part-sink.js";
import { r2TusStaging } from "./r2-tus-staging.js";

const check = optionCheck("r2Store");
const MiB = 1024 * 1024;
/** R2's smallest part (every part of a multipart upload but the last). */
const MIN_PART_SIZE = 5 * MiB;
/** R2's largest part. */
const MAX_PART_SIZE = 5 * 1024 * MiB;
/** Largest record kept in custom metadata (R2 allows 2 KiB of metadata per object). */
const INLINE_RECORD_BYTES = 1536;
/** Staged bytes older than this with no record are removed by `sweep()`. */
const STALE_STAGING_MS = 24 * 3_600_000;

/**
 * Options of {@link r2Store}.
 *
 * @example
 * ```ts
 * const options: R2StoreOptions = { bucket: env.FILES, prefix: "mcp/", keySecret: env.SCOPE_KEY_SECRET };
 * ```
 */
export interface R2StoreOptions {
  /** The R2 bucket binding (`env.FILES`). */
  bucket: R2BucketBinding;
  /** Prefix of every key this store writes; empty or ending in `/`. @default "files/" */
  prefix?: string;
  /**
   * Secret the scope keys are derived from (at least 32 characters). Without it the store makes a
   * random one once and keeps it in the bucket at `<prefix>.scope-key` (written with a
   * create-only condition, so concurrent first uses agree on one).
   * @default a random secret kept in the bucket
   */
  keySecret?: string;
  /**
   * Size of every multipart part but the last, in bytes: from 5 MiB (R2's minimum) to 5 GiB.
   * R2 requires equal parts, so a put holds one part buffer (times `queueSize`) in memory; keep
   * `partSize × (queueSize + 1)` well under the isolate's 128 MB.
   * @default 8 MiB
   */
  partSize?: number;
  /** Parts uploaded at once. @default 2 */
  queueSize?: number;
  /** Clock, in milliseconds since the epoch. @default Date.now */
  now?: () => number;
}

/**
 * A `FileStore` on an R2 bucket binding. Puts stream: bytes go up in equal parts of `partSize`
 * (one `put` when the file fits in one part), hashed and capped while they arrive; reads are
 * ranged `get`s. A put of a web stream (`request.body`) with both `expectedSize` and `expectedSha256`
 * is one native `put` that R2 verifies (`{ sha256 }`): the bytes never enter JavaScript. With only
 * `expectedSize` (up to 5 GiB less 5 MiB), such a stream is one `put` of that length, read in 1 MiB
 * chunks and hashed on the way (on workerd; elsewhere it goes in parts). Runs on
 * Workers with the `nodejs_compat` flag (the put pipeline uses `node:stream`).
 *
 * @example
 * ```ts
 * import { r2Store } from "mcp-file-bridge/cloudflare";
 *
 * export default {
 *   async fetch(request: Request, env: Env) {
 *     const store = r2Store({ bucket: env.FILES, keySecret: env.SCOPE_KEY_SECRET });
 *     const file = await store.put(request.body!, { scope: "user-1", name: "a.txt", maxBytes: 50 << 20 });
 *     return Response.json(file);
 *   },
 * };
 * ```
 */
export function r2Store(options: R2StoreOptions): FileStore & TusStagingSource {
  check.object(options);
  const bucket = check.implementing<R2BucketBinding>(
    options.bucket,
    "bucket",
    ["head", "get", "put", "delete", "list", "createMultipartUpload"],
    "an R2 bucket binding",
  );
  const prefix = options.prefix ?? "files/";
  check.require(
    typeof prefix === "string" && (prefix === "" || prefix.endsWith("/")) && prefix.length <= 256,
    "prefix",
    'must be empty or end with "/"',
  );
  check.require(
    options.keySecret === undefined ||
      (typeof options.keySecret === "string" && options.keySecret.length >= 32),
    "keySecret",
    "must be a string of at least 32 characters",
  );
  const partSize = check.integer(options.partSize, "partSize", 8 * MiB, {
    min: MIN_PART_SIZE,
    max: MAX_PART_SIZE,
  });
  const queueSize = check.integer(options.queueSize, "queueSize", 2, { min: 1, max: 16 });
  const now = check.optionalFunction(options.now, "now") ?? Date.now;

  const storageError = (action: string, cause: unknown): FileBridgeError =>
    isFileBridgeError(cause)
      ? cause
      : new FileBridgeError("STORAGE_ERROR", `r2Store: could not ${action}`, { cause });

  let hmacKey: Promise<CryptoKey> | undefined;
  /** The HMAC key of the scope keys: from `keySecret`, else the bucket's secret (made once). */
  function scopeHmac(): Promise<CryptoKey> {
    hmacKey ??= loadSecret().then(
      (secret) =>
        crypto.subtle.importKey(
          "raw",
          new TextEncoder().encode(secret),
          { name: "HMAC", hash: "SHA-256" },
          false,
          ["sign"],
        ),
      (error: unknown) => {
        hmacKey = undefined;
        throw storageError("load the scope-key secret", error);
      },
    );
    return hmacKey;
  }

  async function loadSecret(): Promise<string> {
    if (options.keySecret !== undefined) return options.keySecret;
    const key = `${prefix}.scope-key`;
    const existing = await bucket.get(key);
    if (existing) return existing.text();
    const random = new Uint8Array(32);
    crypto.getRandomValues(random);
    const secret = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
    // Create-only: when two isolates race, one write lands and both read the same secret back.
    await bucket.put(key, secret, { onlyIf: { etagDoesNotMatch: "*" } });
    const stored = await bucket.get(key);
    if (!stored) throw new Error("the scope-key secret vanished");
    return stored.text();
  }

  const folders = new Map<string, Promise<string>>();
  /** `<prefix><hmac(scope)>/`, cached per scope. */
  function folderOf(scope: string): Promise<string> {
    let folder = folders.get(scope);
    if (!folder) {
      folder = scopeHmac().then(async (key) => {
        const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(scope));
        const hex = Array.from(new Uint8Array(mac).subarray(0, 16), (b) => b.toString(16).padStart(2, "0"));
        return `${prefix}k${hex.join("")}/`;
      });
      folder.catch(() => folders.delete(scope));
      if (folders.size > 10_000) folders.clear();
      folders.set(scope, folder);
    }
    return folder;
  }

  const dataKey = async (scope: string, id: string) => `${await folderOf(scope)}d/${id}`;
  const metaKey = async (scope: string, id: string) => `${await folderOf(scope)}m/${id}`;

  /** Writes the bytes of a put under the data key; nothing is left after a failure. */
  async function upload(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
    const plan = planPut(putOptions, now());
    const key = await dataKey(plan.scope, plan.id);
    if (source instanceof Uint8Array) {
      const measure = measureBytes(source, plan);
      try {
        await bucket.put(key, source.slice());
      } catch (cause) {
        throw storageError("store the file", cause);
      }
      return storedFileOf(plan, measure);
    }
    // Size and sha-256 declared, bytes as a web stream (a Worker's request body): R2 verifies the
    // digest itself and the body is never read in JavaScript.
    if (nativePutFits(source, plan)) {
      return storedFileOf(plan, await nativeDigestPut(bucket, key, source, plan, storageError));
    }
    // Size declared, no digest: one put of that length, the bytes read in large chunks and hashed.
    if (hashedPutFits(source, plan)) {
      return storedFileOf(plan, await hashedPut(bucket, key, source, plan, storageError));
    }
    const sink = new R2PartSink({ bucket, key, partSize, queueSize, error: storageError });
    try {
      return storedFileOf(plan, await streamPut(source, plan, sink));
    } catch (error) {
      await sink.discard();
      throw error;
    }
  }

  /** Writes the record that makes an uploaded file visible. */
  async function commit(file: StoredFile): Promise<void> {
    const record = serializeMetadataRecord(file);
    const inline = new TextEncoder().encode(record).byteLength <= INLINE_RECORD_BYTES;
    try {
      await bucket.put(await metaKey(file.scope, file.id), record, {
        httpMetadata: { contentType: "application/json" },
        ...(inline ? { customMetadata: { r: record } } : {}),
      });
    } catch (cause) {
      await bucket
        .delete([await metaKey(file.scope, file.id), await dataKey(file.scope, file.id)])
        .catch(() => {});
      throw storageError("commit the file", cause);
    }
  }

  async function discard(file: StoredFile): Promise<void> {
    await bucket.delete(await dataKey(file.scope, file.id));
  }

  /** A file's record, expired or not; `null` when missing or not this scope's. */
  async function readRecord(scope: string, id: string): Promise<StoredFile | null> {
    const object = await bucket.get(await metaKey(scope, id));
    if (!object) return null;
    const file = parseMetadataRecord(await object.text(), id);
    return file && file.scope === scope ? file : null;
  }

  async function liveRecord(scope: unknown, id: unknown): Promise<StoredFile | null> {
    if (typeof scope !== "string" || scope.length === 0 || scope.length > 256 || !isId(id)) return null;
    try {
      const file = await readRecord(scope, id);
      return file && !isExpired(file, now()) ? file : null;
    } catch (cause) {
      throw storageError("read metadata", cause);
    }
  }

  async function removeObjects(scope: string, id: string): Promise<void> {
    // The record first: the file is invisible from here on, then its bytes go.
    await bucket.delete(await metaKey(scope, id));
    await bucket.delete(await dataKey(scope, id));
  }

  /** Records of listed metadata objects: from custom metadata, else one `get` each. */
  async function recordsOf(objects: readonly R2ObjectLike[], folder: string, scope: string) {
    return Promise.all(
      objects.map(async (object) => {
        const id = object.key.slice(folder.length + 2);
        if (!isId(id)) return null;
        const inline = object.customMetadata?.r;
        const file = inline !== undefined ? parseMetadataRecord(inline, id) : await readRecord(scope, id);
        return file && file.scope === scope ? file : null;
      }),
    );
  }

  async function listPage(scope: string, listOptions: ListOptions): Promise<ListPage> {
    const limit = listLimit(listOptions.limit);
    const kind = listKind(listOptions.kind);
    const after = listOptions.cursor === undefined ? undefined : decodeCursor(listOptions.cursor);
    if (typeof scope !== "string" || scope.length === 0 || scope.length > 256) return { files: [] };
    const folder = await folderOf(scope);
    const at = now();
    const files: StoredFile[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await bucket.list({
        prefix: `${folder}m/`,
        limit: Math.min(1000, limit + 1 - files.length + 16),
        include: ["customMetadata"],
        ...(cursor ? { cursor } : after ? { startAfter: `${folder}m/${after}` } : {}),
      });
      for (const file of await recordsOf(page.objects, folder, scope)) {
        if (!file || isExpired(file, at) || (kind && file.kind !== kind)) continue;
        if (files.length === limit)
          return { files, nextCursor: encodeCursor((files.at(-1) as StoredFile).id) };
        files.push(file);
      }
      if (!page.truncated || !page.cursor) return { files };
      cursor = page.cursor;
    }
  }

  /** Removes expired files and staged bytes older than a day that never got a record. */
  async function sweep(): Promise<number> {
    const at = now();
    let removed = 0;
    let cursor: string | undefined;
    try {
      do {
        const page = await bucket.list({
          prefix,
          include: ["customMetadata"],
          ...(cursor ? { cursor } : {}),
        });
        for (const object of page.objects) {
          const match = /^k[0-9a-f]{32}\/(d|m)\/([0-9a-hjkmnp-tv-z]{26})$/.exec(
            object.key.slice(prefix.length),
          );
          if (!match) continue;
          const [, type, id] = match as unknown as [string, "d" | "m", string];
          const folder = object.key.slice(0, object.key.length - id.length - 2);
          if (type === "m") {
            const inline = object.customMetadata?.r;
            const text = inline ?? (await (await bucket.get(object.key))?.text());
            const file = text === undefined ? null : parseMetadataRecord(text, id);
            if (file && isExpired(file, at)) {
              await bucket.delete([object.key, `${folder}d/${id}`]);
              removed++;
            }
          } else if (object.uploaded.getTime() < Date.now() - STALE_STAGING_MS) {
            if (!(await bucket.head(`${folder}m/${id}`))) await bucket.delete(object.key);
          }
        }
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
    } catch (cause) {
      throw storageError("sweep", cause);
    }
    return removed;
  }

  /** In-isolate deletes in flight, so concurrent deletes of one file report `true` once. */
  const deleting = new Map<string, Promise<boolean>>();

  return {
    driver: "r2",
    // Only on workerd (R2 checks a declared digest itself; a sized body goes as one hashed put);
    // elsewhere the bytes pass through the meter.
    nativeDigest: nativePutAvailable(),

    /**
     * The tus endpoint's staging: a multipart upload per upload in this bucket, under
     * `<prefix>`-tus/ (`files-tus/` by default), its part list in `state`.
     */
    tusStaging(state: StateStore): TusStaging {
      const stagingPrefix = prefix === "" ? "mcp-file-bridge-tus/" : `${prefix.slice(0, -1)}-tus/`;
      return r2TusStaging({ bucket, state, prefix: stagingPrefix, partSize: Math.min(partSize, 100 * MiB) });
    },

    async put(source: PutSource, putOptions: PutOptions): Promise<StoredFile> {
      const file = await upload(source, putOptions);
      await commit(file);
      return file;
    },

    async stage(source: PutSource, putOptions: PutOptions): Promise<StagedFile> {
      const file = await upload(source, putOptions);
      return stagedFile(file, commit, discard);
    },

    head: (scope: string, id: string) => liveRecord(scope, id),

    async read(scope: string, id: string, range?: ByteRange): Promise<Readable | null> {
      const file = await liveRecord(scope, id);
      if (!file) return null;
      const bounds = resolveRange(range, file.size);
      if (file.size === 0) return NodeReadable.from([]);
      try {
        const object = await bucket.get(
          await dataKey(scope, file.id),
          bounds ? { range: { offset: bounds.start, length: bounds.end - bounds.start + 1 } } : {},
        );
        if (!object) return null; // deleted meanwhile
        return NodeReadable.fromWeb(object.body as Parameters<typeof NodeReadable.fromWeb>[0]);
      } catch (cause) {
        throw storageError("read the file", cause);
      }
    },

    async list(scope: string, listOptions: ListOptions = {}): Promise<ListPage> {
      try {
        return await listPage(scope, listOptions);
      } catch (error) {
        throw storageError("list files", error);
      }
    },

    delete(scope: string, id: string): Promise<boolean> {
      const key = `${scope}\u0000${id}`;
      const running = deleting.get(key);
      if (running) return running.then(() => false);
      const attempt = (async () => {
        const file = await liveRecord(scope, id);
        if (!file) return false;
        await removeObjects(scope, id);
        return true;
      })()
        .catch((error: unknown) => {
          throw storageError("delete the file", error);
        })
        .finally(() => deleting.delete(key));
      deleting.set(key, attempt);
      return attempt;
    },

    sweep,
  };
}
