import { Mutex } from "async-mutex";
import { storedFileSource } from "../bridge/stored-file-source.js";
import type { FileSourceResolver, ResolverResult } from "../bridge/types.js";
import { FileBridgeError, isFileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { baseName } from "../internal/file-name.js";
import { isId } from "../internal/ids.js";
import { DEFAULT_MAX_INLINE_BYTES } from "../internal/limits.js";
import { fileLinkContent } from "../links/file-link.js";
import { toMcpRequestError } from "../mcp/errors.js";
import type { HostInput, McpHost } from "../mcp/host.js";
import { toHost } from "../mcp/to-host.js";
import type {
  CompleteResult,
  ListResourcesResult,
  McpResource,
  ReadResourceResult,
  ResourceLink,
  TextContent,
} from "../mcp/types.js";
import { parseMediaType } from "../media/media-type.js";
import {
  assertScope,
  defaultScope,
  MAX_SCOPE_LENGTH,
  type ScopeFunction,
  type ScopeSource,
} from "../scope/scope.js";
import type { DownloadClaimsFunction } from "../signing/signed-url-minter.js";
import type { FileKind, FileStore, PutOptions, PutSource, StoredFile } from "../storage/types.js";
import { decodeListCursor, encodeListCursor } from "./cursor.js";
import { decodeText, isTextType, readBounded } from "./read-content.js";
import { ScopeIndex } from "./scope-index.js";
import { expandTemplate, matchTemplate, type ParsedTemplate, parseTemplate } from "./uri-template.js";

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
   * The variable holding the file's scope. Without one, the scope is the caller's scope (URIs are
   * then not self-contained).
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
}

/**
 * A download-URL minter, such as `SignedUrlMinter`.
 *
 * @example
 * ```ts
 * const minter: DownloadUrlMinter = new SignedUrlMinter({ secret, baseUrl: "https://files.example.com" });
 * ```
 */
export interface DownloadUrlMinter {
  /**
   * A short-lived URL that downloads `file`, and when it expires (ms since the epoch). `claims` are
   * extra data to sign into the URL (from {@link ResourceRegistryOptions.downloadClaims}).
   */
  downloadUrl(
    file: StoredFile,
    options?: { claims?: Record<string, string | number | boolean> },
  ): Promise<{ url: string; expiresAt: number }>;
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
 * Decides whether a caller may see a scope other than its own (a scope named in a URI).
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
   * `"file"`) and artifacts `artifact://sessions/{scope}/{id}/{filename}` (kind `"artifact"`)
   */
  templates?: ResourceTemplateOptions[];
  /**
   * Derives the caller's scope from a request.
   * @default the MCP session id, else `authInfo.clientId`, else `"default"`
   */
  scope?: ScopeFunction;
  /**
   * Called when a URI names a scope other than the caller's; `true` lets the caller read, link,
   * subscribe to and resolve that scope's files. Without it (or on `false`), such URIs behave
   * exactly as "not found".
   * @default other scopes are never visible
   */
  authorize?: AuthorizeFunction;
  /**
   * `"list"` answers `resources/list` with the caller's files; `"none"` keeps the list empty for
   * servers that only resolve URIs on demand (reads, links and completion still work).
   * @default "list"
   */
  listMode?: "list" | "none";
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
  minter?: DownloadUrlMinter;
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
 * Options of {@link ResourceRegistry.attach}.
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
   * (`X-Chat-Id`): until the session's first `resources/*` request, the registry cannot know the
   * session's scope and sends it no `list_changed`. Attaching again adds another scope.
   * @default learned
   */
  scope?: string;
}

/**
 * What {@link ResourceRegistry.parseUri} returns.
 *
 * @example
 * ```ts
 * const parsed: ParsedResourceUri | null = registry.parseUri(uri);
 * if (parsed?.scope !== undefined) console.log(parsed.scope, parsed.path ?? parsed.id);
 * ```
 */
export interface ParsedResourceUri {
  /** Name of the template that matched. */
  template: string;
  /** The scope named in the URI, if the template has a scope variable. */
  scope?: string;
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
 * What {@link ResourceRegistry.link} returns: spread it into a tool's result.
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
 * Options of {@link ResourceRegistry.link}.
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
}

/**
 * What {@link ResourceRegistry.sync} found.
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

interface Template {
  readonly index: number;
  readonly options: ResourceTemplateOptions;
  readonly parsed: ParsedTemplate;
  readonly scopeVar?: string;
  readonly idVar?: string;
  readonly pathVar?: string;
}

interface ParsedUri {
  template: Template;
  scope?: string;
  id?: string;
  path?: string;
}

interface Attachment {
  readonly host: McpHost;
  /** Scopes learned from requests, or given to `attach`. */
  readonly scopes: Set<string>;
  /** `${scope}\n${canonical uri}` → the URI as the client sent it (notifications echo it). */
  readonly subscriptions: Map<string, string>;
  connected: boolean;
}

interface PendingChange {
  listChanged: boolean;
  updated: Set<string>;
}

