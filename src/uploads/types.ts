import type { DescriptorAnswerer } from "../bridge/file-descriptors.js";
import type { FileSourceResolver } from "../bridge/types.js";
import type { Duration } from "../internal/duration.js";
import type { ScopeFunction } from "../scope/scope.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";
import type { FileRequestsOptions } from "./request-files-types.js";

/**
 * What a rate limit for upload URLs is asked about: one call of the upload-URL tool, after the
 * caller's scope was derived and before a ticket is minted.
 *
 * @example
 * ```ts
 * const minted = new Map<string, number>();
 * const rateLimit = ({ scope }: UploadTicketRateLimitInfo) => {
 *   const count = (minted.get(scope) ?? 0) + 1;
 *   minted.set(scope, count); // reset it every minute elsewhere
 *   return count <= 20; // false: the tool answers RATE_LIMITED
 * };
 * new UploadHandleResolver({ store, minter, state, rateLimit });
 * ```
 */
export interface UploadTicketRateLimitInfo {
  /** What is about to happen. */
  action: "ticket";
  /** Scope the ticket would be bound to. */
  scope: string;
  /** Name of the tool that was called, or the files-extension method (`files/authorizeUpload`, …). */
  tool: string;
}

/**
 * Options of {@link UploadHandleResolver}.
 *
 * @example
 * ```ts
 * new UploadHandleResolver({ store, minter, state, bridge, maxBytes: 200 * 1024 * 1024, ttl: "15m" });
 * ```
 */
export interface UploadHandleResolverOptions {
  /** Where uploads are stored (the same store as the HTTP routes). */
  store: FileStore;
  /** Mints the upload URLs; its `state` must be set for single-use tickets. */
  minter: Pick<UrlSigner, "mint" | "scopeRefs" | "now">;
  /**
   * Where the routes record which files a ticket uploaded (give the routes the same store), so the
   * ticket's handle, returned before the upload, resolves to the uploaded file.
   */
  state: StateStore;
  /**
   * A `FileBridge` to teach `upload://` handles to (`bridge.addResolver(resolver.fileSourceResolver())`);
   * its `maxBytes` is the default upload limit and the highest one allowed.
   * @default undefined (call `addResolver` yourself)
   */
  bridge?: {
    addResolver(resolver: FileSourceResolver): unknown;
    readonly maxBytes?: number;
    /** Where `attach(server, { files })` sets the answerer of descriptor calls (a `FileBridge` has it). */
    answerDescriptors?(answerer: DescriptorAnswerer): unknown;
  };
  /**
   * Name of the tool `UploadHandleResolver.attach` registers.
   * @default "get_upload_url"
   */
  toolName?: string;
  /**
   * Which server asks for the files, as the upload page shows it ("Acme Converter asks you for
   * files"); carried in the ticket (at most 100 characters).
   * @default the MCP server's `title`, else its `name` (for tickets its tools mint)
   */
  serverName?: string;
  /**
   * How long an upload URL can be used (the upload must start before it expires).
   * @default "10m"
   */
  ttl?: Duration;
  /**
   * How long uploaded files, and so their handles, live.
   * @default "1h"
   */
  handleTtl?: Duration;
  /**
   * Size cap per uploaded file, in bytes (carried in the ticket, enforced by the routes). It may not
   * exceed the `bridge`'s `maxBytes` (an `INVALID_OPTION`): the tool would refuse those uploads.
   * @default the `bridge`'s `maxBytes` when a bridge is given, else 104857600 (100 MiB)
   */
  maxBytes?: number;
  /**
   * Most files one upload may carry.
   * @default 10
   */
  maxFiles?: number;
  /**
   * Whether an upload URL works only once.
   * @default true
   */
  singleUse?: boolean;
  /**
   * Derives the caller's scope from the tool call's `extra`; the ticket is bound to it.
   * @default defaultScope (the authenticated user, else the session id, else FORBIDDEN over HTTP)
   */
  scope?: ScopeFunction;
  /**
   * Rate limit for upload tickets, asked with the caller's scope before any of the package's ticket
   * minters mints one: the upload-URL tool, `files/authorizeUpload` and `files/prepareUpload`, file
   * requests, the proxy's upload tool. `{ max, window }` counts in `state`,
   * so replicas sharing a Redis state share one budget; a function decides itself. Refused: the
   * tool answers an `isError` result with `RATE_LIMITED`, the files extension the JSON-RPC error
   * of `RATE_LIMITED` (nothing is minted). A thrown `FileBridgeError` is reported with its own code;
   * any other throw refuses too (`STORAGE_ERROR`). Calls of `createTicket()` from your own code are
   * not asked (ask `assertTicketAllowed()` first). Per-scope byte and file quotas belong to the
   * store (`quota`).
   * @default undefined (no limit)
   */
  rateLimit?:
    | ((info: UploadTicketRateLimitInfo) => boolean | Promise<boolean>)
    | { max: number; window?: Duration };
  /**
   * Folder under which `UploadHandleResolver.rewrite` makes per-call temp folders.
   * @default join(os.tmpdir(), `mcp-file-bridge-${uid}`) (one per user; no suffix where there are no uids)
   */
  tmpDir?: string;
  /**
   * Settings of {@link UploadHandleResolver.requestFiles}: how long it waits for an upload
   * (`timeout`), how often it looks (`pollInterval`), and the URL a person opens (`pageUrl`).
   * Links, limits and file lifetimes are the resolver's (`ttl`, `maxBytes`, `maxFiles`, `handleTtl`).
   * @default { timeout: "15m", pollInterval: "250ms", roundWait: "25s" } (the page is the upload URL itself)
   */
  fileRequests?: Pick<FileRequestsOptions, "timeout" | "pollInterval" | "roundWait" | "pageUrl">;
}

