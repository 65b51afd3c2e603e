/**
 * The public types of `FileRequests`: its options, a request and its wait, and the tool results it
 * builds. Kept apart from the class so each file has one job.
 */
import type { Duration } from "../internal/duration.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore, StoredFile } from "../storage/types.js";

/**
 * Options of {@link FileRequests}.
 *
 * @example
 * ```ts
 * const requests = new FileRequests({ store, state, minter, maxBytes: 500 * 1024 * 1024, timeout: "30m" });
 * ```
 */
export interface FileRequestsOptions {
  /** Where the uploads land (the store of `createFileRoutes`). */
  store: FileStore;
  /** Where the routes record ticket uploads (the `state` of `createFileRoutes` — required there too). */
  state: StateStore;
  /** Mints the upload links; its `state` must be set (links are single-use). */
  minter: Pick<UrlSigner, "mint" | "scopeRefs">;
  /**
   * How long the link can be used (the upload must start before it expires).
   * @default "10m"
   */
  ttl?: Duration;
  /**
   * How long the uploaded files, and so their handles, live.
   * @default "1h"
   */
  handleTtl?: Duration;
  /**
   * Size cap per file, in bytes; a request may ask for less, never more.
   * @default 104857600 (100 MiB)
   */
  maxBytes?: number;
  /**
   * Most files per request; a request may ask for fewer, never more.
   * @default 10
   */
  maxFiles?: number;
  /**
   * How long {@link FileRequest.wait} waits for the upload by default.
   * @default "15m"
   */
  timeout?: Duration;
  /**
   * How often {@link FileRequest.wait} checks the state store.
   * @default "250ms"
   */
  pollInterval?: Duration;
  /**
   * Under the 2026-07-28 protocol, how long one retried call of `requestFiles` waits while no bytes
   * arrive before it answers `input_required` again with only a request state, so the client retries
   * at once and the wait goes on in the next call. Keep it below the clients' request timeout (the
   * SDKs default to 60 s).
   * @default "25s"
   */
  roundWait?: Duration;
  /**
   * The URL a person opens, from the signed upload URL.
   * @default the upload URL itself: the routes answer a browser there with the upload page
   */
  pageUrl?: (uploadUrl: string) => string;
  /**
   * Asked before each link is minted (an `UploadHandleResolver` passes its `rateLimit` here); throws
   * to refuse (`RATE_LIMITED`). `tool` is `"requestFiles"`.
   * @default undefined (no limit)
   */
  allowTicket?: (scope: string, tool: string) => Promise<void>;
}

/**
 * What a tool asks the person for.
 *
 * @example
 * ```ts
 * const options: RequestFilesOptions = { message: "Upload the scanned invoice (PDF)", accept: [".pdf"], maxFiles: 1 };
 * ```
 */
export interface RequestFilesOptions {
  /** Why the files are needed; shown by the client and on the upload page (at most 1024 characters). */
  message: string;
  /**
   * File types the page's picker offers (`.pdf`, `image/*`); a hint, not enforced.
   * @default any file
   */
  accept?: readonly string[];
  /**
   * Most files for this request (at most the configured `maxFiles`).
   * @default the configured `maxFiles`
   */
  maxFiles?: number;
  /**
   * Size cap per file for this request (at most the configured `maxBytes`).
   * @default the configured `maxBytes`
   */
  maxBytes?: number;
  /**
   * Which server asks, shown on the upload page (at most 100 characters).
   * @default not shown (`UploadHandleResolver.requestFiles` fills in the MCP server's title or name)
   */
  serverName?: string;
}

/**
 * A tool result as plain data (the shape of MCP `CallToolResult`, without importing the SDK).
 *
 * @example
 * ```ts
 * const result: FileRequestToolResult = request.fallbackResult();
 * return result; // from a tool handler
 * ```
 */
export interface FileRequestToolResult {
  [key: string]: unknown;
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The params of an `elicitation/create` request in URL mode (MCP 2025-11-25).
 *
 * @example
 * ```ts
 * const params: UrlElicitationParams = request.elicitation;
 * await extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema);
 * ```
 */
export interface UrlElicitationParams {
  [key: string]: unknown;
  mode: "url";
  message: string;
  url: string;
  elicitationId: string;
}

/**
 * Options of {@link FileRequest.wait}.
 *
 * @example
 * ```ts
 * const files = await request.wait({ signal: extra.signal, timeout: "20m" });
 * ```
 */
export interface WaitOptions {
  /** Stops waiting (`ABORTED`), e.g. the tool call's `extra.signal`. */
  signal?: AbortSignal;
  /** How long to wait before `TIMEOUT`. @default the requests' `timeout` */
  timeout?: Duration;
  /**
   * Called while the bytes of a resumable (tus) upload arrive, each time the offset grew (read from
   * the state store, so from any replica).
   */
  onProgress?: (offset: number, length: number | undefined) => void | Promise<void>;
  /**
   * Ends the wait early with `TIMEOUT` (its `data.idle` is `true`) once this long passed with no
   * bytes of a resumable upload arriving: the wait of one round, spread over several calls.
   * @default no such limit
   */
  idle?: Duration;
}

/**
 * One request for files: a single-use upload link bound to the caller's scope, the URL a person
 * opens, and the means to wait for the upload and to answer the tool call.
 *
 * @example
 * ```ts
 * const request: FileRequest = await requests.create(scope, { message: "Upload the contract" });
 * console.log(request.url, request.elicitation.elicitationId === request.id); // … true
 * ```
 */
export interface FileRequest {
  /** Request id: the upload ticket id, also the `elicitationId`. */
  readonly id: string;
  /** Scope the upload lands in. */
  readonly scope: string;
  /** What is asked for. */
  readonly message: string;
  /** The URL to open in a browser (the upload page). */
  readonly url: string;
  /** The signed upload URL (programs may `POST` multipart to it directly). */
  readonly uploadUrl: string;
  /** The same ticket's tus 1.0 endpoint (resumable uploads; any tus client). */
  readonly tusUrl: string;
  /** When the link expires, milliseconds since the epoch. */
  readonly expiresAt: number;
  /** Size cap per file, in bytes. */
  readonly maxBytes: number;
  /** Most files. */
  readonly maxFiles: number;
  /** Handle of the first uploaded file, valid once the upload committed. */
  readonly handle: string;
  /** The `elicitation/create` params (`mode: "url"`). */
  readonly elicitation: UrlElicitationParams;
  /**
   * Waits until the upload committed, then returns the stored files in upload order. Fails with
   * `TOKEN_EXPIRED` once the link expired and no resumable upload is still receiving bytes (an
   * upload under way at the expiry may finish), `TIMEOUT` after the timeout, and `ABORTED` when the
   * signal fires.
   */
  wait(options?: WaitOptions): Promise<StoredFile[]>;
  /** The stored files if the upload has committed, else `null` (no waiting). */
  files(): Promise<StoredFile[] | null>;
  /** The tool result listing the uploaded files and their handles. */
  resultFor(files: readonly StoredFile[]): FileRequestToolResult;
  /**
   * The tool result for a client that cannot open URLs: the link, what to do, and the handle to
   * pass once the person uploaded.
   */
  fallbackResult(): FileRequestToolResult;
  /** The tool result after the person declined or cancelled (`isError: true`). */
  declinedResult(action: "decline" | "cancel"): FileRequestToolResult;
}