type RequestExtra = ScopeSource & { signal?: AbortSignal };

/**
 * Default templates, see {@link ResourceRegistryOptions.templates}.
 *
 * @example
 * ```ts
 * new ResourceRegistry({ store, templates: [...DEFAULT_RESOURCE_TEMPLATES, myTemplate] });
 * ```
 */
export const DEFAULT_RESOURCE_TEMPLATES: readonly ResourceTemplateOptions[] = Object.freeze([
  {
    name: "uploads",
    uriTemplate: "file://uploads/{scope}/{+path}",
    title: "Uploaded files",
    description: "Files uploaded in this session. Pass the URI to a tool as a file argument.",
    kind: "upload",
  },
  {
    name: "artifacts",
    uriTemplate: "artifact://sessions/{scope}/{id}/{filename}",
    title: "Tool outputs",
    description: "Files produced by tools in this session.",
    kind: "artifact",
  },
]);

const KINDS: readonly FileKind[] = ["upload", "artifact", "file"];
const RESOURCE_METHODS = [
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
] as const;
const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };
const MAX_COMPLETION_VALUES = 100;

function invalidOption(message: string): FileBridgeError {
  return new FileBridgeError("INVALID_OPTION", message);
}

function notFound(uri: string): FileBridgeError {
  return new FileBridgeError("NOT_FOUND", `resource ${uri} not found`, { data: { uri } });
}

function validPath(path: string): boolean {
  if (path.length === 0 || path.includes("\u0000")) return false;
  return path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}

function validScope(scope: string): boolean {
  try {
    assertScope(scope);
    return true;
  } catch {
    return false;
  }
}

function compileTemplate(options: ResourceTemplateOptions, index: number): Template {
  const label = `templates[${index}]`;
  if (typeof options !== "object" || options === null) throw invalidOption(`${label} must be an object`);
  if (typeof options.name !== "string" || options.name.length === 0) {
    throw invalidOption(`${label}.name must be a non-empty string`);
  }
  const parsed = parseTemplate(options.uriTemplate, `${label}.uriTemplate`);
  if (options.kind !== undefined && !KINDS.includes(options.kind)) {
    throw invalidOption(`${label}.kind must be one of ${KINDS.join(", ")}`);
  }
  if (options.mimeType !== undefined && parseMediaType(options.mimeType) === null) {
    throw invalidOption(`${label}.mimeType must be a media type`);
  }
  const mapping = options.variables ?? {};
  const has = (name: string | undefined): name is string =>
    name !== undefined && parsed.variables.includes(name);
  const pick = (role: keyof TemplateVariables, defaults: string[]): string | undefined => {
    const given = mapping[role];
    if (given !== undefined) {
      if (!has(given)) throw invalidOption(`${label}.variables.${role}: the template has no {${given}}`);
      return given;
    }
    return defaults.find((name) => has(name) && !Object.values(mapping).includes(name));
  };
  const scopeVar = pick("scope", ["scope"]);
  const idVar = pick("id", ["id"]);
  const pathVar = pick("path", ["path", "filename", "name"]);
  const roles = [scopeVar, idVar, pathVar].filter((name) => name !== undefined);
  if (new Set(roles).size !== roles.length) {
    throw invalidOption(`${label}.variables: one variable cannot play two parts`);
  }
  for (const variable of parsed.variables) {
    if (!roles.includes(variable)) {
      throw invalidOption(`${label}: the variable {${variable}} plays no part; map it in variables`);
    }
  }
  if (idVar === undefined && pathVar === undefined) {
    throw invalidOption(`${label} needs an id or a path variable to find files`);
  }
  return {
    index,
    options,
    parsed,
    ...(scopeVar === undefined ? {} : { scopeVar }),
    ...(idVar === undefined ? {} : { idVar }),
    ...(pathVar === undefined ? {} : { pathVar }),
  };
}

/**
 * Exposes stored files as MCP resources: URI templates, scoped and paginated `resources/list`,
 * `resources/read` (text, base64 blob, or a signed URL for large files), `resource_link`s with a
 * text fallback, `list_changed`/`updated` notifications, completion, and a resolver so tools accept
 * the URIs as file arguments.
 *
 * @example
 * ```ts
 * import { memoryStore, ResourceRegistry } from "mcp-file-bridge";
 *
 * const registry = new ResourceRegistry({ store: memoryStore() });
 * const server = new McpServer({ name: "files", version: "1.0.0" });
 * registry.attach(server); // before server.connect()
 *
 * server.registerTool("make_report", { description: "Writes a report" }, async (extra) => {
 *   const file = await registry.add(new TextEncoder().encode("# Report"), {
 *     scope: extra.sessionId ?? "default",
 *     name: "report.md",
 *     kind: "artifact",
 *   });
 *   return registry.link(file); // resource_link + text fallback + structuredContent
 * });
 * ```
 */
