import { PassThrough, type Readable } from "node:stream";
import { Busboy, type BusboyFileStream, type BusboyInstance } from "@fastify/busboy";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { sanitizeFileName, sanitizeRelativePath } from "../internal/file-name.js";
import { DEFAULT_UPLOAD_MAX_BYTES, DEFAULT_UPLOAD_MAX_FILES } from "../internal/limits.js";
import { chooseMediaType, parseMediaType } from "../media/media-type.js";
import { assertScope } from "../scope/scope.js";
import type { FileStore, StagedFile, StateStore, StoredFile } from "../storage/types.js";
import {
  TICKET_CLAIMS,
  type TicketRecord,
  ticketStateKey,
  uploadHandleOf,
} from "../uploads/upload-handle.js";
import { formatContentDisposition, parseContentDispositionFileName } from "./content-disposition.js";
import { lazyWebStream, requestBodyAsNode, setNodeResponseBody } from "./node-fast-path.js";
import { parseRange } from "./range.js";

/**
 * The claims a verified token carries, as far as the routes need them.
 *
 * @example
 * ```ts
 * const { scope, fileId, claims }: VerifiedTokenClaims = await minter.verify(token, { action: "download" });
 * ```
 */
export interface VerifiedTokenClaims {
  /** Scope the token is bound to. */
  scope: string;
  /** File id (downloads) or upload ticket id (uploads). */
  fileId: string;
  /** Extra claims set at mint time (upload tickets carry `max_bytes`, `max_files`, `file_ttl`). */
  claims?: Record<string, string | number | boolean>;
}

/**
 * The part of a `SignedUrlMinter` the routes use. Any `SignedUrlMinter` fits; the interface is
 * structural so the routes can also sit behind another token scheme.
 *
 * @example
 * ```ts
 * const verifier: FileRoutesTokenVerifier = new SignedUrlMinter({ secret, baseUrl: "https://files.example.com" });
 * const routes = createFileRoutes({ store, minter: verifier });
 * ```
 */
export interface FileRoutesTokenVerifier {
  /** Path prefix of the signed URLs, e.g. `/files`. */
  readonly basePath: string;
  /**
   * Verifies a token for an action. Fails with `INVALID_TOKEN`, `TOKEN_EXPIRED`,
   * `TOKEN_ALREADY_USED` or `NOT_FOUND`.
   */
  verify(
    token: string,
    expected: { action: "download" | "upload"; consume?: boolean },
  ): Promise<VerifiedTokenClaims>;
  /**
   * Uses up a single-use token verified with `consume: false`; fails with `TOKEN_ALREADY_USED` if
   * another request won. When absent, tokens are used up by `verify` itself.
   */
  consume?(claims: VerifiedTokenClaims): Promise<void>;
}

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
 * What {@link FileRoutesOptions.authorize} receives besides the request.
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
 * One stored file in an upload reply.
 *
 * @example
 * ```ts
 * const response = await fetch(ticket.upload_url, { method: "POST", body: form });
 * const { files } = (await response.json()) as { files: UploadReplyFile[] };
 * console.log(files[0]?.handle); // upload://sessions/s1/01jc…
 * ```
 */
