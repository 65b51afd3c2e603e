/**
 * The public types of the file routes: options, hooks and what they receive. The upload protocol's
 * own types (ticket claims, reply, handler) live in `uploads/handler-types.ts` and are re-exported.
 */

import type { Duration } from "../internal/duration.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";
import type { DirectUploadTarget, UploadRateLimitInfo } from "../uploads/handler-types.js";
import type { TusOptions } from "../uploads/tus/service.js";

export type {
  DirectUploadTarget,
  UploadHandler,
  UploadRateLimitInfo,
  UploadReply,
  UploadReplyFile,
  UploadRequestContext,
  UploadWatchdog,
  VerifiedTokenClaims,
} from "../uploads/handler-types.js";

/**
 * The part of a `ResourceRegistry` the routes use.
 *
 * @example
 * ```ts
 * const registry: FileRoutesRegistry = new ResourceRegistry({ store });
 * const routes = createFileRoutes({ store, minter, registry }); // uploads show up in resources/list
 * ```
 */
export interface FileRoutesRegistry {
  /** The resource URI of a stored file. */
  uriFor(file: StoredFile): string;
  /** Registers a file already in the store (lists it, notifies). */
  register(file: Pick<StoredFile, "scope" | "id">): Promise<unknown>;
}

/**
 * What {@link FileRoutesOptions.onDownload} receives.
 *
 * @example
 * ```ts
 * const onDownload = ({ scope, file, bytes, claims }: DownloadEvent) =>
 *   usage.charge({ key: String(claims.key), scope, id: file.id, bytes }); // claims: signed at mint time
 * ```
 */
export interface DownloadEvent {
  /** Scope of the file. */
  scope: string;
  /** The file that was sent. */
  file: StoredFile;
  /** How many bytes were sent (the range length for a 206). */
  bytes: number;
  /** The token the download used. */
  token: string;
  /**
   * The verified extra claims signed into the token at mint time (`{}` when none): e.g. the API key
   * id to charge, put there with `minter.downloadUrl(file, { claims })` or the registry's
   * `downloadClaims` option. Authentic: they come from a token whose signature was checked.
   */
  claims: Record<string, string | number | boolean>;
  /** The range that was sent, when the request asked for one. */
  range?: { start: number; end: number };
}

/**
 * Options of {@link createFileRoutes}.
 *
 * @example
 * ```ts
 * const options: FileRoutesOptions = {
 *   store,
 *   minter,
 *   state,
 *   maxBytes: 500 * 1024 * 1024,
 *   onDownload: ({ scope, bytes }) => usage.record(scope, bytes),
 * };
 * ```
 */
