import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import {
  DEFAULT_DOWNLOAD_TIMEOUT,
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_MAX_FILES,
  DEFAULT_UPLOAD_TIMEOUT,
} from "../internal/limits.js";
import { parseMediaType } from "../media/media-type.js";
import type { FileStore, StateStore } from "../storage/types.js";
import { type CorsPolicy, resolveCorsPolicy } from "./cors.js";
import type { FileRoutesOptions, FileRoutesTokenVerifier, UploadPageRenderer } from "./types.js";

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

/** The options of `createFileRoutes`, checked and with their defaults filled in. */
export interface ResolvedRouteOptions {
  store: FileStore;
  minter: FileRoutesTokenVerifier;
  basePath: string;
  state: StateStore | undefined;
  maxBytes: number;
  maxFiles: number;
  uploadTtlMs: number;
  /** Milliseconds; 0 = off. */
  idleTimeoutMs: number;
  /** Milliseconds; 0 = off. */
  uploadTimeoutMs: number;
  /** Milliseconds; 0 = off. */
  downloadTimeoutMs: number;
  inlineTypes: ReadonlySet<string>;
  /** Claims of single-use tickets whose upload runs now, when there is no `state` to hold them. */
  uploadsInFlight: Set<string>;
  authorize: FileRoutesOptions["authorize"];
  rateLimit: FileRoutesOptions["rateLimit"];
  onDownload: FileRoutesOptions["onDownload"];
  onStored: FileRoutesOptions["onStored"];
  resourceUri: FileRoutesOptions["resourceUri"];
  onError: FileRoutesOptions["onError"];
  /** `allowedOrigins`, checked; `undefined` = no CORS. */
  cors: CorsPolicy | undefined;
  /** The injected upload page, when on. */
  uploadPage: UploadPageRenderer | undefined;
}

function invalidOption(name: string, message: string, cause?: unknown): FileBridgeError {
  return new FileBridgeError("INVALID_OPTION", `createFileRoutes: ${name} ${message}`, {
    data: { option: name },
    cause,
  });
}

/** A timeout option in milliseconds (`0` = off); the error names the option. */
function timeoutMs(value: Duration | undefined, fallback: Duration, name: string): number {
  let ms: number;
  try {
    ms = durationToMs(value ?? fallback, `createFileRoutes: ${name}`);
  } catch (cause) {
    throw invalidOption(name, 'must be seconds or a duration like "30s" (0 turns it off)', cause);
  }
  // Node timers take at most a signed 32-bit number of milliseconds.
  if (ms > 2_147_483_647) throw invalidOption(name, "must be at most 24 days");
  return ms;
}

export function resolveOptions(options: FileRoutesOptions): ResolvedRouteOptions {
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
  const idleTimeoutMs = timeoutMs(options.idleTimeout, DEFAULT_IDLE_TIMEOUT, "idleTimeout");
  const uploadTimeoutMs = timeoutMs(options.uploadTimeout, DEFAULT_UPLOAD_TIMEOUT, "uploadTimeout");
  const downloadTimeoutMs = timeoutMs(options.downloadTimeout, DEFAULT_DOWNLOAD_TIMEOUT, "downloadTimeout");
  const inlineTypes = new Set<string>();
  for (const type of options.inlineTypes ?? DEFAULT_INLINE_TYPES) {
    const parsed = parseMediaType(type);
    if (!parsed) throw invalidOption("inlineTypes", `has an invalid media type: ${String(type)}`);
    inlineTypes.add(parsed.essence);
  }
  for (const hook of [
    "authorize",
    "rateLimit",
    "onDownload",
    "onStored",
    "resourceUri",
    "onError",
  ] as const) {
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
  if (
    options.state !== undefined &&
    (typeof options.state?.set !== "function" ||
      typeof options.state.setIfAbsent !== "function" ||
      typeof options.state.delete !== "function")
  ) {
    throw invalidOption("state", "must be a StateStore");
  }
  let cors: CorsPolicy | undefined;
  try {
    cors = resolveCorsPolicy(options.allowedOrigins);
  } catch (cause) {
    throw invalidOption("allowedOrigins", cause instanceof Error ? cause.message : String(cause), cause);
  }
  const uploadPage = resolveUploadPage(options.uploadPage, minter);
  return {
    store,
    minter,
    basePath,
    state: options.state,
    maxBytes,
    maxFiles,
    uploadTtlMs,
    idleTimeoutMs,
    uploadTimeoutMs,
    downloadTimeoutMs,
    inlineTypes,
    uploadsInFlight: new Set(),
    authorize: options.authorize,
    rateLimit: options.rateLimit,
    onDownload: options.onDownload,
    onStored: async (file) => {
      if (registry) await registry.register(file);
      await options.onStored?.(file);
    },
    resourceUri: options.resourceUri ?? (registry ? (file) => registry.uriFor(file) : undefined),
    onError: options.onError,
    cors,
    uploadPage,
  };
}

function resolveUploadPage(
  value: FileRoutesOptions["uploadPage"],
  minter: FileRoutesTokenVerifier,
): UploadPageRenderer | undefined {
  if (value === undefined) return undefined;
  const renderer = value as Partial<UploadPageRenderer> | null;
  if (typeof renderer?.wants !== "function" || typeof renderer.render !== "function") {
    throw invalidOption(
      "uploadPage",
      'must be an upload page renderer: uploadPage: uploadPageRenderer() from "mcp-file-bridge/ui"',
    );
  }
  // Viewing the page must not use the ticket up: the verifier must check without consuming.
  if (typeof minter.consume !== "function") {
    throw invalidOption("uploadPage", "needs a minter with consume() (a SignedUrlMinter has it)");
  }
  return value;
}