/**
 * The MCP App upload widget as `UploadHandleResolver.attach` takes it: what
 * `uploadWidgetResource()` (from `mcp-file-bridge/ui`) returns. Passed in rather than built here,
 * so the core never loads the widget's bundled script.
 *
 * @example
 * ```ts
 * import { uploadWidgetResource } from "mcp-file-bridge/ui";
 * const widget: UploadToolWidget = uploadWidgetResource({ uploadOrigin: "https://files.example.com" });
 * uploads.attach(server, { widget });
 * ```
 */
export interface UploadToolWidget {
  /** The `ui://` URI. */
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
  _meta?: Record<string, unknown>;
  /** The tool the widget calls for a fresh link; must be the resolver's `toolName`. */
  toolName?: string;
  /** The `resources/read` content entry. */
  contents: { uri: string; mimeType?: string; text: string; _meta?: Record<string, unknown> };
}

/**
 * Options of `UploadHandleResolver.attach`.
 *
 * @example
 * ```ts
 * const options: UploadAttachOptions = { widget: uploadWidgetResource({ uploadOrigin }) };
 * uploads.attach(server, options);
 * ```
 */
export interface UploadAttachOptions {
  /**
   * Register the MCP App upload widget next to the tool: the `ui://` resource (through the host
   * port, composed with a `ResourceRegistry` attached before or after) and the tool's
   * `_meta.ui.resourceUri` plus the flat `_meta["ui/resourceUri"]`. Hosts that render MCP Apps show
   * the widget with the tool's result (the ticket); the routes need `allowedOrigins` for the host's
   * sandbox origin.
   * @default undefined (no widget)
   */
  widget?: UploadToolWidget;
  /**
   * Also serve the MCP files extension (SEP-2631 draft, and the Codex CLI variant): `files/*`
   * request handlers and the `extensions["io.modelcontextprotocol/files"]` capability, for clients
   * that speak it; every other client keeps `get_upload_url`. `true` for the defaults. Needs a
   * minter with `downloadUrl` (a `SignedUrlMinter`). See docs/files-extension.md.
   * @default undefined (not served)
   */
  files?: boolean | FilesExtensionOptions;
  /**
   * Register the upload status tool next to the upload-URL tool, under this name: the model's cheap
   * "has it arrived?" for a handle (`pending` / `receiving` n of m bytes / `ready` / `unknown`),
   * named in the `UPLOAD_PENDING` advice. `false` registers none.
   * @default "check_upload"
   */
  statusTool?: string | false;
}

/**
 * An upload ticket: where and how to upload, and the handle the upload will answer to.
 *
 * @example
 * ```ts
 * const ticket: UploadTicket = await uploads.createTicket(scope);
 * await fetch(ticket.upload_url, { method: ticket.method, body: form });
 * ```
 */
