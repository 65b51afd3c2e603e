/**
 * The files extension's dependencies and checked options (`files-extension.ts`), apart so that the
 * request bodies loaded on first use (`files-extension-calls.ts`) share their types without an import
 * cycle.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import type { ScopeFunction } from "../scope/scope.js";
import type { ScopeRefs } from "../scope/scope-refs.js";
import type { UrlSigner } from "../signing/types.js";
import type { StoredFile } from "../storage/types.js";
import type { DirectUploadStrategy } from "./direct-upload.js";
import type { FilesExtensionOptions } from "./types.js";

/** What the extension borrows from its `UploadHandleResolver`. */
export interface FilesExtensionDeps {
  minter: Pick<UrlSigner, "mint" | "downloadUrl" | "scopeRefs">;
  scope: ScopeFunction;
  maxBytes: number;
  ticketTtl: Duration;
  handleTtlSeconds: number;
  filesFor(handle: string, options: { scope: string }): Promise<StoredFile[] | null>;
  /** How scopes become references in handles: the minter's (`minter.scopeRefs`). */
  refs: ScopeRefs;
  /** The direct-to-storage descriptor strategy, when `direct` is on. */
  direct?: DirectUploadStrategy | undefined;
  /** Asks the resolver's rate limit before a ticket is minted; throws `RATE_LIMITED` when refused. */
  allowTicket?: (scope: string, method: string) => Promise<void>;
}

export function invalidOption(name: string, message: string): FileBridgeError {
  return new FileBridgeError("INVALID_OPTION", `files extension: ${name} ${message}`, {
    data: { option: name },
  });
}

/** The checked options, with defaults. */
export type FilesExtensionSettings = ReturnType<typeof settingsOf>;

/** The checked options, with defaults. */
export function settingsOf(options: FilesExtensionOptions, maxBytes: number) {
  if (typeof options !== "object" || options === null) throw invalidOption("options", "must be an object");
  const {
    accept,
    maxSize = maxBytes,
    uploadMethod = "PUT",
    variant = true,
    downloadTtl,
    direct,
    tus = true,
  } = options;
  if (accept !== undefined && (!Array.isArray(accept) || accept.some((each) => typeof each !== "string"))) {
    throw invalidOption("accept", "must be a list of media types");
  }
  if (!Number.isSafeInteger(maxSize) || maxSize <= 0 || maxSize > maxBytes) {
    throw invalidOption("maxSize", `must be a positive integer up to the resolver's maxBytes (${maxBytes})`);
  }
  if (uploadMethod !== "PUT" && uploadMethod !== "POST")
    throw invalidOption("uploadMethod", 'must be "PUT" or "POST"');
  if (typeof variant !== "boolean") throw invalidOption("variant", "must be a boolean");
  if (typeof tus !== "boolean") throw invalidOption("tus", "must be a boolean");
  if (
    direct !== undefined &&
    typeof direct !== "boolean" &&
    (typeof direct !== "object" || direct === null)
  ) {
    throw invalidOption("direct", "must be a boolean or an object");
  }
  if (direct && uploadMethod === "POST") {
    throw invalidOption("direct", 'hands out presigned POST forms: it cannot go with uploadMethod "POST"');
  }
  if (downloadTtl !== undefined) durationToMs(downloadTtl, "files extension: downloadTtl");
  return { accept, maxSize, uploadMethod, variant, downloadTtl, tus };
}
