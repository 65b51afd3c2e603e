import { storedFileSource } from "../bridge/stored-file-source.js";
import type { FileSourceResolver, ResolverResult } from "../bridge/types.js";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { durationToMs } from "../internal/duration.js";
import { isId } from "../internal/ids.js";
import { optionCheck } from "../internal/options.js";
import { downloadOffer, wantsDownloadOffers, withDownloadOffers } from "../links/download-offer.js";
import { fileLinkContent, fileOutputOf, fileValueOutput } from "../links/file-link.js";
import type { HostInput } from "../mcp/host.js";
import { toHost } from "../mcp/to-host.js";
import type { ReadResourceResult } from "../mcp/types.js";
import { assertScope, type ScopeFunction, type ScopeSource } from "../scope/scope.js";
import { scopeRefsOf } from "../scope/scope-refs.js";
import type { DownloadClaimsFunction, UrlSigner } from "../signing/types.js";
import type {
  ChangeFeed,
  FileStore,
  PutOptions,
  PutSource,
  StoreChange,
  StoredFile,
} from "../storage/types.js";
import { checkRegistryOptions } from "./check-options.js";
import { mountResourceHandlers, RESOURCE_METHODS, type RegistryView, type RequestExtra } from "./handlers.js";
import { type Attachment, type ChangeSink, ResourceNotifier } from "./notifier.js";
import type {
  AttachOptions,
  AuthorizeFunction,
  FileLinkInfo,
  FileLinkResult,
  LinkOptions,
  ParsedResourceUri,
  ResourceRegistryOptions,
  SyncResult,
} from "./options.js";
import { readFileResource, resourceNotFound } from "./read-content.js";
import { ScopeIndexes } from "./scope-indexes.js";
import type { ParsedUri, TemplateSet } from "./templates.js";

// The public class. Its jobs live beside it: options.ts (option and result types), templates.ts
// (URI templates), scope-indexes.ts + scope-index.ts + cursor.ts (per-scope index and list
// cursors), notifier.ts (attachments and coalesced notifications), handlers.ts (the MCP side),
// read-content.ts (resources/read).

export type {
  AttachOptions,
  AuthorizeFunction,
  AuthorizeRequest,
  FileLinkInfo,
  FileLinkResult,
  LinkOptions,
  ParsedResourceUri,
  ResourceRegistryOptions,
  ResourceTemplateOptions,
  SyncResult,
  TemplateVariables,
} from "./options.js";
export { DEFAULT_RESOURCE_TEMPLATES } from "./templates.js";

const check = optionCheck("ResourceRegistry");

/**
 * Exposes stored files as MCP resources: URI templates, scoped and paginated `resources/list`,
 * `resources/read` (text, base64 blob, or a signed URL for large files), `resource_link`s with a
 * text fallback, `list_changed`/`updated` notifications, completion, and a resolver so tools accept
 * the URIs as file arguments.
 *
 * @example
 * ```ts
 * import { defaultScope, memoryStore, ResourceRegistry } from "mcp-file-bridge";
 *
 * const registry = new ResourceRegistry({ store: memoryStore() });
 * const server = new McpServer({ name: "files", version: "1.0.0" });
 * registry.attach(server); // before server.connect()
 *
 * server.registerTool("make_report", { description: "Writes a report" }, async (extra) => {
 *   const file = await registry.add(new TextEncoder().encode("# Report"), {
 *     scope: defaultScope(extra),
 *     name: "report.md",
 *     kind: "artifact",
 *   });
 *   return registry.link(file); // resource_link + text fallback + structuredContent
 * });
 * ```
 */
export class ResourceRegistry {
  private readonly store: FileStore;
  private readonly templates: TemplateSet;
  private readonly scopeOf: ScopeFunction;
  private readonly authorizeFn: AuthorizeFunction | undefined;
  private readonly listMode: "list" | "none";
  private readonly feed: ChangeFeed | undefined;
  private readonly unsubscribeFeed: (() => void) | undefined;
  private readonly unsubscribeResync: (() => void) | undefined;
  private readonly pageSize: number;
  private readonly maxInlineBytes: number;
  private readonly textTypes: ReadonlySet<string>;
  private readonly minter: Pick<UrlSigner, "downloadUrl" | "scopeRefs"> | undefined;
  private readonly downloadClaims: DownloadClaimsFunction | undefined;
  private readonly notifyDelayMs: number;
  private readonly now: () => number;
  private readonly indexes: ScopeIndexes;
  private readonly notifier: ResourceNotifier;
  private readonly view: RegistryView;

