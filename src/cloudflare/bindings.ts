/**
 * The parts of the Workers runtime's binding types this entry uses, written structurally so that
 * the entry's `.d.ts` needs no `@cloudflare/workers-types`: a user with those types passes their
 * `R2Bucket` and `DurableObjectNamespace` as they are (test/cloudflare/bindings-types.test.ts checks
 * that they are assignable), and a user without them still type-checks.
 */

/**
 * An R2 object's metadata, as `R2Bucket.head`, `put` and `list` return it.
 *
 * @example
 * ```ts
 * const object: R2ObjectLike | null = await env.FILES.head("files/m/…");
 * ```
 */
export interface R2ObjectLike {
  readonly key: string;
  readonly size: number;
  readonly uploaded: Date;
  readonly customMetadata?: Record<string, string> | undefined;
}

/**
 * An R2 object with its body, as `R2Bucket.get` returns it.
 *
 * @example
 * ```ts
 * const object = await env.FILES.get(key);
 * const text = object ? await object.text() : null;
 * ```
 */
export interface R2ObjectBodyLike extends R2ObjectLike {
  /** A web `ReadableStream` (typed loosely: the Workers types' stream is not the DOM's). */
  readonly body: unknown;
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * A multipart upload of an R2 bucket (`R2Bucket.createMultipartUpload`).
 *
 * @example
 * ```ts
 * const upload = await env.FILES.createMultipartUpload(key);
 * const part = await upload.uploadPart(1, bytes);
 * await upload.complete([part]);
 * ```
 */
export interface R2MultipartUploadLike {
  /** The upload's id, for resuming it in another request (`resumeMultipartUpload`). */
  readonly uploadId: string;
  uploadPart(partNumber: number, value: ArrayBuffer | ArrayBufferView): Promise<R2UploadedPartLike>;
  abort(): Promise<void>;
  complete(parts: R2UploadedPartLike[]): Promise<unknown>;
}

/**
 * One uploaded part of an {@link R2MultipartUploadLike}.
 *
 * @example
 * ```ts
 * const part: R2UploadedPartLike = await upload.uploadPart(1, bytes);
 * ```
 */
export interface R2UploadedPartLike {
  partNumber: number;
  etag: string;
}

/**
 * A page of `R2Bucket.list`.
 *
 * @example
 * ```ts
 * const page: R2ObjectsLike = await env.FILES.list({ prefix, include: ["customMetadata"] });
 * ```
 */
export interface R2ObjectsLike {
  readonly objects: readonly R2ObjectLike[];
  readonly truncated: boolean;
  readonly cursor?: string;
}

/**
 * The R2 bucket binding (`env.MY_BUCKET`): what `r2Store` calls on it.
 *
 * @example
 * ```ts
 * // wrangler.jsonc: "r2_buckets": [{ "binding": "FILES", "bucket_name": "mcp-files" }]
 * const store = r2Store({ bucket: env.FILES });
 * ```
 */
export interface R2BucketBinding {
  head(key: string): Promise<R2ObjectLike | null>;
  get(
    key: string,
    options?: { range?: { offset: number; length?: number } },
  ): Promise<R2ObjectBodyLike | null>;
  put(
    key: string,
    /** Bytes, text, or a web `ReadableStream` of known length (typed loosely: the Workers types' stream is not the DOM's). */
    value: unknown,
    options?: {
      customMetadata?: Record<string, string>;
      httpMetadata?: { contentType?: string };
      onlyIf?: { etagDoesNotMatch?: string };
      /** Hex sha-256 R2 checks the bytes against; a mismatch fails the put and stores nothing. */
      sha256?: string;
    },
  ): Promise<R2ObjectLike | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: {
    prefix?: string;
    cursor?: string;
    startAfter?: string;
    limit?: number;
    include?: ("httpMetadata" | "customMetadata")[];
  }): Promise<R2ObjectsLike>;
  createMultipartUpload(key: string): Promise<R2MultipartUploadLike>;
  /** The multipart upload `uploadId` on `key`, started by an earlier request (tus staging). */
  resumeMultipartUpload(key: string, uploadId: string): R2MultipartUploadLike;
}

/**
 * A Durable Object stub: what `durableObjectState` sends its requests to.
 *
 * @example
 * ```ts
 * const stub: DurableObjectStubLike = env.STATE.get(env.STATE.idFromName("mcp-file-bridge/0"));
 * ```
 */
export interface DurableObjectStubLike {
  fetch(
    input: string,
    init?: { method?: string; body?: string; headers?: Record<string, string> },
  ): Promise<StubResponseLike>;
}

/**
 * What `durableObjectState` reads of a Durable Object's answer (typed loosely: the Workers types'
 * `Response` is not the DOM's).
 *
 * @example
 * ```ts
 * const answer: StubResponseLike = await stub.fetch("https://state/", { method: "POST", body });
 * if (answer.ok) console.log(await answer.json());
 * ```
 */
export interface StubResponseLike {
  readonly ok: boolean;
  readonly status: number;
  json(): Promise<unknown>;
}

/**
 * The Durable Object namespace binding (`env.MY_DO`) of a {@link FileBridgeStateObject} class.
 *
 * @example
 * ```ts
 * // wrangler.jsonc: "durable_objects": { "bindings": [{ "name": "STATE", "class_name": "FileBridgeStateObject" }] }
 * const state = durableObjectState({ namespace: env.STATE });
 * ```
 */
export interface DurableObjectNamespaceBinding {
  idFromName(name: string): unknown;
  get(id: never): DurableObjectStubLike;
}

/**
 * The SQLite storage of a Durable Object (`ctx.storage.sql`), which {@link FileBridgeStateObject} keeps
 * its keys in.
 *
 * @example
 * ```ts
 * const rows = ctx.storage.sql.exec("SELECT v FROM kv WHERE k = ?", key).toArray();
 * ```
 */
export interface SqlStorageLike {
  exec(query: string, ...bindings: unknown[]): { toArray(): Record<string, unknown>[] };
}

/**
 * The Durable Object state handed to a Durable Object's constructor (`ctx`).
 *
 * @example
 * ```ts
 * constructor(ctx: DurableObjectStateLike, env: unknown) { ctx.storage.sql.exec("SELECT 1"); }
 * ```
 */
export interface DurableObjectStateLike {
  readonly storage: {
    readonly sql: SqlStorageLike;
    setAlarm(scheduledTime: number | Date): Promise<void>;
    getAlarm(): Promise<number | null>;
  };
}
