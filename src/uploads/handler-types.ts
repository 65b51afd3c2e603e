/**
 * The types of the upload ticket protocol as the routes plug it in: the handler interface
 * `createFileRoutes()` routes to (one handler per upload route, the way tus-node-server gives each
 * verb a handler), the transport services it is handed, the claims a verified ticket carries, and
 * the reply an upload answers with.
 */
import type { Readable } from "node:stream";
import type { FileBridgeError } from "../errors/file-bridge-error.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";

export type { VerifiedTokenClaims } from "../signing/types.js";

/**
 * What `UploadHandlerConfig.authorize` receives besides the request.
 *
 * @example
 * ```ts
 * createFileRoutes({
 *   store,
 *   minter,
 *   authorize: (request, target: DirectUploadTarget) => isTrusted(request) && !target.name.endsWith(".exe"),
 * });
 * ```
 */
export interface DirectUploadTarget {
  /** Scope from the URL (percent-decoded). */
  scope: string;
  /** File name from the URL (percent-decoded, sanitized). */
  name: string;
}

/**
 * What the routes' `rateLimit` receives: one upload about to start. The scope is verified (it comes
 * from a checked ticket, or from a direct upload that `authorize` let in), so a client cannot spend
 * another scope's budget.
 *
 * @example
 * ```ts
 * const perScope = new Map<string, number>();
 * const rateLimit = ({ scope }: UploadRateLimitInfo) => {
 *   const count = (perScope.get(scope) ?? 0) + 1;
 *   perScope.set(scope, count);
 *   return count <= 20; // false: 429 RATE_LIMITED
 * };
 * createFileRoutes({ store, minter, rateLimit });
 * ```
 */
export interface UploadRateLimitInfo {
  /** What is about to happen. */
  action: "upload";
  /** `"ticket"`: `POST|PUT {basePath}/upload/{token}`; `"direct"`: the direct route. */
  route: "ticket" | "direct";
  /** Scope the upload would store into. */
  scope: string;
  /** The ticket id, for ticket uploads. */
  ticketId?: string;
  /** The request (its headers, e.g. a client address your proxy sets); its body is not read yet. */
  request: Request;
}

/**
 * One stored file in an upload reply.
 *
 * @example
 * ```ts
 * const response = await fetch(ticket.upload_url, { method: "POST", body: form });
 * const { files } = (await response.json()) as { files: UploadReplyFile[] };
 * console.log(files[0]?.name, files[0]?.handle); // report.pdf upload://sessions/q3X0…/01jc…
 * ```
 */
export interface UploadReplyFile {
  /** `upload://sessions/{scopeRef}/{fileId}`: the handle of this one file of the upload. */
  handle: string;
  /** Resource URI, when the routes' `resourceUri` gives one. */
  uri?: string;
  /** File id. */
  id: string;
  /** Sanitized name. */
  name: string;
  /** Size in bytes. */
  size: number;
  /** Lower-case hex sha256. */
  sha256: string;
  /** Media type. */
  mimeType: string;
  /** Expiry as an ISO 8601 time, when the file expires. */
  expiresAt?: string;
}

/**
 * The JSON body of a `201` upload reply.
 *
 * @example
 * ```ts
 * const reply = (await response.json()) as UploadReply;
 * reply.handle === ticket.handle; // true: one upload, one handle, resolving to every file
 * ```
 */
export interface UploadReply {
  /**
   * The handle of the whole upload: for a ticket upload, the ticket's own `handle` (what
   * `get_upload_url` returned), resolving to every file of the upload (a single-file consumer gets
   * the first). Absent when nothing records the upload (routes without `state`) and it carried
   * several files; a single-file upload then answers with its file's handle.
   */
  handle?: string;
  /** The stored files, in upload order. */
  files: UploadReplyFile[];
}