  /**
   * @throws FileBridgeError `INVALID_OPTION` naming the bad option.
   */
  constructor(options: ResourceRegistryOptions) {
    const settings = checkRegistryOptions(options);
    this.store = settings.store;
    this.templates = settings.templates;
    this.scopeOf = settings.scopeOf;
    this.authorizeFn = settings.authorizeFn;
    this.feed = settings.feed;
    this.unsubscribeFeed = this.feed?.subscribe((change) => {
      this.applyRemote(change).catch(() => {}); // best effort: the next list reloads from the store
    });
    this.unsubscribeResync = this.feed?.onResync?.(() => {
      this.resync().catch(() => {});
    });
    this.listMode = settings.listMode;
    this.pageSize = settings.pageSize;
    this.maxInlineBytes = settings.maxInlineBytes;
    this.textTypes = settings.textTypes;
    this.minter = settings.minter;
    this.downloadClaims = settings.downloadClaims;
    this.notifyDelayMs = settings.notifyDelayMs;
    this.now = settings.now;
    const store = settings.store;

    const idle = options.indexIdleTimeout ?? "10m";
    const indexIdleMs = idle === false ? undefined : durationToMs(idle, "indexIdleTimeout");
    this.notifier = new ResourceNotifier(this.notifyDelayMs, this.listMode, this.scopeOf);
    this.indexes = new ScopeIndexes(
      store,
      (file) => this.templates.templateFor(file).index,
      this.now,
      indexIdleMs,
      () => this.notifier.attachedScopes(),
    );
    this.view = {
      templates: this.templates,
      listMode: this.listMode,
      pageSize: this.pageSize,
      isLive: this.isLive,
      withIndex: (scope, fn) => this.indexes.with(scope, fn),
      listIndex: (scope, after, limit) => this.indexes.page(scope, after, limit, this.isLive),
      uriFor: (file) => this.templates.uriFor(file),
      templateFor: (file) => this.templates.templateFor(file),
      callerScope: (extra) => this.callerScope(extra),
      mayAccess: (scope, callerScope, extra) => this.mayAccess(scope, callerScope, extra),
      scopeFor: (parsed, callerScope) => this.templates.scopeFor(parsed, callerScope),
      resolveUri: (uri, callerScope, extra) => this.resolveUri(uri, callerScope, extra),
      read: (uri, extra) => this.read(uri, extra),
    };
  }

  // ---------------------------------------------------------------- URIs

  /**
   * The resource URI of a stored file, from the first template of its kind.
   *
   * @example
   * ```ts
   * registry.uriFor(file); // "file://uploads/q3X0…/q3%20report.pdf": the scope's reference, not the scope
   * ```
   */
  uriFor(file: StoredFile): string {
    return this.templates.uriFor(file);
  }

  /**
   * Parses a URI against the templates: its scope reference (or, for `scopeInUri: "raw"` templates,
   * its scope), id and path (decoded once), or `null` when it matches none or carries an invalid
   * value (a `..` segment, a malformed id, reference or escape).
   *
   * @example
   * ```ts
   * registry.parseUri(registry.uriFor(file)); // { template: "uploads", scopeRef: scopeRef(file.scope), path: file.name }
   * ```
   */
  parseUri(uri: string): ParsedResourceUri | null {
    const parsed = this.templates.parse(uri);
    return parsed ? this.templates.describe(parsed) : null;
  }

