import type { Duration } from "../internal/duration.js";
import type { HostClientCapabilities } from "../mcp/host.js";
import type { ResourceLink, TextContent } from "../mcp/types.js";
import type { ScopeFunction, ScopeSource } from "../scope/scope.js";
import type { DownloadClaimsFunction, UrlSigner } from "../signing/types.js";
import type { ChangeFeed, FileKind, FileStore } from "../storage/types.js";

// The public options and result shapes of ResourceRegistry.

/**
 * Which template variable plays which part; see {@link ResourceTemplateOptions.variables}.
 *
 * @example
 * ```ts
 * const variables: TemplateVariables = { scope: "containerId", id: "fileId" };
 * ```
 */
export interface TemplateVariables {
  /**
   * The variable holding the file's scope: its opaque reference by default, or the scope itself (see
   * {@link ResourceTemplateOptions.scopeInUri}). Without one, the scope is the caller's scope.
   * @default "scope" when the template has it
   */
  scope?: string;
  /** The variable holding the file id. @default "id" when the template has it */
  id?: string;
  /**
   * The variable holding the file's name (its relative path, which may contain `/`). Without an id
   * variable, files are found by this name in the scope (the file added last under that name wins).
   * @default the first of "path", "filename", "name" the template has
   */
  path?: string;
}

/**
 * One URI template the registry serves.
 *
 * @example
 * ```ts
 * const wire: ResourceTemplateOptions = {
 *   name: "container-files",
 *   uriTemplate: "wire://container/{containerId}/file/{fileId}",
 *   variables: { scope: "containerId", id: "fileId" },
 * };
 * ```
 */
export interface ResourceTemplateOptions {
  /** Unique name, shown in `resources/templates/list`. */
  name: string;
  /**
   * RFC 6570 template using `{var}` and `{+var}` expressions (`{+var}` keeps `/` between
   * segments). Every variable must play a part (see `variables`); an id or a path variable is
   * required.
   */
  uriTemplate: string;
  /** Human-readable title. @default none */
  title?: string;
  /** Description for clients and models. @default none */
  description?: string;
  /** Media type shown in `resources/templates/list`, when all its files share one. @default none */
  mimeType?: string;
  /**
   * The kind of files this template addresses. A file uses the first template of its kind, else
   * the first template without a kind, else the first template.
   * @default any kind
   */
  kind?: FileKind;
  /** Which variable is the scope, the id and the path. @default by name, see {@link TemplateVariables} */
  variables?: TemplateVariables;
  /**
   * What the scope variable carries. `"ref"`: the scope's opaque reference (`scopeRef(scope)`, 22
   * characters), never the scope itself, because a scope is often a bearer value (an MCP session
   * id) and URIs are shared (tool text, links, upload replies, logs); such a URI resolves only for a
   * caller whose own scope has that reference, so it can never name another scope. `"raw"`: the
   * scope as it is, so a URI can name another scope and `authorize` decides whether the caller may
   * see it. Use `"raw"` only for scopes that are NOT secrets and that your scope function derives
   * from verified identity (a chat id checked against the caller's API key, a container id bound to
   * the key), never for session ids.
   * @default "ref"
   */
  scopeInUri?: "ref" | "raw";
}

/**
 * What {@link AuthorizeFunction} is told about the caller.
 *
 * @example
 * ```ts
 * const authorize = (scope: string, { callerScope }: AuthorizeRequest) => chats.isMember(callerScope, scope);
 * ```
 */
export interface AuthorizeRequest {
  /** The caller's own scope, from the scope function (or the bridge's resolve call). */
  callerScope: string;
  /** The MCP request context, when the call came through MCP. */
  extra?: ScopeSource;
}

/**
 * Decides whether a caller may see a scope other than its own (a scope named in a URI of a template
 * with `scopeInUri: "raw"`; a URI with another scope's reference is never resolved).
 *
 * @example
 * ```ts
 * const authorize: AuthorizeFunction = (chatId, { extra }) => extra?.authInfo?.extra?.chats.includes(chatId) === true;
 * ```
 */
