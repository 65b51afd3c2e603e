/** Checking a `ResourceRegistry`'s options when it is constructed; the class keeps the result. */
import { DEFAULT_MAX_INLINE_BYTES } from "../internal/limits.js";
import { optionCheck } from "../internal/options.js";
import { parseMediaType } from "../media/media-type.js";
import { defaultScope, type ScopeFunction } from "../scope/scope.js";
import { scopeRefsOf } from "../scope/scope-refs.js";
import type { DownloadClaimsFunction, UrlSigner } from "../signing/types.js";
import type { ChangeFeed, FileStore } from "../storage/types.js";
import type { AuthorizeFunction, ResourceRegistryOptions } from "./options.js";
import { TemplateSet } from "./templates.js";

const check = optionCheck("ResourceRegistry");

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
  readonly minter: Pick<UrlSigner, "downloadUrl" | "scopeRefs"> | undefined;
  readonly downloadClaims: DownloadClaimsFunction | undefined;
  readonly notifyDelayMs: number;
  readonly now: () => number;
}

/** Checks a registry's options when it is constructed: one kit step per option. */
export function checkRegistryOptions(options: ResourceRegistryOptions): RegistrySettings {
  check.object(options);
  const templates = new TemplateSet(options.templates, scopeRefsOf(options.minter));
  return {
    store: check.implementing(options.store, "store", STORE_METHODS, "a FileStore"),
    templates,
    scopeOf: check.optionalFunction(options.scope, "scope") ?? defaultScope,
    authorizeFn: checkAuthorize(options.authorize, templates),
    feed: check.optionalImplementing(options.feed, "feed", ["publish", "subscribe"], "a ChangeFeed"),
    listMode: check.oneOf(options.listMode, "listMode", ["list", "none"], "list"),
    pageSize: check.integer(options.pageSize, "pageSize", 100, { min: 1, max: 1000 }),
    maxInlineBytes: check.integer(options.maxInlineBytes, "maxInlineBytes", DEFAULT_MAX_INLINE_BYTES),
    textTypes: checkTextTypes(options.textTypes),
    minter: check.optionalImplementing(
      options.minter,
      "minter",
      ["downloadUrl"],
      "a URL signer (downloadUrl(file))",
    ),
    downloadClaims: check.optionalFunction(options.downloadClaims, "downloadClaims"),
    notifyDelayMs: check.number(options.notifyDelayMs, "notifyDelayMs", 10),
    now: check.optionalFunction(options.now, "now") ?? Date.now,
  };
}

const STORE_METHODS = ["put", "head", "read", "list", "delete"] as const;

/** `authorize` opens other scopes' URIs, so it needs a template that carries a raw scope. */
function checkAuthorize(
  authorize: AuthorizeFunction | undefined,
  templates: TemplateSet,
): AuthorizeFunction | undefined {
  check.optionalFunction(authorize, "authorize");
  check.require(
    authorize === undefined || templates.hasRawScope(),
    "authorize",
    'needs a template with scopeInUri: "raw": with scope references in every URI, a URI ' +
      "can only name the caller's own scope (use raw only for non-secret, verified ids such as chat ids)",
  );
  return authorize;
}

/** `textTypes`: media types (`type/*` allowed), normalized to their essence. */
function checkTextTypes(textTypes: readonly string[] | undefined): ReadonlySet<string> {
  const list = textTypes ?? [];
  check.require(Array.isArray(list), "textTypes", "must be an array of media types");
  const normalized = new Set<string>();
  for (const type of list) {
    const parsed = parseMediaType(typeof type === "string" ? type.replace(/\/\*$/, "/x-any") : type);
    if (!parsed) throw check.error("textTypes", `has ${String(type)}, which is not a media type`);
    normalized.add(type.endsWith("/*") ? `${parsed.type}/*` : parsed.essence);
  }
  return normalized;
}
