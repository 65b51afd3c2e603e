import { type CorsPolicy, resolveCorsPolicy } from "../http/cors-policy.js";
import type { MinRate } from "../http/timeouts.js";
import type { Duration } from "../internal/duration.js";
import {
  DEFAULT_DOWNLOAD_TIMEOUT,
  DEFAULT_IDLE_TIMEOUT,
  DEFAULT_MIN_UPLOAD_RATE,
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_MAX_FILES,
  DEFAULT_UPLOAD_TIMEOUT,
} from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { parseMediaType } from "../media/media-type.js";
import type { UrlSigner } from "../signing/types.js";
import type { FileStore, StateStore } from "../storage/types.js";
import type { TusOptions } from "../uploads/tus/service.js";
import type { FileRoutesOptions, UploadPageRenderer } from "./types.js";

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
  minter: Pick<UrlSigner, "verify" | "consume" | "basePath" | "scopeRefs">;
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
  /** The slowest an upload body may arrive; `undefined` = off. */
  minUploadRate: MinRate | undefined;
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
  /** The tus endpoint's options; `undefined` = off. */
  tus: TusOptions | undefined;
}

const check = optionCheck("createFileRoutes");

/** Node timers take at most a signed 32-bit number of milliseconds. */
const MAX_TIMER_MS = 2_147_483_647;

/** A timeout option in milliseconds (`0` = off); the error names the option. */
function timeoutMs(value: Duration | undefined, fallback: Duration, name: string): number {
  return check.duration(value, name, fallback, {
    maxMs: MAX_TIMER_MS,
    maxLabel: "24 days",
    zeroMeans: "turns it off",
  });
}

/** `createFileRoutes`' options, one kit step each, defaults filled in. */
export function resolveOptions(options: FileRoutesOptions): ResolvedRouteOptions {
  check.object(options);
  const store = check.implementing(options.store, "store", ["put", "stage"], "a FileStore");
  const minter = check.implementing(options.minter, "minter", ["verify"], "a SignedUrlMinter");
  const registry = check.optionalImplementing(
    options.registry,
    "registry",
    ["uriFor", "register"],
    "a ResourceRegistry",
  );
  const hooks = checkHooks(options);
  return {
    store,
    minter,
    basePath: checkBasePath(options.basePath ?? minter.basePath ?? "/files"),
    state: check.optionalImplementing(
      options.state,
      "state",
      ["set", "setIfAbsent", "delete"],
      "a StateStore",
    ),
    maxBytes: check.integer(options.maxBytes, "maxBytes", DEFAULT_UPLOAD_MAX_BYTES, { min: 1 }),
    maxFiles: check.integer(options.maxFiles, "maxFiles", DEFAULT_UPLOAD_MAX_FILES, { min: 1 }),
    uploadTtlMs: check.duration(options.uploadTtl, "uploadTtl", "1h", { positive: true }),
    idleTimeoutMs: timeoutMs(options.idleTimeout, DEFAULT_IDLE_TIMEOUT, "idleTimeout"),
    uploadTimeoutMs: timeoutMs(options.uploadTimeout, DEFAULT_UPLOAD_TIMEOUT, "uploadTimeout"),
    downloadTimeoutMs: timeoutMs(options.downloadTimeout, DEFAULT_DOWNLOAD_TIMEOUT, "downloadTimeout"),
    minUploadRate: checkMinUploadRate(options.minUploadRate),
    inlineTypes: checkInlineTypes(options.inlineTypes ?? DEFAULT_INLINE_TYPES),
    uploadsInFlight: new Set(),
    ...hooks,
    onStored: async (file) => {
      if (registry) await registry.register(file);
      await hooks.onStored?.(file);
    },
    resourceUri: hooks.resourceUri ?? (registry ? (file) => registry.uriFor(file) : undefined),
    cors: checkCors(options.allowedOrigins),
    uploadPage: resolveUploadPage(options.uploadPage, minter),
    tus: options.tus === false ? undefined : (options.tus ?? {}),
  };
}

function checkMinUploadRate(value: FileRoutesOptions["minUploadRate"]): MinRate | undefined {
  if (value === false) return undefined;
  const given = value ?? DEFAULT_MIN_UPLOAD_RATE;
  check.require(typeof given === "object" && given !== null, "minUploadRate", "must be an object or false");
  const bytesPerSecond = check.integer(given.bytesPerSecond, "minUploadRate.bytesPerSecond", 1024, {
    min: 1,
  });
  const windowMs = check.duration(given.window, "minUploadRate.window", DEFAULT_MIN_UPLOAD_RATE.window, {
    positive: true,
    maxMs: MAX_TIMER_MS,
    maxLabel: "24 days",
  });
  return { bytesPerSecond, windowMs };
}

function checkBasePath(value: string): string {
  const basePath = value.replace(/\/+$/, "");
  check.require(
    basePath === "" || (/^\/[A-Za-z0-9_\-.~/]*$/.test(basePath) && !basePath.includes("//")),
    "basePath",
    'must be a path like /files (or "/" for the root)',
  );
  return basePath;
}

function checkInlineTypes(types: readonly string[]): Set<string> {
  const inlineTypes = new Set<string>();
  for (const type of types) {
    const parsed = parseMediaType(type);
    if (!parsed) throw check.error("inlineTypes", `has an invalid media type: ${String(type)}`);
    inlineTypes.add(parsed.essence);
  }
  return inlineTypes;
}

/** The callbacks, each optional. */
function checkHooks(options: FileRoutesOptions) {
  return {
    authorize: check.optionalFunction(options.authorize, "authorize"),
    rateLimit: check.optionalFunction(options.rateLimit, "rateLimit"),
    onDownload: check.optionalFunction(options.onDownload, "onDownload"),
    onStored: check.optionalFunction(options.onStored, "onStored"),
    resourceUri: check.optionalFunction(options.resourceUri, "resourceUri"),
    onError: check.optionalFunction(options.onError, "onError"),
  };
}

function checkCors(allowedOrigins: FileRoutesOptions["allowedOrigins"]): CorsPolicy | undefined {
  try {
    return resolveCorsPolicy(allowedOrigins);
  } catch (cause) {
    throw check.error("allowedOrigins", cause instanceof Error ? cause.message : String(cause), cause);
  }
}

function resolveUploadPage(
  value: FileRoutesOptions["uploadPage"],
  minter: Pick<UrlSigner, "verify" | "consume" | "basePath" | "scopeRefs">,
): UploadPageRenderer | undefined {
  if (value === undefined) return undefined;
  const renderer = value as Partial<UploadPageRenderer> | null;
  if (typeof renderer?.wants !== "function" || typeof renderer.render !== "function") {
    throw check.error(
      "uploadPage",
      'must be an upload page renderer: uploadPage: uploadPageRenderer() from "mcp-file-bridge/ui"',
    );
  }
  // Viewing the page must not use the ticket up: the verifier must check without consuming.
  if (typeof minter.consume !== "function") {
    throw check.error("uploadPage", "needs a minter with consume() (a SignedUrlMinter has it)");
  }
  return value;
}