export type AuthorizeFunction = (scope: string, request: AuthorizeRequest) => boolean | Promise<boolean>;

/**
 * Options of {@link ResourceRegistry}.
 *
 * @example
 * ```ts
 * const options: ResourceRegistryOptions = { store: fsStore("./data"), pageSize: 50, minter };
 * ```
 */
export interface ResourceRegistryOptions {
  /** Where the files live. */
  store: FileStore;
  /**
   * The URI templates served.
   * @default uploads `file://uploads/{scope}/{+path}` (kind `"upload"`, also used for kind
   * `"file"`) and artifacts `artifact://sessions/{scope}/{id}/{filename}` (kind `"artifact"`),
   * where `{scope}` is the scope's opaque reference
   */
  templates?: ResourceTemplateOptions[];
  /**
   * Derives the caller's scope from a request: the access boundary. It must come from verified
   * identity, never from a bare client-supplied value such as an unchecked header.
   * @default `defaultScope`: the authenticated user (`authInfo.extra.sub`), else the MCP session id,
   * else `FORBIDDEN` over HTTP; `"default"` only over stdio and in-process
   */
  scope?: ScopeFunction;
  /**
   * Called when a URI of a template with `scopeInUri: "raw"` names a scope other than the caller's;
   * `true` lets the caller read, link, subscribe to and resolve that scope's files. Without it (or
   * on `false`, or when it throws), such URIs behave exactly as "not found". Needs at least one
   * template with `scopeInUri: "raw"` (with only reference templates a URI can name no other scope).
   * @default other scopes are never visible
   */
  authorize?: AuthorizeFunction;
  /**
   * `"list"` answers `resources/list` with the caller's files; `"none"` keeps the list empty for
   * servers that only resolve URIs on demand (reads, links and completion still work).
   * @default "list"
   */
  listMode?: "list" | "none";
  /**
   * Carries changes between the replicas of one deployment (`redisChangeFeed()` from
   * `mcp-file-bridge/redis`): every file this registry adds, registers or removes is published, and
   * what other replicas publish updates this registry's lists and notifies its sessions
   * (`list_changed`, `updated` to subscribers), coalesced as local changes are.
   * @default none: one process
   */
  feed?: ChangeFeed;
  /** Entries per `resources/list` page (1–1000). @default 100 */
  pageSize?: number;
  /**
   * Largest file `resources/read` returns inline (text or base64). Larger files read as a
   * `text/uri-list` with a download URL when a `minter` is set, else fail with
   * `TOO_LARGE_TO_INLINE` (`-32602`, `data.limit`). 4 MiB keeps the base64 form under the 10 MB
   * stdio buffers of common clients.
   * @default 4194304 (4 MiB)
   */
  maxInlineBytes?: number;
  /**
   * Extra media types read as text (`type/subtype` or `type/*`), on top of `text/*`, json, xml,
   * yaml, csv, javascript, shell, sql, toml and `+json`/`+xml`/`+yaml` types.
   * @default []
   */
  textTypes?: string[];
  /** Mints download URLs for links and for files too large to inline. @default none */
  minter?: Pick<UrlSigner, "downloadUrl" | "scopeRefs">;
  /**
   * Extra claims signed into every download URL the registry mints (reads over `maxInlineBytes`,
   * `link()`), e.g. the id of the API key to charge: `(file, extra) => ({ key: keyIdOf(extra) })`.
   * The download route's `onDownload` receives them, verified, as `claims`. Signed, not encrypted.
   * @default none (no extra claims)
   */
  downloadClaims?: DownloadClaimsFunction;
  /**
   * How long changes are collected before `notifications/resources/list_changed` and
   * `notifications/resources/updated` go out (milliseconds), so a burst sends one notification.
   * @default 10
   */
  notifyDelayMs?: number;
  /**
   * How long the in-memory index of a scope (ids and names of its files, never bytes) is kept
   * after its last use once no attached session belongs to the scope. It is then dropped and
   * reloaded from the store on next use, so memory follows the active scopes, not every scope ever
   * seen. Seconds or a string like `"10m"`; `false` keeps every index for the registry's lifetime.
   * Idle scopes are dropped during registry activity (no timer runs).
   * @default "10m"
   */
  indexIdleTimeout?: Duration | false;
  /** Clock, ms since the epoch, used to hide expired files from lists and to age idle indexes. @default Date.now */
  now?: () => number;
}