export interface UploadReplyFile {
  /** `upload://sessions/{scope}/{id}`: pass it to a tool. */
  handle: string;
  /** Resource URI, when {@link FileRoutesOptions.resourceUri} gives one. */
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
  minter: FileRoutesTokenVerifier;
  /**
   * Path prefix the routes answer under: starts with `/`; `"/"` (or `""`) mounts them at the root.
   * @default minter.basePath
   */
  basePath?: string;
  /**
   * Where ticket uploads are recorded, so the ticket's own handle (returned by `get_upload_url`
   * before the upload) resolves to the uploaded file. Give the same store as the
   * `UploadHandleResolver`.
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
 * Default of {@link FileRoutesOptions.inlineTypes}: media types served `inline`.
 *
 * @example
 * ```ts
 * createFileRoutes({ store, minter, inlineTypes: [...DEFAULT_INLINE_TYPES, "text/csv"] });
 * ```
 */
export const DEFAULT_INLINE_TYPES: readonly string[] = Object.freeze([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "text/plain",
  "application/pdf",
  "audio/mpeg",
  "audio/ogg",
  "audio/wav",
  "video/mp4",
  "video/webm",
]);

const SHA256_HEX = /^[0-9a-f]{64}$/;
const TOKEN_SEGMENT = /^[A-Za-z0-9_\-.~]+$/;
const MAX_FORM_FIELDS = 64;

/**
 * Creates the upload/download HTTP routes as one web-standard `(Request) => Promise<Response |
 * undefined>` function. It answers `undefined` for requests outside its base path, so it composes
 * with any router; mount it on Node with `toNodeHandler` from `mcp-file-bridge/node`, on hono with
 * `app.all("/files/*", (c) => routes(c.req.raw))`, or call it from any fetch-style server.
 *
 * Routes (with the default base path `/files`):
 * - `GET|HEAD /files/download/{token}`: streams a stored file (ranges, ETag, safe disposition).
 * - `POST|PUT /files/upload/{token}`: multipart (one or many files) or a raw body; all-or-nothing.
 *   Optional digests: `sha256` form fields, one per file part in file order (empty skips a file),
 *   or `X-Content-SHA256` / `?sha256=` for a raw body.
 * - `POST|PUT /files/scopes/{scope}/files/{name}`: direct upload for trusted callers (`authorize`).
 *
 * @example
 * ```ts
 * const minter = new SignedUrlMinter({ secret, baseUrl: "http://127.0.0.1:3000", state });
 * const routes = createFileRoutes({ store, minter, state });
 * const response = await routes(new Request(url)); // undefined = not a file route
 * ```
 */
export function createFileRoutes(options: FileRoutesOptions): FileRoutes {
  const config = resolveOptions(options);
  const base = config.basePath;

  return async (request: Request): Promise<Response | undefined> => {
    let pathname: string;
    try {
      pathname = new URL(request.url).pathname;
    } catch {
      return undefined;
    }
    if (!pathname.startsWith(`${base}/`)) return undefined;
    const segments = pathname.slice(base.length + 1).split("/");
    const [route, ...rest] = segments;
    try {
      if ((route === "download" || route === "upload") && rest.length === 1) {
        const token = rest[0] as string;
        if (!TOKEN_SEGMENT.test(token)) return errorResponse(invalidToken());
        if (route === "download") {
          if (request.method !== "GET" && request.method !== "HEAD") return methodNotAllowed("GET, HEAD");
          return await handleDownload(config, request, token);
        }
        if (request.method !== "POST" && request.method !== "PUT") return methodNotAllowed("POST, PUT");
        return await handleTicketUpload(config, request, token);
      }
      if (route === "scopes" && rest.length >= 3 && rest[1] === "files" && config.authorize) {
        if (request.method !== "POST" && request.method !== "PUT") return methodNotAllowed("POST, PUT");
        return await handleDirectUpload(config, request, rest[0] as string, rest.slice(2).join("/"));
      }
      return undefined;
    } catch (error) {
      // Server-side failures (500s, including storage errors wrapped as STORAGE_ERROR) reach onError.
      if (!isFileBridgeError(error) || error.status >= 500) report(config, error);
      return errorResponse(error);
    }
  };
}

interface ResolvedRouteOptions {
  store: FileStore;
  minter: FileRoutesTokenVerifier;
  basePath: string;
  state: StateStore | undefined;
  maxBytes: number;
  maxFiles: number;
  uploadTtlMs: number;
  inlineTypes: ReadonlySet<string>;
  authorize: FileRoutesOptions["authorize"];
  onDownload: FileRoutesOptions["onDownload"];
  onStored: FileRoutesOptions["onStored"];
  resourceUri: FileRoutesOptions["resourceUri"];
  onError: FileRoutesOptions["onError"];
}

function invalidOption(name: string, message: string): FileBridgeError {
  return new FileBridgeError("INVALID_OPTION", `createFileRoutes: ${name} ${message}`, {
    data: { option: name },
  });
}

function resolveOptions(options: FileRoutesOptions): ResolvedRouteOptions {
  if (typeof options !== "object" || options === null) throw invalidOption("options", "must be an object");
  const { store, minter } = options;
  if (!store || typeof store.put !== "function" || typeof store.stage !== "function") {
    throw invalidOption("store", "must be a FileStore");
  }
  if (!minter || typeof minter.verify !== "function")
    throw invalidOption("minter", "must be a SignedUrlMinter");
  const basePath = (options.basePath ?? minter.basePath ?? "/files").replace(/\/+$/, "");
  if (basePath !== "" && (!/^\/[A-Za-z0-9_\-.~/]*$/.test(basePath) || basePath.includes("//"))) {
    throw invalidOption("basePath", 'must be a path like /files (or "/" for the root)');
  }
  const maxBytes = options.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
    throw invalidOption("maxBytes", "must be a positive integer");
  const maxFiles = options.maxFiles ?? DEFAULT_UPLOAD_MAX_FILES;
  if (!Number.isSafeInteger(maxFiles) || maxFiles <= 0)
    throw invalidOption("maxFiles", "must be a positive integer");
  const uploadTtlMs = durationToMs(options.uploadTtl ?? "1h", "createFileRoutes: uploadTtl");
  if (uploadTtlMs <= 0) throw invalidOption("uploadTtl", "must be positive");
  const inlineTypes = new Set<string>();
  for (const type of options.inlineTypes ?? DEFAULT_INLINE_TYPES) {
    const parsed = parseMediaType(type);
    if (!parsed) throw invalidOption("inlineTypes", `has an invalid media type: ${String(type)}`);
    inlineTypes.add(parsed.essence);
  }
  for (const hook of ["authorize", "onDownload", "onStored", "resourceUri", "onError"] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== "function") {
      throw invalidOption(hook, "must be a function");
    }
  }
  const { registry } = options;
  if (
    registry !== undefined &&
    (typeof registry?.uriFor !== "function" || typeof registry.register !== "function")
  ) {
    throw invalidOption("registry", "must be a ResourceRegistry");
  }
  if (options.state !== undefined && typeof options.state?.set !== "function") {
    throw invalidOption("state", "must be a StateStore");
  }
  return {
    store,
    minter,
    basePath,
    state: options.state,
    maxBytes,
    maxFiles,
    uploadTtlMs,
    inlineTypes,
    authorize: options.authorize,
    onDownload: options.onDownload,
    onStored: async (file) => {
      if (registry) await registry.register(file);
      await options.onStored?.(file);
    },
    resourceUri: options.resourceUri ?? (registry ? (file) => registry.uriFor(file) : undefined),
    onError: options.onError,
  };
}