  // ---------------------------------------------------------------- access

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
      if (!file || file.scope !== scope || this.templates.templateFor(file) !== template) return null;
      if (parsed.path !== undefined && file.name !== parsed.path) return null;
      return file;
    }
    const path = parsed.path as string;
    for (;;) {
      const candidate = await this.indexes.with(scope, (index) => index.latestByName(template.index, path));
      if (!candidate) return null;
      const fresh = await this.store.head(scope, candidate.id);
      if (fresh && this.isLive(fresh)) return fresh;
      // Gone from the store (expired, or removed by another process): forget it and try the next.
      await this.indexes.with(scope, (index) => {
        if (index.delete(candidate.id)) this.notifier.changed(scope, true, [this.uriFor(candidate)]);
      });
    }
  }

  private async resolveUri(uri: string, callerScope: string, extra?: ScopeSource): Promise<StoredFile> {
    const parsed = this.templates.parse(uri);
    if (!parsed) throw resourceNotFound(uri);
    const scope = this.templates.scopeFor(parsed, callerScope);
    if (scope === null || !(await this.mayAccess(scope, callerScope, extra))) throw resourceNotFound(uri);
    const file = await this.find(parsed, scope);
    if (!file) throw resourceNotFound(uri);
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
    await this.indexes.with(file.scope, (index) => {
      // Always a list change: even when a first use just loaded the scope (file included) from the
      // store, no session has been told about the file yet.
      index.upsert(file);
      this.notifier.changed(file.scope, true, [this.uriFor(file)]);
    });
    this.publish({ type: "added", scope: file.scope, file });
  }

  private publish(change: StoreChange): void {
    this.feed?.publish(change).catch(() => {}); // best effort: other replicas reload on their next list
  }

  /** A change another replica made: update the scope's index if this replica holds it, and notify. */
  private async applyRemote(change: StoreChange): Promise<void> {
    const { scope } = change;
    assertScope(scope);
    if (change.type === "added") {
      const file = change.file;
      if (file.scope !== scope || !isId(file.id)) return;
      if (this.indexes.peek(scope)) await this.indexes.with(scope, (index) => index.upsert(file));
      this.notifier.changed(scope, true, [this.uriFor(file)]);
      return;
    }
    if (!isId(change.id)) return;
    const known = this.indexes.peek(scope)
      ? await this.indexes.with(scope, (index) => index.delete(change.id))
      : undefined;
    this.notifier.changed(scope, true, known ? [this.uriFor(known)] : []);
  }

  /**
   * The feed was cut off and may have missed other replicas' changes: re-read every scope this
   * replica holds from the store (its sessions get `list_changed` / `updated` for what differs);
   * a scope that cannot be re-read now is forgotten, so its next use loads it afresh.
   */
  private async resync(): Promise<void> {
    this.notifier.resynced();
    for (const scope of this.indexes.loadedScopes()) {
      try {
        await this.sync(scope);
      } catch {
        await this.indexes.mutexFor(scope).runExclusive(() => this.indexes.forget(scope));
      }
    }
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
    return this.indexes.with(scope, async (index) => {
      const known = index.get(id) ?? (await this.store.head(scope, id)) ?? undefined;
      const deleted = await this.store.delete(scope, id);
      const dropped = index.delete(id);
      if (known && (deleted || dropped)) this.notifier.changed(scope, true, [this.uriFor(known)]);
      if (deleted || dropped !== undefined) this.publish({ type: "removed", scope, id });
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
    return this.indexes.mutexFor(scope).runExclusive(async () => {
      const fresh = await this.indexes.load(scope);
      const old = this.indexes.peek(scope);
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
      this.indexes.replace(scope, fresh);
      if (added > 0 || removed > 0 || uris.length > 0)
        this.notifier.changed(scope, added + removed > 0, uris);
      return { added, removed };
    });
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
    // Another scope's file can be linked only where its URI can name that scope (a raw template):
    // a reference URI would resolve for nobody but the file's own scope.
    const foreign = options.scope !== undefined && options.scope !== file.scope;
    if (
      foreign &&
      (this.templates.templateFor(file).scopeInUri !== "raw" ||
        !(await this.mayAccess(file.scope, options.scope as string)))
    ) {
      throw new FileBridgeError("NOT_FOUND", "file not found", uriHint);
    }
    const fresh = await this.store.head(file.scope, file.id);
    if (!fresh) throw new FileBridgeError("NOT_FOUND", "file not found", uriHint);
    const uri = this.uriFor(fresh);
    const download = await this.mintDownload(fresh, options.extra);
    const content = fileLinkContent(fresh, uri, {
      noun: "File",
      notes: ["Pass this URI as a file argument to other tools, or read it with resources/read."],
      download,
    });
    const structured = fileOutputOf(fresh, uri, download) as FileLinkInfo;
    const value = fileValueOutput(fresh, options.clientCapabilities, scopeRefsOf(this.minter));
    const offer =
      download && wantsDownloadOffers(options.clientCapabilities)
        ? { _meta: withDownloadOffers(undefined, [downloadOffer(fresh, download)]) }
        : {};
    return { content, structuredContent: value ? { ...structured, file: value } : structured, ...offer };
  }

  /**
   * A resolver for `FileBridge.addResolver`: tool arguments that are this registry's URIs resolve
   * to the stored file, scope-checked (another scope is "not found" unless `authorize` allows it).
   *
   * @example
   * ```ts
   * bridge.addResolver(registry.resolver());
   * const file = await bridge.resolve(registry.uriFor(stored), { scope: stored.scope });
   * ```
   */
  resolver(): FileSourceResolver {
    return {
      name: "resource URI",
      matches: (input: string) => this.templates.parse(input) !== null,
      resolve: async (input: string, context: { scope: string }): Promise<ResolverResult | null> => {
        const parsed = this.templates.parse(input);
        if (!parsed) return null;
        const scope = this.templates.scopeFor(parsed, context.scope);
        if (scope === null || !(await this.mayAccess(scope, context.scope))) return null;
        const file = await this.find(parsed, scope);
        if (!file) return null;
        return storedFileSource(this.store, file);
      },
    };
  }

  // ---------------------------------------------------------------- MCP

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
    return readFileResource(this.store, file, uri, {
      maxInlineBytes: this.maxInlineBytes,
      textTypes: this.textTypes,
      mintDownload: () => this.mintDownload(file, extra),
    });
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
    const existing = this.notifier.attachments.get(host.server);
    if (existing) {
      // Attaching again only adds the scope (the handlers are mounted once).
      if (options.scope !== undefined) existing.scopes.add(options.scope);
      return;
    }
    if (host.isConnected())
      throw check.error("server", "is already connected: attach() must run before server.connect()");
    for (const method of RESOURCE_METHODS) {
      if (!host.canHandle(method)) throw check.error("server", `already handles ${method}`);
    }
    host.declareCapabilities({ resources: { subscribe: true, listChanged: true }, completions: {} });

    const attachment: Attachment = {
      host,
      scopes: new Set(options.scope === undefined ? [] : [options.scope]),
      subscriptions: new Map(),
      connected: false,
    };
    this.notifier.attachments.set(host.server, attachment);
    host.onClose(() => {
      if (this.notifier.attachments.get(host.server) === attachment)
        this.notifier.attachments.delete(host.server);
    });

    mountResourceHandlers(host, attachment, this.view);
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
    this.notifier.attachments.delete(toHost(server, "detach()").server);
  }

  /**
   * Also sends the registry's change notifications to a deployment-wide channel: SDK v2's
   * `createMcpHandler()` result (or its `notify`), whose `subscriptions/listen` streams are how
   * 2026-07-28 clients hear of changes — there the server is built per request and has no
   * connection to send on. `list_changed` is coalesced as for attached servers; `updated` goes out
   * for every changed URI and reaches only the streams that named that URI. Returns a function that
   * stops it. (SDK v1, and SDK v2 over stdio or in memory, need nothing of this: attached servers
   * are notified on their connection.)
   *
   * @example
   * ```ts
   * const handler = createMcpHandler(() => {
   *   const server = new McpServer({ name: "files", version: "1.0.0" });
   *   registry.attach(server);
   *   return server;
   * });
   * registry.publishTo(handler);
   * ```
   */
  publishTo(target: ResourceChangeSink | { notify: ResourceChangeSink }): () => void {
    const sink = "notify" in target ? target.notify : target;
    if (
      typeof sink !== "object" ||
      sink === null ||
      typeof sink.resourcesChanged !== "function" ||
      typeof sink.resourceUpdated !== "function"
    ) {
      throw check.error("publishTo(handler)", "needs `notify`, or { resourcesChanged, resourceUpdated }");
    }
    this.notifier.sinks.add(sink);
    return () => {
      this.notifier.sinks.delete(sink);
    };
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
    this.unsubscribeFeed?.();
    this.unsubscribeResync?.();
    this.notifier.close();
  }
}

export type { DownloadClaimsFunction };

/**
 * Where `ResourceRegistry.publishTo` sends changes: the shape of SDK v2's `ServerNotifier`
 * (`createMcpHandler(...).notify`).
 *
 * @example
 * ```ts
 * const sink: ResourceChangeSink = handler.notify;
 * registry.publishTo(sink);
 * ```
 */
export interface ResourceChangeSink extends ChangeSink {
  /** The resource list changed (`notifications/resources/list_changed`). */
  resourcesChanged(): void;
  /** One resource changed (`notifications/resources/updated`). */
  resourceUpdated(uri: string): void;
}