export class ResourceRegistry {
  private readonly store: FileStore;
  private readonly templates: readonly Template[];
  private readonly templateByKind: Readonly<Record<FileKind, Template>>;
  private readonly scopeOf: ScopeFunction;
  private readonly authorizeFn: AuthorizeFunction | undefined;
  private readonly listMode: "list" | "none";
  private readonly pageSize: number;
  private readonly maxInlineBytes: number;
  private readonly textTypes: ReadonlySet<string>;
  private readonly minter: DownloadUrlMinter | undefined;
  private readonly downloadClaims: DownloadClaimsFunction | undefined;
  private readonly notifyDelayMs: number;
  private readonly now: () => number;
  private readonly indexIdleMs: number | undefined;

  private readonly indexes = new Map<string, ScopeIndex>();
  private readonly mutexes = new Map<string, Mutex>();
  /** Last use of each scope's index and mutex, least recently used first. */
  private readonly lastUsed = new Map<string, number>();
  private lastSweep = Number.NEGATIVE_INFINITY;
  private readonly attachments = new Map<object, Attachment>();
  private readonly pending = new Map<string, PendingChange>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @throws FileBridgeError `INVALID_OPTION` naming the bad option.
   */
  constructor(options: ResourceRegistryOptions) {
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
    this.store = store;

    const templateOptions = options.templates ?? DEFAULT_RESOURCE_TEMPLATES;
    if (!Array.isArray(templateOptions) || templateOptions.length === 0) {
      throw invalidOption("templates must be a non-empty array");
    }
    this.templates = templateOptions.map(compileTemplate);
    const names = new Set(this.templates.map((t) => t.options.name));
    const sources = new Set(this.templates.map((t) => t.parsed.source));
    if (names.size !== this.templates.length) throw invalidOption("templates: names must be unique");
    if (sources.size !== this.templates.length) throw invalidOption("templates: uriTemplates must be unique");
    const forKind = (kind: FileKind): Template =>
      this.templates.find((t) => t.options.kind === kind) ??
      this.templates.find((t) => t.options.kind === undefined) ??
      (this.templates[0] as Template);
    this.templateByKind = { upload: forKind("upload"), artifact: forKind("artifact"), file: forKind("file") };

    if (options.scope !== undefined && typeof options.scope !== "function") {
      throw invalidOption("scope must be a function");
    }
    this.scopeOf = options.scope ?? defaultScope;
    if (options.authorize !== undefined && typeof options.authorize !== "function") {
      throw invalidOption("authorize must be a function");
    }
    this.authorizeFn = options.authorize;

    const listMode = options.listMode ?? "list";
    if (listMode !== "list" && listMode !== "none") throw invalidOption('listMode must be "list" or "none"');
    this.listMode = listMode;

    const pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
      throw invalidOption("pageSize must be an integer from 1 to 1000");
    }
    this.pageSize = pageSize;

    const maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
    if (!Number.isSafeInteger(maxInlineBytes) || maxInlineBytes < 0) {
      throw invalidOption("maxInlineBytes must be a non-negative integer");
    }
    this.maxInlineBytes = maxInlineBytes;

    const textTypes = options.textTypes ?? [];
    if (!Array.isArray(textTypes)) throw invalidOption("textTypes must be an array of media types");
    const normalized = new Set<string>();
    for (const type of textTypes) {
      const parsed = parseMediaType(typeof type === "string" ? type.replace(/\/\*$/, "/x-any") : type);
      if (!parsed) throw invalidOption(`textTypes: ${String(type)} is not a media type`);
      normalized.add(type.endsWith("/*") ? `${parsed.type}/*` : parsed.essence);
    }
    this.textTypes = normalized;

    if (
      options.minter !== undefined &&
      (typeof options.minter !== "object" ||
        options.minter === null ||
        typeof options.minter.downloadUrl !== "function")
    ) {
      throw invalidOption("minter must have a downloadUrl(file) method");
    }
    this.minter = options.minter;
    if (options.downloadClaims !== undefined && typeof options.downloadClaims !== "function") {
      throw new FileBridgeError("INVALID_OPTION", "downloadClaims must be a function", {
        data: { option: "downloadClaims" },
      });
    }
    this.downloadClaims = options.downloadClaims;

    const notifyDelayMs = options.notifyDelayMs ?? 10;
    if (!Number.isFinite(notifyDelayMs) || notifyDelayMs < 0) {
      throw invalidOption("notifyDelayMs must be a non-negative number");
    }
    this.notifyDelayMs = notifyDelayMs;

    if (options.now !== undefined && typeof options.now !== "function") {
      throw invalidOption("now must be a function");
    }
    this.now = options.now ?? Date.now;