// ---------------------------------------------------------------------------------------------
// Responses

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

function jsonResponse(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...extra } });
}

function errorResponse(error: unknown, extra: Record<string, string> = {}): Response {
  const known = isFileBridgeError(error) ? error : new FileBridgeError("STORAGE_ERROR", "Internal error");
  return jsonResponse(
    known.status,
    { error: { code: known.code, message: known.message, hint: known.hint } },
    extra,
  );
}

function methodNotAllowed(allow: string): Response {
  return errorResponse(new FileBridgeError("METHOD_NOT_ALLOWED", "Method not allowed on this route"), {
    allow,
  });
}

function invalidToken(): FileBridgeError {
  return new FileBridgeError("INVALID_TOKEN", "The link is malformed");
}

function report(config: ResolvedRouteOptions, error: unknown): void {
  try {
    config.onError?.(error);
  } catch {
    // a failing error reporter must not break a response
  }
}

// ---------------------------------------------------------------------------------------------
// Download

async function handleDownload(
  config: ResolvedRouteOptions,
  request: Request,
  token: string,
): Promise<Response> {
  // A single-use link is used up only when bytes are about to be sent: never by HEAD, a 304, a 416
  // or a missing file. Without `consume` on the verifier, only a HEAD is kept from using it up.
  const deferred = typeof config.minter.consume === "function";
  const claims = await config.minter.verify(token, {
    action: "download",
    consume: !deferred && request.method !== "HEAD",
  });
  const file = await config.store.head(claims.scope, claims.fileId);
  if (!file) throw new FileBridgeError("NOT_FOUND", "File not found");

  const etag = `"${file.sha256}"`;
  const essence = parseMediaType(file.mimeType)?.essence;
  const disposition = essence && config.inlineTypes.has(essence) ? "inline" : "attachment";
  const headers = new Headers({
    "content-type": file.mimeType,
    etag,
    "accept-ranges": "bytes",
    "content-disposition": formatContentDisposition(disposition, file.name),
    "x-content-type-options": "nosniff",
    "cache-control": "private, no-store",
    "content-security-policy": "default-src 'none'; sandbox",
  });
  if (!Number.isNaN(file.createdAt)) headers.set("last-modified", new Date(file.createdAt).toUTCString());

  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch && etagListMatches(ifNoneMatch, etag)) {
    return new Response(null, { status: 304, headers });
  }

  const ifRange = request.headers.get("if-range");
  const rangeHeader = ifRange !== null && ifRange.trim() !== etag ? null : request.headers.get("range");
  const range = parseRange(rangeHeader, file.size);
  if (range.kind === "unsatisfiable") {
    headers.set("content-range", `bytes */${file.size}`);
    const body = {
      error: {
        code: "RANGE_NOT_SATISFIABLE",
        message: "The requested range is outside the file",
        hint: "Request a byte range inside the file.",
      },
    };
    headers.set("content-type", JSON_HEADERS["content-type"]);
    headers.delete("content-disposition");
    return new Response(JSON.stringify(body), { status: 416, headers });
  }

  const start = range.kind === "partial" ? range.start : 0;
  const end = range.kind === "partial" ? range.end : file.size - 1;
  const length = file.size === 0 ? 0 : end - start + 1;
  const status = range.kind === "partial" ? 206 : 200;
  headers.set("content-length", String(length));
  if (range.kind === "partial") headers.set("content-range", `bytes ${start}-${end}/${file.size}`);

  if (request.method === "HEAD") return new Response(null, { status, headers });

  const stream = await config.store.read(
    file.scope,
    file.id,
    range.kind === "partial" ? { start, end } : undefined,
  );
  if (!stream) throw new FileBridgeError("NOT_FOUND", "File not found");
  if (deferred) {
    try {
      await config.minter.consume?.(claims);
    } catch (error) {
      stream.destroy();
      throw error;
    }
  }

  let done = false;
  const finish = (bytes: number) => {
    if (done) return;
    done = true;
    if (!config.onDownload) return;
    const event: DownloadEvent = { scope: file.scope, file, bytes, token, claims: { ...claims.claims } };
    if (range.kind === "partial") event.range = { start, end };
    Promise.resolve()
      .then(() => config.onDownload?.(event))
      .catch((error: unknown) => report(config, error));
  };
  let claimed = false;
  const body = lazyWebStream(stream, {
    onEnd: (bytes) => {
      if (!claimed && bytes === length) finish(bytes);
    },
  });
  const response = new Response(body, { status, headers });
  setNodeResponseBody(response, {
    stream,
    claim: () => {
      claimed = true;
    },
    onSent: () => finish(length),
  });
  return response;
}