export interface FileRoutesOptions {
  /** Where uploads go and downloads come from. */
  store: FileStore;
  /** Verifies the signed URL tokens; usually a `SignedUrlMinter`. */
  minter: Pick<UrlSigner, "verify" | "consume" | "basePath" | "scopeRefs">;
  /**
   * Path prefix the routes answer under: starts with `/`; `"/"` (or `""`) mounts them at the root.
   * @default minter.basePath
   */
  basePath?: string;
  /**
   * Where ticket uploads are recorded, so the ticket's own handle (returned by `get_upload_url`
   * before the upload) resolves to the uploaded file. Give the same store as the
   * `UploadHandleResolver`. It also holds the claim of a single-use ticket while its upload runs,
   * so a second upload with the same ticket gets `409 UPLOAD_IN_PROGRESS` on every replica that
   * shares the store (without `state` the claim holds within this process only).
   * @default no record (only the per-file handles of the reply resolve)
   */
  state?: StateStore;
  /**
   * Size cap per file, in bytes, for tickets that carry none and for the direct route.
   * @default 104857600 (100 MiB)
   */
  maxBytes?: number;
  /**
   * Most files one multipart upload may carry, for tickets that carry no limit.
   * @default 10
   */
  maxFiles?: number;
  /**
   * Time to live of uploaded files, for tickets that carry none and for the direct route.
   * @default "1h"
   */
  uploadTtl?: Duration;
  /**
   * Media types (essences, e.g. `image/png`) served `inline`; everything else is an `attachment`.
   * Types are parsed, never substring-matched.
   * @default ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "text/plain", "application/pdf", "audio/mpeg", "audio/ogg", "audio/wav", "video/mp4", "video/webm"]
   */
  inlineTypes?: readonly string[];
  /**
   * Guards the direct route `POST|PUT {basePath}/scopes/{scope}/files/{name}`. Return `true` to let
   * the request store the file; `false` answers 403 `FORBIDDEN`; a thrown `FileBridgeError` answers
   * with its own status. Without it the direct route does not exist.
   * @default undefined (direct route off)
   */
  authorize?: (request: Request, target: DirectUploadTarget) => boolean | Promise<boolean>;
  /**
   * Rate limit for uploads, asked once per upload after its ticket (or `authorize`) was checked and
   * before any byte of the body is read. Return `true` to let it proceed; `false` answers
   * `429 RATE_LIMITED` (the body is not read; the ticket stays usable); a thrown `FileBridgeError`
   * answers with its own status. Per-scope byte and file quotas belong to the store.
   * @default undefined (no limit)
   */
  rateLimit?: (info: UploadRateLimitInfo) => boolean | Promise<boolean>;
  /**
   * Runs after a download sent all its bytes (never for HEAD, 304, errors or aborted transfers).
   * Errors it throws go to `onError` and do not affect the response.
   * @default undefined
   */
  onDownload?: (event: DownloadEvent) => void | Promise<void>;
  /**
   * Runs for each file once an upload committed it, e.g. to register it as a resource and fire
   * `notifications/resources/list_changed`. Errors go to `onError`; the file stays stored.
   * @default undefined
   */
  onStored?: (file: StoredFile) => void | Promise<void>;
  /**
   * The resource URI of an uploaded file, put in the reply as `uri`.
   * @default `registry.uriFor` when a registry is given, else no `uri` in the reply
   */
  resourceUri?: (file: StoredFile) => string | undefined;
  /**
   * A `ResourceRegistry` over the same store: every uploaded file is registered (listed in
   * `resources/list` at once, `list_changed` fires) before `onStored` runs, and the reply carries
   * its resource URI.
   * @default undefined
   */
  registry?: FileRoutesRegistry;
  /**
   * Longest time an upload or a download may go without progress: no body byte arrived (an upload;
   * answered `408 REQUEST_TIMEOUT`, nothing stored, the ticket stays usable), or the client read
   * nothing (a download; the transfer is ended). Time the server itself spends writing to the store
   * does not count. `0` turns it off.
   * @default "30s"
   */
  idleTimeout?: Duration;
  /**
   * Longest time one upload request may take, from its start until its files are committed; then
   * `408 REQUEST_TIMEOUT`, nothing stored, the ticket stays usable. `0` turns it off. (On Node, the
   * server's own `requestTimeout`, 5 minutes by default, also applies.)
   * @default "15m"
   */
  uploadTimeout?: Duration;
  /**
   * Slowest an upload body may arrive: fewer than `bytesPerSecond` on average over a whole `window`
   * (time the server itself spends writing to the store does not count) ends it with
   * `408 TRANSFER_TOO_SLOW`: nothing stored, its staging removed, the ticket stays usable. Stops a
   * client that sends a few bytes now and then (never idle for `idleTimeout`) from holding an
   * upload, a staging file and its descriptors until `uploadTimeout`. `false` turns it off.
   * @default { bytesPerSecond: 1024, window: "30s" }
   */
  minUploadRate?: { bytesPerSecond: number; window?: Duration } | false;
  /**
   * Longest time one download may take to send its bytes; then the transfer is ended (and
   * `onDownload` does not run). `0` turns it off.
   * @default "1h"
   */
  downloadTimeout?: Duration;
  /**
   * Lets web pages on other origins use the signed URLs with `fetch` (CORS): a list of exact origins
   * (`"https://app.example.com"`), a function `(origin, request) => boolean`, or `"*"` for any origin.
   * A request whose `Origin` is present, not the routes' own and not allowed gets `403 FORBIDDEN`
   * before its token is read (so such a page can never use up a ticket); an allowed origin's
   * preflight gets `204`, and its replies `Access-Control-Allow-Origin` and
   * `Access-Control-Expose-Headers: ETag, Content-Range, Content-Disposition, Location`. Never
   * `Access-Control-Allow-Credentials`: the token in the URL is the whole authorization, so `"*"` is
   * acceptable for the signed URLs (see docs/http-routes.md, "CORS").
   * @default undefined: no CORS headers, and a request whose `Origin` is another origin gets 403 before its token is read (requests without `Origin`, such as top-level downloads and non-browser clients, are served)
   */
  allowedOrigins?:
    | readonly string[]
    | "*"
    | ((origin: string, request: Request) => boolean | Promise<boolean>);
  /**
   * Serve the upload page (a small self-contained HTML page where a person drops or picks files) to
   * a browser that opens an upload link: `GET|HEAD {basePath}/upload/{token}` with `text/html` in
   * `Accept`. The page is injected, not built in: pass `uploadPageRenderer()` from
   * `mcp-file-bridge/ui` (`uploadPageRenderer({ title })` sets the heading), or your own
   * `UploadPageRenderer`. Viewing the page never uses the ticket up (the minter must have
   * `consume()`). Programs are unaffected (`POST`/`PUT` upload, a `GET` without `text/html` still
   * gets `405`).
   * @default undefined (no page)
   */
  uploadPage?: UploadPageRenderer;
  /**
   * The tus 1.0 endpoint behind upload tickets (`{basePath}/tus/{token}`; see
   * docs/resumable-uploads.md): its byte staging, lock lifetime and progress hook. `false` turns
   * the endpoint off (its paths then answer `undefined`, like any path outside the routes).
   * @default {} (on, staging in a folder under the OS temp folder)
   */
  tus?: TusOptions | false;
  /**
   * Sees server-side failures (every 500 answer: unexpected errors, answered as `STORAGE_ERROR`
   * without details, and storage failures during an upload, with the original error as `cause`)
   * and hook failures.
   * @default undefined (ignored)
   */
  onError?: (error: unknown) => void;
}

