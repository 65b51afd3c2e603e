/** Checking a `ResourceRegistry`'s options when it is constructed; the class keeps the result. */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { DEFAULT_MAX_INLINE_BYTES } from "../internal/limits.js";
import { parseMediaType } from "../media/media-type.js";
import { defaultScope, type ScopeFunction } from "../scope/scope.js";
import { scopeRefsOf } from "../scope/scope-refs.js";
import type { DownloadClaimsFunction } from "../signing/signed-url-minter.js";
import type { ChangeFeed, FileStore } from "../storage/types.js";
import type { AuthorizeFunction, DownloadUrlMinter, ResourceRegistryOptions } from "./options.js";
import { TemplateSet } from "./templates.js";

function invalidOption(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_OPTION", message);
}

/** A registry's options, checked (`INVALID_OPTION` naming the bad one), defaults filled in. */
export interface RegistrySettings {
  readonly store: FileStore;
  readonly templates: TemplateSet;
  readonly scopeOf: ScopeFunction;
  readonly authorizeFn: AuthorizeFunction | undefined;
  readonly feed: ChangeFeed | undefined;
  readonly listMode: "list" | "none";
  readonly pageSize: number;
  readonly maxInlineBytes: number;
  readonly textTypes: ReadonlySet<string>;
  readonly minter: DownloadUrlMinter | undefined;
  readonly downloadClaims: DownloadClaimsFunction | undefined;
  readonly notifyDelayMs: number;
  readonly now: () => number;
}

/** Checks a registry's options when it is constructed. */
export function checkRegistryOptions(options: ResourceRegistryOptions): RegistrySettings {
  if (typeof options !== "object" || options === null) throw invalidOption("options must be an object");
  const store = options.store;
  if (
    typeof store !== "object" ||
    store === null ||
    typeof store.put !== "function" ||
    typeof store.head !== "function" ||
    typeof store.read !== "function" ||
    typeof store.list !== "function" ||
    typeof store.delete !== "function"
  ) {
    throw invalidOption("store must be a FileStore");
  }

  const templates = new TemplateSet(options.templates, scopeRefsOf(options.minter));

  if (options.scope !== undefined && typeof options.scope !== "function") {
    throw invalidOption("scope must be a function");
  }

  if (options.authorize !== undefined && typeof options.authorize !== "function") {
    throw invalidOption("authorize must be a function");
  }
  if (options.authorize !== undefined && !templates.hasRawScope()) {
    throw invalidOption(
      'authorize needs a template with scopeInUri: "raw": with scope references in every URI, a URI ' +
        "can only name the caller's own scope (use raw only for non-secret, verified ids such as chat ids)",
    );
  }

  if (
    options.feed !== undefined &&
    (typeof options.feed !== "object" ||
      options.feed === null ||
      typeof options.feed.publish !== "function" ||
      typeof options.feed.subscribe !== "function")
  ) {
    throw invalidOption("feed must be a ChangeFeed");
  }

  const listMode = options.listMode ?? "list";
  if (listMode !== "list" && listMode !== "none") throw invalidOption('listMode must be "list" or "none"');

  const pageSize = options.pageSize ?? 100;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    throw invalidOption("pageSize must be an integer from 1 to 1000");
  }

  const maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
  if (!Number.isSafeInteger(maxInlineBytes) || maxInlineBytes < 0) {
    throw invalidOption("maxInlineBytes must be a non-negative integer");
  }

  const textTypes = options.textTypes ?? [];
  if (!Array.isArray(textTypes)) throw invalidOption("textTypes must be an array of media types");
  const normalized = new Set<string>();
  for (const type of textTypes) {
    const parsed = parseMediaType(typeof type === "string" ? type.replace(/\/\*$/, "/x-any") : type);
    if (!parsed) throw invalidOption(`textTypes: ${String(type)} is not a media type`);
    normalized.add(type.endsWith("/*") ? `${parsed.type}/*` : parsed.essence);
  }

  if (
    options.minter !== undefined &&
    (typeof options.minter !== "object" ||
      options.minter === null ||
      typeof options.minter.downloadUrl !== "function")
  ) {
    throw invalidOption("minter must have a downloadUrl(file) method");
  }

  if (options.downloadClaims !== undefined && typeof options.downloadClaims !== "function") {
    throw new FileBridgeError("INVALID_OPTION", "downloadClaims must be a function", {
      data: { option: "downloadClaims" },
    });
  }

  const notifyDelayMs = options.notifyDelayMs ?? 10;
  if (!Number.isFinite(notifyDelayMs) || notifyDelayMs < 0) {
    throw invalidOption("notifyDelayMs must be a non-negative number");
  }

  if (options.now !== undefined && typeof options.now !== "function") {
    throw invalidOption("now must be a function");
  }
  return {
    store,
    templates,
    scopeOf: options.scope ?? defaultScope,
    authorizeFn: options.authorize,
    feed: options.feed,
    listMode,
    pageSize,
    maxInlineBytes,
    textTypes: normalized,
    minter: options.minter,
    downloadClaims: options.downloadClaims,
    notifyDelayMs,
    now: options.now ?? Date.now,
  };
}
