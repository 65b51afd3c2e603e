/**
 * Every default limit of the package, defined once. Pieces import their defaults from here; the
 * limits table in `docs/limits.md` documents them (a test keeps the two in sync).
 */

const MiB = 1024 * 1024;

/**
 * `FileBridge`: largest file one argument may resolve to (50 MiB), unless `maxBytes` says otherwise.
 *
 * @example
 * ```ts
 * new FileBridge().maxBytes === DEFAULT_MAX_BYTES; // true: 52428800 (50 MiB)
 * const large = new FileBridge({ maxBytes: 4 * DEFAULT_MAX_BYTES }); // 200 MiB
 * ```
 */
export const DEFAULT_MAX_BYTES = 50 * MiB;
/** `FileBridge`: most files one call may resolve (`resolveAll`, `withFiles`). */
export const DEFAULT_MAX_FILES_PER_CALL = 32;
/** `createFileRoutes` and `UploadHandleResolver`: largest file one upload may carry (100 MiB). */
export const DEFAULT_UPLOAD_MAX_BYTES = 100 * MiB;
/** `createFileRoutes` and `UploadHandleResolver`: most files one upload may carry. */
export const DEFAULT_UPLOAD_MAX_FILES = 10;
/** `Artifacts`: largest file a tool may produce (1 GiB). */
export const DEFAULT_ARTIFACT_MAX_BYTES = 1024 * MiB;
/**
 * `Artifacts.fit`: characters of text a result keeps inline for a client it does not know (Codex CLI
 * cuts MCP text near 11,000); longer text is stored as an artifact and previewed.
 *
 * @example
 * ```ts
 * await artifacts.fit(result, { scope }); // text past DEFAULT_INLINE_TEXT_BUDGET (10000) is stored
 * ```
 */
export const DEFAULT_INLINE_TEXT_BUDGET = 10_000;
/**
 * `Artifacts.fit`: base64 characters of images and audio a result keeps inline (under Claude
 * Desktop's 1 MB per result); larger media is stored as an artifact.
 *
 * @example
 * ```ts
 * new Artifacts({ store, inlineBudget: { media: DEFAULT_INLINE_MEDIA_BUDGET / 2 } });
 * ```
 */
export const DEFAULT_INLINE_MEDIA_BUDGET = 750_000;
/** `ResourceRegistry`: largest file `resources/read` returns inline as text or blob (4 MiB). */
export const DEFAULT_MAX_INLINE_BYTES = 4 * MiB;
/** `SignedUrlMinter`: lifetime of a signed URL. */
export const DEFAULT_URL_TTL = "5m";
/** `UploadHandleResolver`: lifetime of an upload ticket. */
export const DEFAULT_UPLOAD_TICKET_TTL = "10m";
/** `UploadHandleResolver`: lifetime of an `upload://` handle after its upload. */
export const DEFAULT_UPLOAD_HANDLE_TTL = "1h";
/** `createFileRoutes`: longest time an upload or a download may go without moving a byte. */
export const DEFAULT_IDLE_TIMEOUT = "30s";
/** `createFileRoutes`: longest time one upload request may take, from its start to its commit. */
export const DEFAULT_UPLOAD_TIMEOUT = "15m";
/** `createFileRoutes`: slowest an upload body may arrive, on average over each window. */
export const DEFAULT_MIN_UPLOAD_RATE = { bytesPerSecond: 1024, window: "30s" } as const;
/**
 * The proxy on SDK v2: `subscriptions/listen` streams one user may hold open at once (all anonymous
 * callers together count as one user).
 */
export const DEFAULT_LISTEN_STREAMS_PER_USER = 16;
/** `createFileRoutes`: longest time one download may take to send its bytes. */
export const DEFAULT_DOWNLOAD_TIMEOUT = "1h";
/**
 * `memoryStore`: the fraction of `maxTotalBytes` one scope may hold, so one scope cannot starve the
 * others.
 *
 * @example
 * ```ts
 * memoryStore({ maxTotalBytes: 256 * 1024 * 1024 }); // one scope may hold at most 64 MiB of it
 * memoryStore({ maxTotalBytes: 256 * 1024 * 1024, maxScopeShare: 1 }); // one scope, no share
 * ```
 */
export const DEFAULT_MEMORY_SCOPE_SHARE = 0.25;