/** A watchdog over one upload body (the routes' `idleTimeout` and `uploadTimeout`). */
export interface UploadWatchdog {
  /**
   * Body bytes arrived: the idle clock starts again; `chunk.length` counts for the minimum rate
   * (without it the rate is not checked).
   */
  touch(chunk?: { length: number }): void;
  /** Stops the idle clock (the server, not the client, is holding the body up). */
  pause(): void;
  /** Starts the idle clock again after {@link UploadWatchdog.pause}. */
  resume(): void;
  /** Stops both clocks for good. */
  stop(): void;
}

/**
 * What the routes hand an {@link UploadHandler} with each request: the matched path and the
 * transport services (the body as a Node stream, the timeouts, the error reporter), so the protocol
 * never imports the transport.
 *
 * @example
 * ```ts
 * const handler: UploadHandler = {
 *   handle: async (request, ctx: UploadRequestContext) => new Response(`token ${ctx.segments[0]}`),
 * };
 * ```
 */
export interface UploadRequestContext {
  /** The path segments after the route name, still percent-encoded (`upload/{token}`: `[token]`). */
  readonly segments: readonly string[];
  /**
   * The request body as a Node stream: the Node adapter's own `IncomingMessage` when the request
   * came through `toNodeHandler` and its web body was untouched, else `request.body` converted.
   * `null` when the request has no body.
   */
  body(): Readable | null;
  /**
   * The request body as the web stream itself, for a store that takes one natively
   * (`FileStore.nativeDigest`): present on the web path only (never for the Node adapter's own
   * requests), `null` when the request has no body. Call `body` or this, not both.
   */
  webBody?(): ReadableStream<Uint8Array> | null;
  /**
   * Starts the idle and total clocks of one upload body; `onTimeout` runs at most once, with the
   * `408 REQUEST_TIMEOUT` error to abort the upload with.
   */
  watch(onTimeout: (error: FileBridgeError) => void): UploadWatchdog;
  /**
   * The settings of those clocks (`idleMs` 0: off; `minBytesPerSecond` absent: no minimum rate), for
   * a handler that sees body bytes only when a large read ends: it sizes its reads so that a client
   * the clocks accept is never taken for idle.
   */
  readonly clocks?: { readonly idleMs: number; readonly minBytesPerSecond: number | undefined };
  /** Hands a server-side failure (or a failing hook) to the routes' `onError`. */
  report(error: unknown): void;
}

/**
 * One upload route's protocol, as `createFileRoutes()` calls it once the route, its method, CORS
 * and the token's shape were checked: answers a `Response`, or throws a `FileBridgeError` (the
 * routes answer it as JSON with its status, and report 5xx to `onError`).
 *
 * @example
 * ```ts
 * const ticketUploads: UploadHandler = new TicketUploadHandler(config);
 * const response = await ticketUploads.handle(request, ctx);
 * ```
 */
export interface UploadHandler {
  handle(request: Request, ctx: UploadRequestContext): Promise<Response>;
}

/**
 * What the upload handlers need from the routes' options, checked and with defaults filled in
 * (`createFileRoutes` passes its resolved options).
 */
export interface UploadHandlerConfig {
  store: FileStore;
  minter: Pick<UrlSigner, "verify" | "consume">;
  state: StateStore | undefined;
  /** Per-file cap for tickets that carry none, and for the direct route. */
  maxBytes: number;
  /** Most files for tickets that carry no limit. */
  maxFiles: number;
  /** File lifetime for tickets that carry none, and for the direct route. */
  uploadTtlMs: number;
  /** Longest upload (0 = off); a single-use ticket's claim outlives it. */
  uploadTimeoutMs: number;
  /** Claims of single-use tickets whose upload runs now, when there is no `state` to hold them. */
  uploadsInFlight: Set<string>;
  authorize: ((request: Request, target: DirectUploadTarget) => boolean | Promise<boolean>) | undefined;
  rateLimit: ((info: UploadRateLimitInfo) => boolean | Promise<boolean>) | undefined;
  onStored: ((file: StoredFile) => void | Promise<void>) | undefined;
  resourceUri: ((file: StoredFile) => string | undefined) | undefined;
}