    const idle = options.indexIdleTimeout ?? "10m";
    if (idle !== false) this.indexIdleMs = durationToMs(idle, "indexIdleTimeout");
  }

  // ---------------------------------------------------------------- URIs

  /**
   * The resource URI of a stored file, from the first template of its kind.
   *
   * @example
   * ```ts
   * registry.uriFor(file); // "file://uploads/3f2a…/q3%20report.pdf"
   * ```
   */
  uriFor(file: StoredFile): string {
    return this.uriWith(this.templateFor(file), file);
  }

  private uriWith(template: Template, file: Pick<StoredFile, "scope" | "id" | "name">): string {
    const values: Record<string, string> = {};
    if (template.scopeVar) values[template.scopeVar] = file.scope;
    if (template.idVar) values[template.idVar] = file.id;
    if (template.pathVar) values[template.pathVar] = file.name;
    return expandTemplate(template.parsed, values);
  }

  private templateFor(file: Pick<StoredFile, "kind">): Template {
    return this.templateByKind[file.kind] ?? (this.templates[0] as Template);
  }

  /**
   * Parses a URI against the templates: its scope, id and path (decoded once), or `null` when it
   * matches none or carries an invalid value (a `..` segment, a malformed id or escape).
   *
   * @example
   * ```ts
   * registry.parseUri("file://uploads/s1/a%20b.txt"); // { template: "uploads", scope: "s1", path: "a b.txt" }
   * ```
   */
  parseUri(uri: string): ParsedResourceUri | null {
    const parsed = this.parse(uri);
    if (!parsed) return null;
    return {
      template: parsed.template.options.name,
      ...(parsed.scope === undefined ? {} : { scope: parsed.scope }),
      ...(parsed.id === undefined ? {} : { id: parsed.id }),
      ...(parsed.path === undefined ? {} : { path: parsed.path }),
    };
  }

  private parse(uri: unknown): ParsedUri | null {
    if (typeof uri !== "string" || uri.length === 0 || uri.length > 8192) return null;
    for (const template of this.templates) {
      const values = matchTemplate(template.parsed, uri);
      if (!values) continue;
      const result: ParsedUri = { template };
      if (template.scopeVar) {
        const scope = values[template.scopeVar] as string;
        if (scope.length > MAX_SCOPE_LENGTH || !validScope(scope)) return null;
        result.scope = scope;
      }
      if (template.idVar) {
        const id = values[template.idVar];
        if (!isId(id)) return null;
        result.id = id;
      }
      if (template.pathVar) {
        const path = values[template.pathVar] as string;
        if (!validPath(path)) return null;
        result.path = path;
      }
      return result;
    }
    return null;
  }

  // ---------------------------------------------------------------- scopes and index

  private mutexFor(scope: string): Mutex {
    this.touch(scope);
    let mutex = this.mutexes.get(scope);
    if (!mutex) {
      mutex = new Mutex();
      this.mutexes.set(scope, mutex);
    }
    return mutex;
  }

  private async loadIndex(scope: string): Promise<ScopeIndex> {
    const index = new ScopeIndex((file) => this.templateFor(file).index);
    let cursor: string | undefined;
    do {
      const page = await this.store.list(scope, { limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
      for (const file of page.files) index.upsert(file);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return index;
  }

  /** Runs `fn` with the scope's index, loading it from the store first; guarded by the scope's mutex. */
  private withIndex<T>(scope: string, fn: (index: ScopeIndex) => T | Promise<T>): Promise<T> {
    return this.mutexFor(scope).runExclusive(async () => {
      let index = this.indexes.get(scope);
      if (!index) {
        index = await this.loadIndex(scope);
        this.indexes.set(scope, index);
      }
      try {
        return await fn(index);
      } finally {
        this.touch(scope);
      }
    });
  }

  /** Marks a scope as used now (moving it to the back of the LRU order) and sweeps idle ones. */
  private touch(scope: string): void {
    if (this.indexIdleMs === undefined) return;
    const now = this.now();
    this.lastUsed.delete(scope);
    this.lastUsed.set(scope, now);
    if (now - this.lastSweep >= this.indexIdleMs / 2) this.sweep(now);
  }

  /**
   * Drops the index and mutex of every scope idle for `indexIdleTimeout` that no attached session
   * belongs to and nobody holds or waits for (a waiter keeps the mutex locked). Synchronous, so
   * nothing interleaves; the next use reloads the scope from the store.
   */
  private sweep(now: number): void {
    this.lastSweep = now;
    const idleMs = this.indexIdleMs as number;
    let pinned: Set<string> | undefined;
    for (const [scope, used] of this.lastUsed) {
      // Least recently used first: the first scope still in use ends the sweep.
      if (now - used < idleMs) break;
      if (this.mutexes.get(scope)?.isLocked()) continue;
      pinned ??= this.attachedScopes();
      if (pinned.has(scope)) continue;
      this.indexes.delete(scope);
      this.mutexes.delete(scope);
      this.lastUsed.delete(scope);
    }
  }

  /** The scopes of every connected session. */
  private attachedScopes(): Set<string> {
    const scopes = new Set<string>();
    for (const attachment of this.attachments.values()) {
      if (!attachment.host.isConnected()) continue;
      for (const scope of this.scopesOf(attachment)) scopes.add(scope);
    }
    return scopes;
  }

  private isLive = (file: StoredFile): boolean => file.expiresAt === undefined || file.expiresAt > this.now();

  private async callerScope(extra: RequestExtra): Promise<string> {
    const scope = await this.scopeOf(extra);
    assertScope(scope);
    return scope;
  }

  private async mayAccess(scope: string, callerScope: string, extra?: ScopeSource): Promise<boolean> {
    if (scope === callerScope) return true;
    if (!this.authorizeFn) return false;
    try {
      return (
        (await this.authorizeFn(scope, { callerScope, ...(extra === undefined ? {} : { extra }) })) === true
      );
    } catch {
      return false;
    }
  }

  /** Finds the live file a parsed URI names in `scope`, or `null`. */
  private async find(parsed: ParsedUri, scope: string): Promise<StoredFile | null> {
    const { template } = parsed;
    if (parsed.id !== undefined) {
      const file = await this.store.head(scope, parsed.id);
      if (!file || file.scope !== scope || this.templateFor(file) !== template) return null;
      if (parsed.path !== undefined && file.name !== parsed.path) return null;
      return file;
    }
    const path = parsed.path as string;
    for (;;) {
      const candidate = await this.withIndex(scope, (index) => index.latestByName(template.index, path));
      if (!candidate) return null;
      const fresh = await this.store.head(scope, candidate.id);
      if (fresh && this.isLive(fresh)) return fresh;
      // Gone from the store (expired, or removed by another process): forget it and try the next.
      await this.withIndex(scope, (index) => {
        if (index.delete(candidate.id)) this.changed(scope, true, [this.uriFor(candidate)]);
      });
    }
  }

  private async resolveUri(uri: string, callerScope: string, extra?: ScopeSource): Promise<StoredFile> {
    const parsed = this.parse(uri);
    if (!parsed) throw notFound(uri);
    const scope = parsed.scope ?? callerScope;
    if (!(await this.mayAccess(scope, callerScope, extra))) throw notFound(uri);
    const file = await this.find(parsed, scope);
    if (!file) throw notFound(uri);
    return file;
  }

  // ---------------------------------------------------------------- changes

  /**
   * Stores a file (streamed, see `FileStore.put`) and registers it; the scope's sessions get
   * `notifications/resources/list_changed`.
   *
   * @example
   * ```ts
   * const file = await registry.add(createReadStream("out.csv"), { scope, name: "out.csv", kind: "artifact" });
   * ```
   */
  async add(source: PutSource, options: PutOptions): Promise<StoredFile> {
    if (typeof options !== "object" || options === null) {
      throw new FileBridgeError("INVALID_INPUT", "add() needs options with scope and name");
    }
    assertScope(options.scope);
    const file = await this.store.put(source, options);
    await this.index(file);
    return file;
  }

  /**
   * Registers a file that is already in the store (put there by an upload route, or another piece),
   * so it is listed and notified without waiting for {@link sync}.
   *
   * @throws FileBridgeError `NOT_FOUND` when the store does not have it.
   * @example
   * ```ts
   * const file = await store.put(body, { scope, name });
   * await registry.register(file);
   * ```
   */
  async register(file: Pick<StoredFile, "scope" | "id">): Promise<StoredFile> {
    assertScope(file.scope);
    const fresh = isId(file.id) ? await this.store.head(file.scope, file.id) : null;
    if (!fresh)
      throw new FileBridgeError("NOT_FOUND", "no such file in the store", { data: { id: file.id } });
    await this.index(fresh);
    return fresh;
  }

  private async index(file: StoredFile): Promise<void> {
    await this.withIndex(file.scope, (index) => {
      // Always a list change: even when a first use just loaded the scope (file included) from the
      // store, no session has been told about the file yet.
      index.upsert(file);
      this.changed(file.scope, true, [this.uriFor(file)]);
    });
  }

  /**
   * Deletes a file from the store and the registry. `false` when it was in neither.
   *
   * @example
   * ```ts
   * await registry.remove(scope, file.id);
   * ```
   */
  async remove(scope: string, id: string): Promise<boolean> {
    assertScope(scope);
    if (!isId(id)) return false;
    return this.withIndex(scope, async (index) => {
      const known = index.get(id) ?? (await this.store.head(scope, id)) ?? undefined;
      const deleted = await this.store.delete(scope, id);
      const dropped = index.delete(id);
      if (known && (deleted || dropped)) this.changed(scope, true, [this.uriFor(known)]);
      return deleted || dropped !== undefined;
    });
  }

  /**
   * Re-reads a scope from the store (files written or deleted by another process) and notifies
   * the scope's sessions if anything changed. Lists wait while it runs.
   *
   * @example
   * ```ts
   * const { added, removed } = await registry.sync(scope);
   * ```
   */
  async sync(scope: string): Promise<SyncResult> {
    assertScope(scope);
    return this.mutexFor(scope).runExclusive(async () => {
      const fresh = await this.loadIndex(scope);
      const old = this.indexes.get(scope);
      let added = 0;
      let removed = 0;
      const uris: string[] = [];
      for (const file of fresh.all()) {
        const before = old?.get(file.id);
        if (!before) {
          added++;
          uris.push(this.uriFor(file));
        } else if (before.sha256 !== file.sha256 || before.name !== file.name) {
          uris.push(this.uriFor(file), this.uriFor(before));
        }
      }
      if (old) {
        for (const file of old.all()) {
          if (!fresh.get(file.id)) {
            removed++;
            uris.push(this.uriFor(file));
          }
        }
      }
      this.indexes.set(scope, fresh);
      if (added > 0 || removed > 0 || uris.length > 0) this.changed(scope, added + removed > 0, uris);
      return { added, removed };
    });
  }

  private changed(scope: string, listChanged: boolean, uris: string[]): void {
    if (this.attachments.size === 0) return;
    let entry = this.pending.get(scope);
    if (!entry) {
      entry = { listChanged: false, updated: new Set() };
      this.pending.set(scope, entry);
    }
    entry.listChanged ||= listChanged;
    for (const uri of uris) entry.updated.add(uri);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.notifyDelayMs);
    }
  }

  private scopesOf(attachment: Attachment): Set<string> {
    const scopes = new Set(attachment.scopes);
    if (attachment.host.isConnected()) {
      try {
        const derived = this.scopeOf({ sessionId: attachment.host.connectionSessionId() });
        if (typeof derived === "string" && derived.length > 0) scopes.add(derived);
      } catch {
        // A scope function that needs request headers cannot derive a scope from the transport.
      }
    }
    return scopes;
  }

  private flush(): void {
    this.timer = undefined;
    const pending = [...this.pending];
    this.pending.clear();
    for (const attachment of [...this.attachments.values()]) {
      if (!attachment.host.isConnected()) {
        if (attachment.connected) this.attachments.delete(attachment.host.server);
        continue;
      }
      attachment.connected = true;
      const scopes = this.scopesOf(attachment);
      let listChanged = false;
      for (const [scope, change] of pending) {
        if (change.listChanged && scopes.has(scope)) listChanged = true;
        if (attachment.subscriptions.size === 0) continue;
        for (const uri of change.updated) {
          const subscribed = attachment.subscriptions.get(`${scope}\n${uri}`);
          if (subscribed !== undefined) {
            attachment.host.notifyResourceUpdated(subscribed).catch(() => {});
          }
        }
      }
      // One list_changed per session per flush, however many of its scopes changed.
      if (listChanged && this.listMode === "list") {
        attachment.host.notifyResourceListChanged().catch(() => {});
      }
    }
  }

  // ---------------------------------------------------------------- links and resolver

  /**
   * The content blocks a tool returns for a file: a `resource_link` plus a text block carrying the
   * URI (and a download URL when a minter is set), because many clients drop `resource_link`; and
   * the same as `structuredContent`. Spread it into (or return it as) a `CallToolResult`.
   *
   * @throws FileBridgeError `NOT_FOUND` when the file is gone, or belongs to another scope than
   * `options.scope` and `authorize` does not allow it.
   * @example
   * ```ts
   * const file = await registry.add(bytes, { scope, name: "chart.png", kind: "artifact" });
   * return await registry.link(file);
   * ```
   */
  async link(file: StoredFile, options: LinkOptions = {}): Promise<FileLinkResult> {
    if (typeof file !== "object" || file === null || !isId(file.id)) {
      throw new FileBridgeError("INVALID_INPUT", "link() needs a stored file");
    }
    assertScope(file.scope);
    const uriHint = { data: { id: file.id } };
    if (options.scope !== undefined && !(await this.mayAccess(file.scope, options.scope))) {
      throw new FileBridgeError("NOT_FOUND", "file not found", uriHint);
    }
    const fresh = await this.store.head(file.scope, file.id);
    if (!fresh) throw new FileBridgeError("NOT_FOUND", "file not found", uriHint);
    const uri = this.uriFor(fresh);
    const lastModified = new Date(fresh.createdAt).toISOString();
    const download = await this.mintDownload(fresh, options.extra);
    const content = fileLinkContent(fresh, uri, {
      noun: "File",
      notes: ["Pass this URI as a file argument to other tools, or read it with resources/read."],
      download,
    });
    const structured: FileLinkInfo = {
      uri,
      name: fresh.name,
      mimeType: fresh.mimeType,
      size: fresh.size,
      sha256: fresh.sha256,
      lastModified,
      ...(download
        ? { downloadUrl: download.url, downloadUrlExpiresAt: new Date(download.expiresAt).toISOString() }
        : {}),
    };
    return { content, structuredContent: structured };
  }

  /**
   * A resolver for `FileBridge.addResolver`: tool arguments that are this registry's URIs resolve
   * to the stored file, scope-checked (another scope is "not found" unless `authorize` allows it).
   *
   * @example
   * ```ts
   * bridge.addResolver(registry.resolver());
   * const file = await bridge.resolve("file://uploads/s1/report.docx", { scope: "s1" });
   * ```
   */
  resolver(): FileSourceResolver {
    return {
      name: "resource URI",
      matches: (input: string) => this.parse(input) !== null,
      resolve: async (input: string, context: { scope: string }): Promise<ResolverResult | null> => {
        const parsed = this.parse(input);
        if (!parsed) return null;
        const scope = parsed.scope ?? context.scope;
        if (!(await this.mayAccess(scope, context.scope))) return null;
        const file = await this.find(parsed, scope);
        if (!file) return null;
        return storedFileSource(this.store, file);
      },
    };
  }

  // ---------------------------------------------------------------- MCP handlers

  private async listPage(scope: string, cursor: string | undefined): Promise<ListResourcesResult> {
    if (this.listMode === "none") {
      if (cursor !== undefined) throw new FileBridgeError("INVALID_CURSOR", "invalid cursor");
      return { resources: [] };
    }
    const after = cursor === undefined ? undefined : decodeListCursor(scope, cursor);
    const page = await this.withIndex(scope, (index) => {
      const result = index.page(after, this.pageSize, this.isLive);
      for (const id of result.dead) index.delete(id);
      return result;
    });
    const resources: McpResource[] = page.files.map((file) => ({
      uri: this.uriFor(file),
      name: file.name,
      title: baseName(file.name),
      mimeType: file.mimeType,
      size: file.size,
      annotations: { lastModified: new Date(file.createdAt).toISOString() },
    }));
    const last = page.files[page.files.length - 1]?.id ?? after;
    return page.more && last !== undefined
      ? { resources, nextCursor: encodeListCursor(scope, last) }
      : { resources };
  }

  /** A download URL for `file` with the `downloadClaims` of the caller, or `undefined` without a minter. */
  private async mintDownload(
    file: StoredFile,
    extra: ScopeSource | undefined,
  ): Promise<{ url: string; expiresAt: number } | undefined> {
    if (!this.minter) return undefined;
    const claims = await this.downloadClaims?.(file, extra);
    return claims === undefined
      ? await this.minter.downloadUrl(file)
      : await this.minter.downloadUrl(file, { claims });
  }

  private async read(uri: string, extra: RequestExtra): Promise<ReadResourceResult> {
    const callerScope = await this.callerScope(extra);
    const file = await this.resolveUri(uri, callerScope, extra);
    if (file.size > this.maxInlineBytes) {
      const download = await this.mintDownload(file, extra);
      if (download) {
        const { url } = download;
        return { contents: [{ uri, mimeType: "text/uri-list", text: `${url}\r\n` }] };
      }
      throw new FileBridgeError(
        "TOO_LARGE_TO_INLINE",
        `${file.name} is ${file.size} bytes, over the ${this.maxInlineBytes}-byte limit for inline reads`,
        { data: { limit: this.maxInlineBytes, size: file.size } },
      );
    }
    const stream = await this.store.read(file.scope, file.id);
    if (!stream) throw notFound(uri);
    let bytes: Buffer;
    try {
      bytes = await readBounded(stream, this.maxInlineBytes);
    } catch (error) {
      if (isFileBridgeError(error, "TOO_LARGE_TO_INLINE")) {
        throw new FileBridgeError("TOO_LARGE_TO_INLINE", error.message, {
          data: { limit: this.maxInlineBytes },
        });
      }
      throw error;
    }
    if (isTextType(file.mimeType, this.textTypes)) {
      const text = decodeText(bytes, file.mimeType);
      if (text !== null) return { contents: [{ uri, mimeType: file.mimeType, text }] };
    }
    return { contents: [{ uri, mimeType: file.mimeType, blob: bytes.toString("base64") }] };
  }

  private async complete(
    templateUri: string,
    argument: { name: string; value: string },
    context: Record<string, string> | undefined,
    extra: RequestExtra,
  ): Promise<CompleteResult | null> {
    const template = this.templates.find((t) => t.parsed.source === templateUri);
    if (!template) return null;
    const callerScope = await this.callerScope(extra);
    const prefix = argument.value.toLowerCase();
    let candidates: string[] = [];
    if (argument.name === template.scopeVar) {
      candidates = [callerScope];
    } else if (argument.name === template.idVar || argument.name === template.pathVar) {
      const named = template.scopeVar ? context?.[template.scopeVar] : undefined;
      const scope =
        named !== undefined && validScope(named) && (await this.mayAccess(named, callerScope, extra))
          ? named
          : callerScope;
      const byId = argument.name === template.idVar;
      candidates = await this.withIndex(scope, (index) => {
        const seen = new Set<string>();
        for (const file of index.all()) {
          if (this.templateFor(file) !== template || !this.isLive(file)) continue;
          seen.add(byId ? file.id : file.name);
        }
        return [...seen];
      });
      candidates.sort();
    }
    const values = candidates.filter((value) => value.toLowerCase().startsWith(prefix));
    return {
      completion: {
        values: values.slice(0, MAX_COMPLETION_VALUES),
        total: values.length,
        hasMore: values.length > MAX_COMPLETION_VALUES,
      },
    };
  }

  /**
   * Mounts the `resources/*` handlers (list with cursors, templates, read, subscribe, unsubscribe)
   * and `completion/complete` on a server, and declares the capabilities. Call it before
   * `server.connect()`, once per server (with Streamable HTTP: once per session's server). Works
   * with an `McpServer` (through its low-level `server`), with a low-level `Server`, and with a host
   * port (`toHost`). Prompt completions of an `McpServer` (and a `completion/complete` handler of
   * your own) keep working; its own `registerResource` cannot be combined with a registry on the
   * same server.
   *
   * @throws FileBridgeError `INVALID_OPTION` when the server is already connected or already
   * handles `resources/*`.
   * @example
   * ```ts
   * const server = new McpServer({ name: "files", version: "1.0.0" });
   * registry.attach(server);
   * await server.connect(transport);
   * ```
   */
  attach(server: HostInput, options: AttachOptions = {}): void {
    const host = toHost(server);
    if (options.scope !== undefined) assertScope(options.scope);
    const existing = this.attachments.get(host.server);
    if (existing) {
      // Attaching again only adds the scope (the handlers are mounted once).
      if (options.scope !== undefined) existing.scopes.add(options.scope);
      return;
    }
    if (host.isConnected()) throw invalidOption("attach() must run before server.connect()");
    for (const method of RESOURCE_METHODS) {
      if (!host.canHandle(method)) throw invalidOption(`the server already handles ${method}`);
    }
    host.declareCapabilities({ resources: { subscribe: true, listChanged: true }, completions: {} });

    const attachment: Attachment = {
      host,
      scopes: new Set(options.scope === undefined ? [] : [options.scope]),
      subscriptions: new Map(),
      connected: false,
    };
    this.attachments.set(host.server, attachment);
    host.onClose(() => {
      if (this.attachments.get(host.server) === attachment) this.attachments.delete(host.server);
    });

    const scoped = async (extra: RequestExtra): Promise<string> => {
      const scope = await this.callerScope(extra);
      attachment.scopes.add(scope);
      attachment.connected = true;
      return scope;
    };

    host.handle("resources/list", async (params, { extra }) => {
      try {
        const scope = await scoped(extra);
        return await this.listPage(scope, params.cursor);
      } catch (error) {
        throw toMcpRequestError(error);
      }
    });
    host.handle("resources/templates/list", async (_params, { extra }) => {
      await scoped(extra).catch(() => undefined);
      return {
        resourceTemplates: this.templates.map(({ options: t, parsed }) => ({
          name: t.name,
          uriTemplate: parsed.source,
          ...(t.title === undefined ? {} : { title: t.title }),
          ...(t.description === undefined ? {} : { description: t.description }),
          ...(t.mimeType === undefined ? {} : { mimeType: t.mimeType }),
        })),
      };
    });
    host.handle("resources/read", async ({ uri }, { extra }) => {
      try {
        await scoped(extra);
        return await this.read(uri, extra);
      } catch (error) {
        throw toMcpRequestError(error, { uri });
      }
    });
    host.handle("resources/subscribe", async ({ uri }, { extra }) => {
      try {
        const callerScope = await scoped(extra);
        const file = await this.resolveUri(uri, callerScope, extra);
        // Keyed by the canonical URI, so a client's own spelling (a raw space, `?`) still matches.
        attachment.subscriptions.set(`${file.scope}\n${this.uriFor(file)}`, uri);
        return {};
      } catch (error) {
        throw toMcpRequestError(error, { uri });
      }
    });
    host.handle("resources/unsubscribe", async ({ uri }, { extra }) => {
      try {
        const callerScope = await scoped(extra);
        const parsed = this.parse(uri);
        if (parsed) {
          const scope = parsed.scope ?? callerScope;
          const values = { scope, id: parsed.id ?? "", name: parsed.path ?? "" };
          attachment.subscriptions.delete(`${scope}\n${this.uriWith(parsed.template, values)}`);
        }
        return {};
      } catch (error) {
        throw toMcpRequestError(error, { uri });
      }
    });
    // Completion of our templates' variables; prompts and other references stay with the server.
    host.addCompletion({
      handles: (ref) =>
        ref.type === "ref/resource" && this.templates.some((t) => t.parsed.source === ref.uri),
      complete: async ({ ref, argument, context }, { extra }) => {
        const uri = ref.type === "ref/resource" ? ref.uri : "";
        try {
          return (await this.complete(uri, argument, context?.arguments, extra)) ?? EMPTY_COMPLETION;
        } catch (error) {
          throw toMcpRequestError(error);
        }
      },
    });
  }

  /**
   * Stops sending notifications to a server (done automatically when its connection closes). The
   * handlers stay mounted.
   *
   * @example
   * ```ts
   * registry.detach(server);
   * ```
   */
  detach(server: HostInput): void {
    this.attachments.delete(toHost(server, "detach()").server);
  }

  /**
   * Sends pending notifications now and stops the notification timer. The registry keeps working.
   *
   * @example
   * ```ts
   * await registry.close();
   * ```
   */
  async close(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.flush();
    }
  }
}

export type { DownloadClaimsFunction };