/**
 * A web-standard handler: a `Response`, or `undefined` when the request is not for these routes.
 *
 * @example
 * ```ts
 * const routes: FileRoutes = createFileRoutes({ store, minter });
 * const response = (await routes(request)) ?? new Response("Not Found", { status: 404 });
 * ```
 */
export type FileRoutes = (request: Request) => Promise<Response | undefined>;

/**
 * What a browser opening an upload link is answered with, for {@link UploadPageRenderer.render}.
 *
 * @example
 * ```ts
 * const link: UploadPageLink = { token, verifier: minter, maxBytes: 100 * 1024 * 1024, maxFiles: 10 };
 * ```
 */
export interface UploadPageLink {
  /** The token segment of the URL, as received (not checked yet). */
  token: string;
  /** The routes' minter: verify with `consume: false`, so viewing the page never uses the ticket up. */
  verifier: Pick<UrlSigner, "verify" | "consume" | "basePath" | "scopeRefs">;
  /** Size cap per file for tickets that carry none (the routes' `maxBytes`). */
  maxBytes: number;
  /** Most files for tickets that carry no limit (the routes' `maxFiles`). */
  maxFiles: number;
}

/**
 * The upload page as {@link FileRoutesOptions.uploadPage} takes it: injected by whoever wires the
 * routes, so the routes never load the page's HTML and script. `uploadPageRenderer()` from
 * `mcp-file-bridge/ui` is the built-in one.
 *
 * @example
 * ```ts
 * import { uploadPageRenderer } from "mcp-file-bridge/ui";
 * const routes = createFileRoutes({ store, minter, state, uploadPage: uploadPageRenderer({ title: "Send us the files" }) });
 * ```
 */
export interface UploadPageRenderer {
  /** Whether the request asks for the page (a `GET`/`HEAD` accepting `text/html`). */
  wants(request: Request): boolean;
  /** The page for the link (200), or the page of an unusable link (401 or 410). */
  render(request: Request, link: UploadPageLink): Promise<Response>;
}
