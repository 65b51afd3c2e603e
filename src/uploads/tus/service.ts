/**
 * What every tus request shares: the routes' upload config, the state store holding records and
 * locks, the byte staging and the clock, checked and made when the routes are made. The ticket check
 * that binds each request to a scope is in `ticket.ts`, loaded with the tus handler.
 */

import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { writableDisk } from "../../internal/runtime.js";
import { memoryState } from "../../storage/memory-state.js";
import type { FileStore, StateStore } from "../../storage/types.js";
import type { UploadHandlerConfig, VerifiedTokenClaims } from "../handler-types.js";
import type { UploadLimits } from "../upload-staging.js";
import { fsTusStaging, type TusStaging } from "./fs-staging.js";
import { memoryTusStaging } from "./memory-staging.js";
import type { RunningHashes } from "./running-hash.js";

/**
 * Progress of one tus upload, as {@link TusOptions.onProgress} receives it while bytes arrive and
 * once more when the upload is committed.
 *
 * @example
 * ```ts
 * const onProgress = ({ ticketId, offset, length }: TusProgress) => console.log(ticketId, offset, length);
 * ```
 */
export interface TusProgress {
  /** The upload ticket's id. */
  ticketId: string;
  /** The ticket's scope. */
  scope: string;
  /** Bytes received so far (this process's view while a `PATCH` runs). */
  offset: number;
  /** Declared length, when known. */
  length: number | undefined;
  /** The stored file's id, once committed. */
  fileId?: string;
}

/**
 * The tus endpoint's options (`createFileRoutes({ tus })`).
 *
 * @example
 * ```ts
 * createFileRoutes({ store, minter, state, tus: { staging: fsTusStaging("/srv/tus"), lockTtl: 30 } });
 * ```
 */
export interface TusOptions {
  /** Where bytes wait until commit. @default fsTusStaging() (a folder under the OS temp folder) */
  staging?: TusStaging;
  /** Seconds a writer's lock lives without renewal (a dead replica frees it after this). @default 30 */
  lockTtl?: number;
  /** Called while bytes arrive (at most every 4 MiB) and at commit. */
  onProgress?: (progress: TusProgress) => void;
  /** The clock. @default Date.now */
  now?: () => number;
}

/** The checked tus options and the shared services, as `tusService` makes them when the routes are. */
export interface TusSettings {
  config: UploadHandlerConfig;
  state: StateStore;
  staging: TusStaging;
  lockTtlMs: number;
  now: () => number;
  onProgress: ((progress: TusProgress) => void) | undefined;
  /**
   * Whether a commit hands the staged bytes to the store (`FileStore.adopt` and a staging with local
   * files or adoptable objects): then bytes are hashed as they arrive, in {@link hashes}.
   */
  adopts: boolean;
}

/**
 * What every tus request shares: the settings, and the running sha256 of the uploads this process
 * writes (made with the tus handler at the first tus request, `tus-handler.ts`).
 */
export interface TusService extends TusSettings {
  /** The running sha256 of the uploads this process writes. */
  hashes: RunningHashes;
}

/** A verified ticket and what it allows. */
export interface TusTicket {
  verified: VerifiedTokenClaims;
  /** The sha256 (base64url) of the token as sent: what a used ticket's `HEAD` is matched by. */
  tokenHash: string;
  limits: UploadLimits;
  /** When uploads under the ticket expire (the ticket's own expiry). */
  expiresAt: number;
}

/** Checks the options and builds the shared services (a private `memoryState()` without `state`). */
export function tusService(config: UploadHandlerConfig, options: TusOptions = {}): TusSettings {
  const lockTtl = options.lockTtl ?? 30;
  if (typeof lockTtl !== "number" || !(lockTtl >= 1)) {
    throw new FileBridgeError("INVALID_OPTION", "tus.lockTtl must be a number of seconds ≥ 1");
  }
  const state = config.state ?? memoryState();
  const staging = options.staging ?? defaultStaging(config, state);
  return {
    config,
    state,
    staging,
    adopts:
      typeof config.store.adopt === "function" &&
      (typeof staging.localPath === "function" || typeof staging.adoptable === "function"),
    lockTtlMs: lockTtl * 1000,
    now: options.now ?? Date.now,
    onProgress: options.onProgress,
  };
}

/**
 * A store that stages tus uploads its own way (an `s3Store`: a multipart upload in its bucket). The
 * tus endpoint asks the store for it, so the uploads code never names a driver.
 *
 * @example
 * ```ts
 * const staging = (store as Partial<TusStagingSource>).tusStaging?.(state) ?? fsTusStaging();
 * ```
 */
export interface TusStagingSource {
  /** The staging for the tus uploads of this store, keeping its records in `state`. */
  tusStaging(state: StateStore): TusStaging;
}

/**
 * The store's own staging when it offers one; else staging files under the OS temp folder, or in
 * memory on a runtime without a writable disk (Workers, Deno without write access).
 */
function defaultStaging(config: UploadHandlerConfig, state: StateStore): TusStaging {
  const store = config.store as FileStore & Partial<TusStagingSource>;
  if (typeof store.tusStaging === "function") return store.tusStaging(state);
  return writableDisk() ? fsTusStaging() : memoryTusStaging();
}