function etagListMatches(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  return header
    .split(",")
    .map((part) => part.trim().replace(/^W\//, ""))
    .includes(etag);
}

// ---------------------------------------------------------------------------------------------
// Uploads

interface UploadLimits {
  scope: string;
  maxBytes: number;
  maxFiles: number;
  ttlMs: number;
  kind: "upload";
}

function positiveClaim(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

async function handleTicketUpload(
  config: ResolvedRouteOptions,
  request: Request,
  token: string,
): Promise<Response> {
  // A single-use ticket is checked now but used up only when every file is staged and verified, so a
  // failed upload (too large, digest mismatch, aborted) can be retried with the same URL.
  const deferred = typeof config.minter.consume === "function";
  const verified = await config.minter.verify(token, { action: "upload", consume: !deferred });
  const extra = verified.claims ?? {};
  const ttlSeconds = extra[TICKET_CLAIMS.fileTtl];
  const limits: UploadLimits = {
    scope: verified.scope,
    maxBytes: positiveClaim(extra[TICKET_CLAIMS.maxBytes], config.maxBytes),
    maxFiles: positiveClaim(extra[TICKET_CLAIMS.maxFiles], config.maxFiles),
    ttlMs: typeof ttlSeconds === "number" && ttlSeconds > 0 ? ttlSeconds * 1000 : config.uploadTtlMs,
    kind: "upload",
  };
  const files = await storeRequestFiles(config, request, limits, {
    allowMultipart: true,
    beforeCommit: deferred ? () => config.minter.consume?.(verified) : undefined,
  });
  if (config.state) {
    const record: TicketRecord = { scope: limits.scope, files: files.map((file) => file.id) };
    try {
      await config.state.set(ticketStateKey(verified.fileId), record, { ttl: limits.ttlMs / 1000 });
    } catch (error) {
      report(config, error);
    }
  }
  return uploadReply(config, files);
}

async function handleDirectUpload(
  config: ResolvedRouteOptions,
  request: Request,
  rawScope: string,
  rawName: string,
): Promise<Response> {
  let scope: string;
  let name: string;
  try {
    scope = decodeURIComponent(rawScope);
    name = sanitizeRelativePath(decodeURIComponent(rawName));
  } catch (cause) {
    throw new FileBridgeError("INVALID_REQUEST", "The scope or name is not valid percent-encoding", {
      cause,
    });
  }
  assertScope(scope);
  const allowed = await config.authorize?.(request, { scope, name });
  if (allowed !== true) throw new FileBridgeError("FORBIDDEN", "Not allowed to upload to this scope");
  const limits: UploadLimits = {
    scope,
    maxBytes: config.maxBytes,
    maxFiles: 1,
    ttlMs: config.uploadTtlMs,
    kind: "upload",
  };
  const files = await storeRequestFiles(config, request, limits, { allowMultipart: false, name });
  return uploadReply(config, files);
}

async function uploadReply(config: ResolvedRouteOptions, files: StoredFile[]): Promise<Response> {
  for (const file of files) {
    try {
      await config.onStored?.(file);
    } catch (error) {
      report(config, error);
    }
  }
  const reply: UploadReplyFile[] = files.map((file) => {
    const entry: UploadReplyFile = {
      handle: uploadHandleOf(file),
      id: file.id,
      name: file.name,
      size: file.size,
      sha256: file.sha256,
      mimeType: file.mimeType,
    };
    const uri = config.resourceUri?.(file);
    if (uri) entry.uri = uri;
    if (file.expiresAt !== undefined) entry.expiresAt = new Date(file.expiresAt).toISOString();
    return entry;
  });
  return jsonResponse(201, { files: reply });
}

function declaredSha256(value: string | null, where: string): string | undefined {
  if (value === null) return undefined;
  const normalized = value.trim().toLowerCase();
  if (!SHA256_HEX.test(normalized)) {
    throw new FileBridgeError("INVALID_REQUEST", `${where} must be 64 hex characters`);
  }
  return normalized;
}

function declaredLength(request: Request): number | undefined {
  const value = request.headers.get("content-length");
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

/**
 * Stages every file of the request, then commits all of them, or aborts all of them on any failure
 * (cap, digest, malformed body, client abort): a batch is all-or-nothing.
 */
async function storeRequestFiles(
  config: ResolvedRouteOptions,
  request: Request,
  limits: UploadLimits,
  mode: {
    allowMultipart: boolean;
    name?: string;
    beforeCommit?: (() => Promise<void> | undefined) | undefined;
  },
): Promise<StoredFile[]> {
  const contentType = request.headers.get("content-type");
  const media = parseMediaType(contentType);
  const multipart = mode.allowMultipart && media?.essence === "multipart/form-data";
  const length = declaredLength(request);
  // Framing overhead of a multipart body is small next to the cap; refuse what cannot fit early.
  const ceiling = multipart
    ? limits.maxBytes * limits.maxFiles + 64 * 1024 * limits.maxFiles
    : limits.maxBytes;
  if (length !== undefined && length > ceiling) {
    throw new FileBridgeError("FILE_TOO_LARGE", `The upload is larger than ${limits.maxBytes} bytes`, {
      data: { limit: limits.maxBytes },
    });
  }

  const controller = new AbortController();
  const onAbort = () => controller.abort(request.signal.reason);
  if (request.signal.aborted) onAbort();
  else request.signal.addEventListener("abort", onAbort, { once: true });

  const body = requestBodyAsNode(request);
  if (!body) throw new FileBridgeError("INVALID_REQUEST", "The request has no body");

  const staged: StagedFile[] = [];
  try {
    const parts = multipart
      ? await stageMultipart(config, body, contentType as string, limits, controller)
      : [await stageRaw(config, request, body, limits, controller, mode.name)];
    staged.push(...parts.map((part) => part.staged));
    for (const part of parts) {
      if (part.sha256 !== undefined && part.sha256 !== part.staged.file.sha256) {
        throw new FileBridgeError(
          "DIGEST_MISMATCH",
          `The sha256 of ${part.staged.file.name} does not match`,
          {
            data: { name: part.staged.file.name },
          },
        );
      }
    }
    if (request.signal.aborted) throw new FileBridgeError("ABORTED", "The client aborted the upload");
    await mode.beforeCommit?.();
    const committed: StoredFile[] = [];
    try {
      for (const part of staged) committed.push(await part.commit());
    } catch (error) {
      await Promise.allSettled(committed.map((file) => config.store.delete(file.scope, file.id)));
      throw error;
    }
    return committed;
  } catch (error) {
    await Promise.allSettled(staged.map((part) => part.abort()));
    discard(body);
    throw toUploadError(error, request.signal.aborted);
  } finally {
    request.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * Stops using a request body after a failure. A Node `IncomingMessage` is drained (destroying it
 * would also destroy the socket, and the client would never see the error response); a converted
 * web body is cancelled.
 */
function discard(body: Readable): void {
  body.unpipe();
  if ("socket" in body) {
    if (!body.destroyed) body.resume();
    return;
  }
  if (!body.destroyed) body.destroy();
}

function toUploadError(error: unknown, aborted: boolean): unknown {
  if (isFileBridgeError(error)) return error;
  if (aborted) return new FileBridgeError("ABORTED", "The client aborted the upload", { cause: error });
  return new FileBridgeError("STORAGE_ERROR", "The upload could not be stored", { cause: error });
}

interface StagedPart {
  staged: StagedFile;
  sha256: string | undefined;
}

async function stageRaw(
  config: ResolvedRouteOptions,
  request: Request,
  body: Readable,
  limits: UploadLimits,
  controller: AbortController,
  fixedName: string | undefined,
): Promise<StagedPart> {
  const url = new URL(request.url);
  const sha256 =
    declaredSha256(request.headers.get("x-content-sha256"), "X-Content-SHA256") ??
    declaredSha256(url.searchParams.get("sha256"), "sha256");
  const name =
    fixedName ??
    sanitizeFileName(
      parseContentDispositionFileName(request.headers.get("content-disposition")) ??
        url.searchParams.get("filename") ??
        undefined,
    );
  const declaredType = request.headers.get("content-type");
  let bodyError: unknown;
  body.once("error", (error) => {
    bodyError = error;
    controller.abort(error);
  });
  // The store destroys its source on failure; a pass-through keeps that from destroying the socket
  // (the client must still get the 413), and `pipe` simply unpipes when it goes.
  const source = new PassThrough();
  body.pipe(source);
  try {
    const staged = await config.store.stage(source, {
      scope: limits.scope,
      name,
      mimeType: chooseMediaType(declaredType, name),
      kind: limits.kind,
      ttl: limits.ttlMs / 1000,
      maxBytes: limits.maxBytes,
      signal: controller.signal,
    });
    if (bodyError !== undefined) {
      await staged.abort();
      throw new FileBridgeError("ABORTED", "The request body ended early", { cause: bodyError });
    }
    return { staged, sha256 };
  } catch (error) {
    if (bodyError !== undefined && !isFileBridgeError(error, "FILE_TOO_LARGE")) {
      throw new FileBridgeError("ABORTED", "The request body ended early", { cause: bodyError });
    }
    throw error;
  }
}

function stageMultipart(
  config: ResolvedRouteOptions,
  body: Readable,
  contentType: string,
  limits: UploadLimits,
  controller: AbortController,
): Promise<StagedPart[]> {
  let parser: BusboyInstance;
  try {
    parser = Busboy({
      headers: { "content-type": contentType },
      preservePath: false,
      limits: {
        files: limits.maxFiles,
        fields: MAX_FORM_FIELDS,
        parts: limits.maxFiles + MAX_FORM_FIELDS,
        fieldSize: 1024,
        fieldNameSize: 100,
        headerPairs: 64,
      },
    });
  } catch (cause) {
    return Promise.reject(new FileBridgeError("INVALID_REQUEST", "Malformed multipart request", { cause }));
  }

  return new Promise<StagedPart[]>((resolve, reject) => {
    const pending: Array<Promise<StagedFile>> = [];
    const active = new Set<BusboyFileStream>();
    // The n-th `sha256` field is the digest of the n-th file part (busboy emits parts in body order);
    // an empty value means "no digest for this file". Any other count than one per file is refused,
    // so a digest can never silently end up checked against the wrong file, or against none.
    const digests: Array<string | undefined> = [];
    let failure: unknown;
    let parsed = false;

    const settle = async () => {
      const results = await Promise.allSettled(pending);
      const staged = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
      const rejected = results.find((result) => result.status === "rejected");
      const error = failure ?? (rejected as PromiseRejectedResult | undefined)?.reason;
      if (error !== undefined) {
        await Promise.allSettled(staged.map((part) => part.abort()));
        reject(error);
        return;
      }
      if (staged.length === 0) {
        reject(new FileBridgeError("INVALID_REQUEST", "The form has no file part"));
        return;
      }
      if (digests.length > 0 && digests.length !== staged.length) {
        await Promise.allSettled(staged.map((part) => part.abort()));
        reject(
          new FileBridgeError(
            "INVALID_REQUEST",
            `Got ${digests.length} sha256 fields for ${staged.length} files: send one per file, in file order (empty to skip one), or none`,
            { data: { files: staged.length, digests: digests.length } },
          ),
        );
        return;
      }
      resolve(staged.map((part, index) => ({ staged: part, sha256: digests[index] })));
    };

    const fail = (error: unknown) => {
      if (failure !== undefined || parsed) return;
      failure = error;
      parsed = true;
      controller.abort(error);
      body.unpipe(parser);
      for (const stream of active) stream.destroy();
      void settle();
    };

    parser.on("file", (_field, stream, filename, _encoding, mimeType) => {
      if (failure !== undefined) {
        stream.resume();
        return;
      }
      active.add(stream);
      stream.on("error", () => {}); // failures surface through the store's promise
      stream.once("close", () => active.delete(stream));
      stream.once("end", () => active.delete(stream));
      const name = sanitizeFileName(filename);
      const staging = config.store.stage(stream, {
        scope: limits.scope,
        name,
        mimeType: chooseMediaType(mimeType, name),
        kind: limits.kind,
        ttl: limits.ttlMs / 1000,
        maxBytes: limits.maxBytes,
        signal: controller.signal,
      });
      staging.catch(fail);
      pending.push(staging);
    });
    parser.on("field", (field, value) => {
      if (field !== "sha256") return;
      try {
        digests.push(value.trim() === "" ? undefined : declaredSha256(value, "sha256"));
      } catch (error) {
        fail(error);
      }
    });
    parser.on("filesLimit", () =>
      fail(
        new FileBridgeError("INVALID_REQUEST", `At most ${limits.maxFiles} files per upload`, {
          data: { maxFiles: limits.maxFiles },
        }),
      ),
    );
    parser.on("partsLimit", () => fail(new FileBridgeError("INVALID_REQUEST", "Too many form parts")));
    parser.on("fieldsLimit", () => fail(new FileBridgeError("INVALID_REQUEST", "Too many form fields")));
    parser.on("error", (cause: unknown) =>
      fail(new FileBridgeError("INVALID_REQUEST", "Malformed multipart request", { cause })),
    );
    parser.on("finish", () => {
      if (parsed) return;
      parsed = true;
      void settle();
    });
    body.on("error", (cause) =>
      fail(new FileBridgeError("ABORTED", "The request body ended early", { cause })),
    );
    body.pipe(parser);
  });
}