/**
 * Options of `ResourceRegistry.attach`.
 *
 * @example
 * ```ts
 * registry.attach(server, { scope: chatId });
 * ```
 */
export interface AttachOptions {
  /**
   * The scope of the session this server serves, when it is known up front. Otherwise it is
   * learned from the transport's session id (through the `scope` function) and from each
   * `resources/*` request the session sends. Set it when the scope function reads a header
   * (an `X-Chat-Id` checked against the caller's credentials): until the session's first `resources/*` request, the registry cannot know the
   * session's scope and sends it no `list_changed`. Attaching again adds another scope.
   * @default learned
   */
  scope?: string;
}

/**
 * What `ResourceRegistry.parseUri` returns.
 *
 * @example
 * ```ts
 * const parsed: ParsedResourceUri | null = registry.parseUri(uri);
 * if (parsed?.scopeRef === scopeRef(callerScope)) console.log(parsed.path ?? parsed.id);
 * ```
 */
export interface ParsedResourceUri {
  /** Name of the template that matched. */
  template: string;
  /** The scope named in the URI, if the template has a scope variable with `scopeInUri: "raw"`. */
  scope?: string;
  /** The scope reference in the URI, if the template has a scope variable with `scopeInUri: "ref"`. */
  scopeRef?: string;
  /** The file id, if the template has an id variable. */
  id?: string;
  /** The file's name (relative path), if the template has a path variable. */
  path?: string;
}

/**
 * The structured form of a link, for a tool's `structuredContent`.
 *
 * @example
 * ```ts
 * const { structuredContent } = await registry.link(file);
 * console.log(structuredContent.uri, structuredContent.downloadUrl);
 * ```
 */
export interface FileLinkInfo {
  [key: string]: unknown;
  uri: string;
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
  /** Creation time, ISO 8601. */
  lastModified: string;
  /** Signed download URL, when a minter is configured. */
  downloadUrl?: string;
  /** When `downloadUrl` expires, ISO 8601. */
  downloadUrlExpiresAt?: string;
}

/**
 * What `ResourceRegistry.link` returns: spread it into a tool's result.
 *
 * @example
 * ```ts
 * const link: FileLinkResult = await registry.link(file);
 * return { ...link, content: [...link.content, { type: "text", text: "Done." }] };
 * ```
 */
export interface FileLinkResult {
  [key: string]: unknown;
  /** A `resource_link` plus a text block with the URI (and download URL), for clients that drop links. */
  content: [ResourceLink, TextContent];
  /** The same, as data. */
  structuredContent: FileLinkInfo;
}

/**
 * Options of `ResourceRegistry.link`.
 *
 * @example
 * ```ts
 * await registry.link(file, { scope: callerScope });
 * ```
 */
export interface LinkOptions {
  /** The caller's scope; another scope's file is `NOT_FOUND` unless `authorize` allows it. */
  scope?: string;
  /**
   * The tool call's `extra`, handed to {@link ResourceRegistryOptions.downloadClaims}.
   * @default undefined
   */
  extra?: ScopeSource;
  /**
   * What the client declared (`ctx.clientCapabilities` of the host port). A client that declared
   * the files extension's `files` capability also gets the output's `FileValue` (`structuredContent.file`,
   * under its `upload://` handle, with its sha-256); every other client gets exactly today's result.
   * @default undefined (no files extension output)
   */
  clientCapabilities?: HostClientCapabilities;
}

/**
 * What `ResourceRegistry.sync` found.
 *
 * @example
 * ```ts
 * const { added, removed }: SyncResult = await registry.sync(scope);
 * ```
 */
export interface SyncResult {
  /** Files that were in the store but not in the registry. */
  added: number;
  /** Files the registry knew that are gone from the store. */
  removed: number;
}