export interface UploadTicket {
  [key: string]: unknown;
  /** The signed URL to POST (multipart) or PUT (raw body) the file(s) to. */
  upload_url: string;
  /** HTTP method for a multipart form upload. */
  method: "POST";
  /** Form field name for the file part(s). */
  field: string;
  /** When the URL expires, ISO 8601. */
  expires_at: string;
  /** Size cap per file, in bytes. */
  max_bytes: number;
  /** Most files per upload. */
  max_files: number;
  /** Whether the URL works only once (a failed upload does not use it up). */
  single_use: boolean;
  /** Handle of the (first) file this ticket will upload; valid once the upload finished. */
  handle: string;
  /** A ready-to-run curl command line. */
  curl: string;
}

/**
 * What `UploadHandleResolver.rewrite` returns.
 *
 * @example
 * ```ts
 * const rewritten: RewrittenArgs<typeof args> = await uploads.rewrite(args, ["file"], { scope });
 * try {
 *   await convert(rewritten.args.file); // a local path now
 * } finally {
 *   await rewritten.dispose();
 * }
 * ```
 */
export interface RewrittenArgs<T> extends AsyncDisposable {
  /** A copy of the arguments with every upload handle at the given paths replaced by a local path. */
  args: T;
  /** Removes the local copies. Idempotent. */
  dispose(): Promise<void>;
}

/**
 * Options of the files extension (`uploads.attach(server, { files: { … } })`).
 *
 * @example
 * ```ts
 * uploads.attach(server, { files: { accept: ["application/pdf", "image/*"], maxSize: 20_000_000, downloadTtl: "5m" } });
 * ```
 */
export interface FilesExtensionOptions {
  /**
   * Media types `authorizeUpload` accepts (`"image/*"` style wildcards allowed); another declared
   * type is refused with `reason: "mimeTypeNotAccepted"`.
   * @default any type
   */
  accept?: string[];
  /**
   * Largest declared size, in bytes; more is refused with `reason: "maxSizeExceeded"`.
   * @default the resolver's `maxBytes`
   */
  maxSize?: number;
  /**
   * The upload descriptor: a raw-body `PUT`, or a multipart `POST` (field `file`).
   * @default "PUT"
   */
  uploadMethod?: "PUT" | "POST";
  /**
   * Also serve the Codex CLI variant (`files/prepareUpload`, `files/completeUpload`, `files/getDownload`).
   * @default true
   */
  variant?: boolean;
  /** Lifetime of the signed download URLs `authorizeDownload` hands out. @default the minter's ttl */
  downloadTtl?: Duration;
  /**
   * Add the ticket's tus 1.0 endpoint to the upload descriptor (`upload.tus: { endpoint, version }`,
   * an extra field the draft's descriptor allows), so a client that speaks tus resumes the same
   * upload; the descriptor stays an https `PUT` for every other client. The tus commit checks the
   * declared size, sha-256 and media type exactly as the `PUT` does. Turn it off when the routes
   * run with `tus: false`.
   * @default true
   */
  tus?: boolean;
  /**
   * Upload descriptors that are presigned `POST` forms straight to the store's bucket (the store must
   * have `directUploads`: `s3Store`; the form's policy pins key, content type and size range and
   * refuses any other field, so its holder can upload bytes and nothing else), committed on the URI's first resolve or `files/completeUpload` once
   * size and sha-256 are verified. See docs/files-extension.md.
   * @default false (uploads go through the upload route)
   */
  direct?: boolean | DirectUploadOptions;
  /**
   * The revision Claude Code ships (`upload_required`): how long one retry waits for bytes that have
   * not arrived before it answers a state-only `input_required` (the client calls again at once);
   * after 5 such rounds the call ends in `TIMEOUT`. At most `"30s"`.
   * @default "1s"
   */
  uploadWait?: Duration;
}

/**
 * Options of the files extension's direct-to-storage uploads (`files: { direct: { … } }`).
 *
 * @example
 * ```ts
 * uploads.attach(server, { files: { direct: { dedup: true, onStored: (file) => registry.register(file) } } });
 * ```
 */
export interface DirectUploadOptions {
  /**
   * A declared sha-256 that a live file of the caller's scope already has needs no upload: the
   * result carries that file and `committed: true` instead of a descriptor. Never across scopes.
   * @default false
   */
  dedup?: boolean;
  /**
   * Runs once a direct upload committed (the routes' `onStored` does not see it: no route carried
   * the bytes), e.g. `(file) => registry.register(file)` to list it and fire `list_changed`.
   * @default undefined
   */
  onStored?: (file: StoredFile) => void | Promise<void>;
  /** Gets what `onStored` threw (the file stays stored). @default undefined (ignored) */
  onError?: (error: unknown) => void;
}
