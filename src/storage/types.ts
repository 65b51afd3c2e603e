import type { Readable } from "node:stream";
import type { Duration } from "../internal/duration.js";

/**
 * What a stored file is for. Registries and routes may filter on it.
 *
 * @example
 * ```ts
 * const kind: FileKind = "artifact";
 * const { files } = await store.list(scope, { kind });
 * ```
 */
export type FileKind = "upload" | "artifact" | "file";

/**
 * Metadata of one stored file. The `id` is random and is the only thing that ever touches a disk
 * path or an object key; `name` is the user-given name and lives only here.
 *
 * @example
 * ```ts
 * const file: StoredFile = await store.put(bytes, { scope: "s1", name: "report.pdf" });
 * console.log(file.id, file.mimeType, file.size); // 01jc… application/pdf 48213
 * ```
 */
export interface StoredFile {
  /** Random id (26 lower-case base32 characters, time-sortable). */
  readonly id: string;
  /** The isolation unit the file belongs to (session, chat, container, auth subject). */
  readonly scope: string;
  /** Sanitized display name, e.g. `report.docx`. May contain `/` for nested relative paths. */
  readonly name: string;
  /** Media type, e.g. `application/pdf`. */
  readonly mimeType: string;
  /** Size in bytes. */
  readonly size: number;
  /** Lower-case hex sha256 of the content. */
  readonly sha256: string;
  /** Creation time, milliseconds since the epoch. */
  readonly createdAt: number;
  /** Expiry time, milliseconds since the epoch; absent = kept until deleted. */
  readonly expiresAt?: number;
  /** What the file is for. */
  readonly kind: FileKind;
  /** Small string metadata set by the author (e.g. the tool that made an artifact). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * Where the bytes of a `put` come from: a Node stream, a web stream, any async iterable of chunks,
 * bytes in memory, or `{ path }` of a local file (streamed, never read whole).
 *
 * @example
 * ```ts
 * const source: PutSource = { path: "/tmp/out/report.pdf" }; // or a stream, or bytes
 * const file = await store.put(source, { scope, name: "report.pdf" });
 * ```
 */
export type PutSource =
  | Readable
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>
  | Uint8Array
  | { readonly path: string };

/**
 * Options of {@link FileStore.put}.
 *
 * @example
 * ```ts
 * const options: PutOptions = { scope, name: "chart.png", kind: "artifact", ttl: "24h", maxBytes: 10 * 1024 * 1024 };
 * const file = await store.put(stream, options);
 * ```
 */
export interface PutOptions {
  /** Scope the file belongs to. */
  scope: string;
  /** Display name; sanitized by the store (no control characters, no `..` segments). */
  name: string;
  /** Media type. @default derived from the name, else `application/octet-stream` */
  mimeType?: string;
  /**
   * Store the type the bytes show where the check can tell (magic numbers, a text test: see
   * `contentMediaType` in `media/content-type.ts`), not only the declared one: text declared as
   * `image/png` is stored as `text/plain`, a PNG declared `application/octet-stream` as `image/png`;
   * bytes the check cannot place keep the declared type. Read from the first 4 KiB as they stream
   * past (nothing more is held). The upload routes set it for every upload.
   * @default false (the declared type, else the name's, else the first bytes')
   */
  typeFromBytes?: boolean;
  /** @default "file" */
  kind?: FileKind;
  /** Time to live; after it the file is gone for readers and removed by `sweep()`. @default no expiry */
  ttl?: Duration;
  /** Size cap enforced while streaming; over it the put fails with `FILE_TOO_LARGE`. @default no cap */
  maxBytes?: number;
  /** Expected lower-case hex sha256; a mismatch fails with `DIGEST_MISMATCH` and stores nothing. */
  expectedSha256?: string;
  /** Expected size; a mismatch fails with `DIGEST_MISMATCH` and stores nothing. */
  expectedSize?: number;
  /** Aborts the put; nothing is stored. */
  signal?: AbortSignal;
  /** Small string metadata kept with the file. */
  metadata?: Record<string, string>;
}

/**
 * A put whose bytes are written but not yet visible; see {@link FileStore.stage}.
 *
 * @example
 * ```ts
 * const staged: StagedFile = await store.stage(body, { scope, name: "data.csv" });
 * if (staged.file.size > 0) await staged.commit();
 * else await staged.abort();
 * ```
 */
export interface StagedFile {
  /** The metadata the file will have once committed. */
  readonly file: StoredFile;
  /** Makes the file visible. */
  commit(): Promise<StoredFile>;
  /** Throws the bytes away. Safe to call more than once, and after a failed commit. */
  abort(): Promise<void>;
}

/**
 * A local file whose bytes the caller has already measured, for {@link FileStore.adopt}: a
 * resumable upload's staging file, hashed while its bytes arrived.
 *
 * @example
 * ```ts
 * const source: AdoptSource = { path: "/srv/tus/abc", size: 1_048_576, sha256: hex };
 * const staged = await store.adopt?.(source, { scope, name: "video.mp4", maxBytes });
 * ```
 */
export interface AdoptSource {
  /** The file. Left in place: the store links it (same filesystem) and never writes to it. */
  readonly path?: string;
  /**
   * Or an object in an S3 bucket: an `s3Store` on the same client and bucket copies it into place
   * server-side and never writes to it.
   */
  readonly object?: AdoptObject;
  /**
   * Or objects whose bytes, one after another, are the file (the partial uploads of a parallel tus
   * upload): an `s3Store` on the same client and bucket assembles them server-side (a multipart
   * copy; every object but the last at least 5 MiB) and never writes to them. A store that does not
   * know this field finds neither `path` nor `object`, and returns `null`.
   */
  readonly objects?: readonly AdoptObjectPart[];
  /** Its size in bytes (checked against the file). */
  readonly size: number;
  /** Lower-case hex sha256 of its bytes, as the caller measured them (the store trusts it). */
  readonly sha256: string;
}

/**
 * An object whose bytes a store may copy into place server-side (see {@link AdoptSource}).
 *
 * @example
 * ```ts
 * const object: AdoptObject = { client: store.client, bucket: store.bucket, key: "files-tus/abc" };
 * ```
 */
export interface AdoptObject {
  /** The `S3Client` that reaches it: a store adopts it only when it sends through this very client. */
  readonly client: unknown;
  readonly bucket: string;
  readonly key: string;
}

/**
 * One of the objects that together make an adopted file (see {@link AdoptSource.objects}).
 *
 * @example
 * ```ts
 * const part: AdoptObjectPart = { object: { client, bucket, key: "files-tus/abc" }, size: 8_388_608 };
 * ```
 */
export interface AdoptObjectPart {
  readonly object: AdoptObject;
  /** Its size in bytes: all of it belongs to the file (checked against the object). */
  readonly size: number;
}

/**
 * An inclusive byte range, as in HTTP `Range: bytes=start-end`.
 *
 * @example
 * ```ts
 * const range: ByteRange = { start: 0, end: 1023 }; // the first KiB
 * const stream = await store.read(scope, id, range);
 * ```
 */
export interface ByteRange {
  /** First byte, from 0. */
  start: number;
  /** Last byte, inclusive. @default the last byte of the file */
  end?: number;
}

/**
 * Options of {@link FileStore.list}.
 *
 * @example
 * ```ts
 * const options: ListOptions = { kind: "upload", limit: 20 };
 * const { files, nextCursor } = await store.list(scope, options);
 * ```
 */
export interface ListOptions {
  /** Opaque cursor from a previous page. An invalid cursor fails with `INVALID_CURSOR`. */
  cursor?: string;
  /** Page size. @default 100 */
  limit?: number;
  /** Only files of this kind. */
  kind?: FileKind;
}

/**
 * One page of {@link FileStore.list}.
 *
 * @example
 * ```ts
 * let cursor: string | undefined;
 * do {
 *   const page: ListPage = await store.list(scope, cursor ? { cursor } : {});
 *   for (const file of page.files) console.log(file.name);
 *   cursor = page.nextCursor;
 * } while (cursor);
 * ```
 */
export interface ListPage {
  /** The files of this page, oldest first (ordered by id). */
  files: StoredFile[];
  /** Cursor of the next page; absent on the last page. */
  nextCursor?: string;
}

/**
 * Per-scope limits a driver enforces when a file is committed (`put()` or `StagedFile.commit()`):
 * the live (not expired) files of one scope may hold at most `maxBytesPerScope` bytes and
 * `maxFilesPerScope` files. A commit that would go over fails with `QUOTA_EXCEEDED` and stores
 * nothing; two concurrent commits in one scope cannot both squeeze under the limit. Deleting a file,
 * or its expiry, frees its share at once.
 *
 * @example
 * ```ts
 * const quota: ScopeQuota = { maxBytesPerScope: 500 * 1024 * 1024, maxFilesPerScope: 1000 };
 * const store = fsStore("./data/files", { quota });
 * ```
 */
export interface ScopeQuota {
  /** Most bytes the live files of one scope may hold. @default no limit */
  maxBytesPerScope?: number;
  /** Most live files one scope may hold. @default no limit */
  maxFilesPerScope?: number;
}

/**
 * What the live (committed, not expired) files of one scope hold; see {@link FileStore.usage}.
 *
 * @example
 * ```ts
 * const { bytes, files }: ScopeUsage = await store.usage!(scope);
 * console.log(`${files} files, ${bytes} bytes`);
 * ```
 */
export interface ScopeUsage {
  /** Sum of the sizes of the scope's live files. */
  bytes: number;
  /** Number of the scope's live files. */
  files: number;
}

/**
 * What {@link DirectUploads.presignUpload} signs: the staging object of one upload and what the
 * bytes may be. A declared size is pinned (the store refuses another length), else the size cap.
 *
 * @example
 * ```ts
 * const target: PresignUploadOptions = { scope, stagingId: newId(), expiresIn: 600, size: 5, mimeType: "text/plain" };
 * ```
 */
export interface PresignUploadOptions {
  /** Scope the staged object belongs to. */
  scope: string;
  /** Random id of the staging object (an id as `newId()` makes). */
  stagingId: string;
  /** Lifetime of the upload target, in seconds. */
  expiresIn: number;
  /** Time the target is signed at (its lifetime counts from here). @default now */
  signingDate?: Date;
  /** Exact size in bytes. */
  size?: number;
  /** Largest size in bytes, when no exact `size` is declared. @default 5 GiB */
  maxBytes?: number;
  /** Media type of the staged object. @default "application/octet-stream" */
  mimeType?: string;
}

/**
 * Where and how a client uploads a direct upload's bytes: a `POST` of a multipart form carrying
 * `fields` (each exactly as given) and then the file as `fileField`.
 *
 * @example
 * ```ts
 * const form = new FormData();
 * for (const [name, value] of Object.entries(target.fields)) form.append(name, value);
 * form.append(target.fileField, new Blob([bytes]));
 * await fetch(target.url, { method: "POST", body: form });
 * ```
 */
export interface PresignedUpload {
  method: "POST";
  url: string;
  fields: Record<string, string>;
  fileField: string;
}

/**
 * Uploads whose bytes go straight from the client to the storage backend (a presigned S3 `POST`
 * whose policy names every form field), never through the server; the server only verifies and
 * commits them. `s3Store()` has it.
 *
 * @example
 * ```ts
 * const target = await store.directUploads!.presignUpload({ scope, stagingId, expiresIn: 600 });
 * // … the client posts the form (see PresignedUpload) …
 * const file = await store.directUploads!.commit(scope, stagingId, { scope, name: "a.txt", maxBytes: 1 << 20 });
 * ```
 */
export interface DirectUploads {
  /** A presigned upload of the staging object. */
  presignUpload(options: PresignUploadOptions): Promise<PresignedUpload>;
  /**
   * Verifies the staged object against `options` (`maxBytes`, `expectedSize`, `expectedSha256`, with
   * the errors of `put`) and makes it a stored file under a new id: the bytes placed are the bytes
   * verified, and a staged object carrying an ACL grant or metadata the server did not set is
   * refused. The staging object is removed whether the commit succeeds or fails, so a refused
   * upload leaves nothing. `null` when nothing was uploaded to the staging object (yet).
   */
  commit(scope: string, stagingId: string, options: PutOptions): Promise<StoredFile | null>;
  /** Removes the staging object; `true` when there was one. */
  discard(scope: string, stagingId: string): Promise<boolean>;
}

/**
 * Bytes and metadata of stored files, per scope. Drivers are plain objects; `null` means missing.
 * A lookup in another scope behaves exactly like a missing file.
 *
 * Every driver passes the shared driver test suite (`mcp-file-bridge/testing`, src/testing/).
 *
 * @example
 * ```ts
 * const store: FileStore = fsStore("./data"); // or memoryStore()
 * const file = await store.put({ path: "./report.pdf" }, { scope: "s1", name: "report.pdf" });
 * const stream = await store.read("s1", file.id); // null when missing
 * ```
 */
export interface FileStore {
  /** Driver name, for logs and errors (e.g. `"memory"`, `"fs"`). */
  readonly driver: string;
  /**
   * `true` when the store checks a declared `expectedSha256` and `expectedSize` on a web
   * `ReadableStream` source itself, without reading the bytes in JavaScript (`r2Store` on workerd:
   * R2 verifies the digest on its put), and takes a web stream with only `expectedSize` faster
   * than a Node stream (`r2Store`: one put of that length, hashed on the way). The routes then hand
   * such a store the request's web body whenever the raw body declares its `Content-Length`.
   */
  readonly nativeDigest?: boolean;
  /**
   * Streams `source` into the store, computing sha256 and enforcing `maxBytes` while streaming. On
   * any failure (cap, digest, abort, source error) nothing is stored and no partial file is left.
   */
  put(source: PutSource, options: PutOptions): Promise<StoredFile>;
  /**
   * Like `put`, but the file stays invisible until `commit()`; used for all-or-nothing batches.
   */
  stage(source: PutSource, options: PutOptions): Promise<StagedFile>;
  /** Metadata of a file, or `null` if missing, expired or in another scope. */
  head(scope: string, id: string): Promise<StoredFile | null>;
  /**
   * A read stream of the file's bytes (optionally a range), or `null` if missing. A range outside
   * the file fails with `RANGE_NOT_SATISFIABLE`.
   */
  read(scope: string, id: string, range?: ByteRange): Promise<Readable | null>;
  /** One page of a scope's files, ordered by id (creation order). */
  list(scope: string, options?: ListOptions): Promise<ListPage>;
  /** Deletes a file; `false` if it was missing. */
  delete(scope: string, id: string): Promise<boolean>;
  /** Removes expired files (and leftovers of interrupted puts); returns how many files it removed. */
  sweep(): Promise<number>;
  /**
   * The per-scope limits this driver enforces at commit, for drivers that support quotas
   * (`memoryStore`, `fsStore`); absent when the driver enforces none.
   */
  readonly quota?: Readonly<ScopeQuota>;
  /** What a scope's live files hold now, for drivers that track it (`memoryStore`, `fsStore`). */
  usage?(scope: string): Promise<ScopeUsage>;
  /**
   * A local path holding the file's bytes, for drivers that have one (`fsStore`). Callers must not
   * write to it.
   */
  localPath?(scope: string, id: string): Promise<string | null>;
  /**
   * Like `stage`, for bytes already in a local file or an object the caller measured (size and
   * sha256): the store takes them over without reading them again (`fsStore` hard-links the file
   * into place on the same filesystem; `s3Store` copies an object of its own bucket server-side) and
   * applies every other check of `stage` (size cap, declared size and sha256, scope quota at
   * commit). Resolves `null` when it cannot take this source over (another filesystem or bucket,
   * or too small to be worth it): the caller then streams the bytes into `stage`. Optional.
   */
  adopt?(source: AdoptSource, options: PutOptions): Promise<StagedFile | null>;
  /**
   * Presigned uploads straight to the backend, for drivers that have them (`s3Store`): the files
   * extension's `direct` option hands them out.
   */
  readonly directUploads?: DirectUploads;
  /** Releases resources (timers, handles). */
  close?(): Promise<void>;
}

/**
 * Options of {@link StateStore.set}.
 *
 * @example
 * ```ts
 * await state.set("ticket:abc", { files: [] }, { ttl: "10m" });
 * ```
 */
export interface StateSetOptions {
  /** Time to live. @default no expiry */
  ttl?: Duration;
}

/**
 * A small key/value store with TTL and set-if-absent, for single-use nonces and upload tickets.
 * Values are JSON-serializable. Drivers: `memoryState()` (later `redisState()`).
 *
 * @example
 * ```ts
 * const state: StateStore = memoryState();
 * await state.setIfAbsent("jti:abc", 1, { ttl: "5m" }); // true the first time, then false
 * await state.get<number>("jti:abc"); // 1
 * ```
 */
export interface StateStore {
  /** Driver name. */
  readonly driver: string;
  /** The value, or `null` if missing or expired. */
  get<T = unknown>(key: string): Promise<T | null>;
  /** Sets a value, replacing any old one. */
  set(key: string, value: unknown, options?: StateSetOptions): Promise<void>;
  /** Sets a value only if the key is absent (or expired); `true` if it was set. Atomic. */
  setIfAbsent(key: string, value: unknown, options?: StateSetOptions): Promise<boolean>;
  /** Deletes a key; `true` if it existed. */
  delete(key: string): Promise<boolean>;
  /** Releases resources. */
  close?(): Promise<void>;
}

/**
 * One change to a store, as carried by a {@link ChangeFeed} between replicas: a file became visible
 * (`added`) or went away (`removed`).
 *
 * @example
 * ```ts
 * const change: StoreChange = { type: "added", scope: file.scope, file };
 * await feed.publish(change);
 * ```
 */
export type StoreChange =
  | { readonly type: "added"; readonly scope: string; readonly file: StoredFile }
  | { readonly type: "removed"; readonly scope: string; readonly id: string };

/**
 * Carries {@link StoreChange}s between the replicas of one deployment, so a file stored on replica A
 * reaches the resource lists (and `list_changed` / `updated` notifications) of sessions on replica B.
 * A feed never hands an instance its own changes back: each replica already knows what it did.
 * Delivery is best effort (at most once): a feed that lost its connection and got it back tells its
 * `onResync` listeners, and the registry then reloads the scopes it holds from the store.
 * Drivers: `redisChangeFeed()` from `mcp-file-bridge/redis`.
 *
 * @example
 * ```ts
 * const feed: ChangeFeed = redisChangeFeed({ url: "redis://127.0.0.1:6379" });
 * const unsubscribe = feed.subscribe((change) => console.log(change.type, change.scope));
 * await feed.publish({ type: "removed", scope, id });
 * unsubscribe();
 * ```
 */
export interface ChangeFeed {
  /** Driver name. */
  readonly driver: string;
  /** Sends a change to every other instance subscribed to this feed. */
  publish(change: StoreChange): Promise<void>;
  /** Calls `listener` for each change another instance publishes; returns the unsubscribe function. */
  subscribe(listener: (change: StoreChange) => void): () => void;
  /**
   * Calls `listener` each time this instance may have missed changes (it was cut off from the
   * feed and is listening again): what it caches must be reloaded from the store. Returns the
   * unsubscribe function. Optional: a feed without it is assumed never to miss changes.
   */
  onResync?(listener: () => void): () => void;
  /** Resolves once the feed is listening (changes published after this are delivered). */
  ready?(): Promise<void>;
  /** Releases resources (connections). */
  close?(): Promise<void>;
}

/**
 * Options of {@link FileCatalog.page}.
 *
 * @example
 * ```ts
 * const options: CatalogPageOptions = { after: lastId, limit: 100, kind: "upload" };
 * ```
 */
export interface CatalogPageOptions {
  /** Only ids greater than this one. */
  after?: string;
  /** Most entries returned. */
  limit: number;
  /** Only entries of this kind. */
  kind?: FileKind;
}

/**
 * A shared index of stored files' metadata, per scope, ordered by id: lets a store whose backend
 * lists slowly (S3) answer `head` and `list` fast and the same on every replica. Entries are raw:
 * expired ones are returned as they are and filtered by the store, which owns the clock.
 * Drivers: `redisCatalog()` from `mcp-file-bridge/redis`.
 *
 * @example
 * ```ts
 * const store = s3Store({ bucket: "files", catalog: redisCatalog({ url: process.env.REDIS_URL }) });
 * ```
 */
export interface FileCatalog {
  /** Driver name. */
  readonly driver: string;
  /** Adds (or replaces) a file's entry. */
  add(file: StoredFile): Promise<void>;
  /** A file's entry, or `null`. */
  get(scope: string, id: string): Promise<StoredFile | null>;
  /** Removes an entry atomically: exactly one of concurrent callers gets the entry, the rest `null`. */
  remove(scope: string, id: string): Promise<StoredFile | null>;
  /** Entries of a scope in id order after `after`; `more` tells whether ids remain past the page. */
  page(scope: string, options: CatalogPageOptions): Promise<{ files: StoredFile[]; more: boolean }>;
  /** Up to `limit` entries (any scope) whose `expiresAt` is at or before `at`. */
  expired(at: number, limit: number): Promise<Array<{ scope: string; id: string }>>;
  /** Releases resources. */
  close?(): Promise<void>;
}
