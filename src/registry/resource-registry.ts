import { storedFileSource } from "../bridge/stored-file-source.js";
import type { FileSourceResolver, ResolverResult } from "../bridge/types.js";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { durationToMs } from "../internal/duration.js";
import { firstUse } from "../internal/first-use.js";
import { isId } from "../internal/ids.js";
import { optionCheck } from "../internal/options.js";
import { downloadOffer, wantsDownloadOffers, withDownloadOffers } from "../links/download-offer.js";
import { fileLinkContent, fileOutputOf, fileValueOutput } from "../links/file-link.js";
import type { HostInput } from "../mcp/host.js";
import { toHost } from "../mcp/to-host.js";
import { assertScope } from "../scope/scope.js";
import { scopeRefsOf } from "../scope/scope-refs.js";
import type { DownloadClaimsFunction } from "../signing/types.js";
import type { PutOptions, PutSource, StoreChange, StoredFile } from "../storage/types.js";
import { checkRegistryOptions, type RegistrySettings } from "./check-options.js";
import { mountResourceHandlers, RESOURCE_METHODS, type RequestExtra } from "./handlers.js";
import { type Attachment, type ChangeSink, ResourceNotifier } from "./notifier.js";
import type {
  AttachOptions,
  FileLinkInfo,
  FileLinkResult,
  LinkOptions,
  ParsedResourceUri,
  ResourceRegistryOptions,
  SyncResult,
} from "./options.js";
import type { RegistryWork } from "./registry-work.js";
import type { TemplateSet } from "./templates.js";

// The public class. Its jobs live beside it: options.ts (option and result types), check-options.ts
// (the options checked), templates.ts (URI templates), notifier.ts (attachments and the notification
// state), handlers.ts (the MCP side, mounted by attach()). What only its async paths run is
// loaded on first use (issue 39): registry-work.ts (the work of add, register, remove, sync, link,
// the resolver and the handlers), with scope-indexes.ts + scope-index.ts + cursor.ts (per-scope
// index and list cursors), handler-work.ts (the handlers' answers, list pages, completion),
// notifier-work.ts (coalesced notifications) and read-content.ts (resources/read).

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

/** The registry's async work (registry-work.ts), loaded on its first use. */
const loadWork = firstUse(() => import("./registry-work.js"));

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
  private readonly settings: RegistrySettings;
  private readonly templates: TemplateSet;
  private readonly unsubscribeFeed: (() => void) | undefined;
  private readonly unsubscribeResync: (() => void) | undefined;
  private readonly notifier: ResourceNotifier;
  /** What only the async paths run: made (its module loaded) on the first of them. */
  private readonly work: () => Promise<RegistryWork>;

  /**
   * @throws FileBridgeError `INVALID_OPTION` naming the bad option.
   */
  constructor(options: ResourceRegistryOptions) {
    const settings = checkRegistryOptions(options);
    this.settings = settings;
    this.templates = settings.templates;
    this.unsubscribeFeed = settings.feed?.subscribe((change) => {
      this.applyRemote(change).catch(() => {}); // best effort: the next list reloads from the store
    });
    this.unsubscribeResync = settings.feed?.onResync?.(() => {
      this.resync().catch(() => {});
    });
    const idle = options.indexIdleTimeout ?? "10m";
    const indexIdleMs = idle === false ? undefined : durationToMs(idle, "indexIdleTimeout");
    this.notifier = new ResourceNotifier(settings.notifyDelayMs, settings.listMode, settings.scopeOf);
    const deps = {
      ...settings,
      notifier: this.notifier,
      indexIdleMs,
      callerScope: (extra: RequestExtra) => this.callerScope(extra),
    };
    this.work = firstUse(async () => new (await loadWork()).RegistryWork(deps));
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

  private async callerScope(extra: RequestExtra): Promise<string> {
    const scope = await this.settings.scopeOf(extra);
    assertScope(scope);
    return scope;
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
    const file = await this.settings.store.put(source, options);
    await (await this.work()).index(file);
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
    const fresh = isId(file.id) ? await this.settings.store.head(file.scope, file.id) : null;
    if (!fresh)
      throw new FileBridgeError("NOT_FOUND", "no such file in the store", { data: { id: file.id } });
    await (await this.work()).index(fresh);
    return fresh;
  }

  /** A change another replica made: checked here, applied by the work (which may load for it). */
  private async applyRemote(change: StoreChange): Promise<void> {
    assertScope(change.scope);
    const valid =
      change.type === "added" ? change.file.scope === change.scope && isId(change.file.id) : isId(change.id);
    if (valid) await (await this.work()).applyRemote(change);
  }

  /**
   * The feed was cut off and may have missed other replicas' changes: re-read every scope this
   * replica holds from the store (its sessions get `list_changed` / `updated` for what differs);
   * a scope that cannot be re-read now is forgotten, so its next use loads it afresh.
   */
  private async resync(): Promise<void> {
    this.notifier.resynced();
    await (await this.work()).resync();
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
    return (await this.work()).remove(scope, id);
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
    return (await this.work()).sync(scope);
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
    const { file: fresh, download } = await (await this.work()).link(file, options);
    const uri = this.uriFor(fresh);
    const content = fileLinkContent(fresh, uri, {
      noun: "File",
      notes: ["Pass this URI as a file argument to other tools, or read it with resources/read."],
      download,
    });
    const structured = fileOutputOf(fresh, uri, download) as FileLinkInfo;
    const value = fileValueOutput(fresh, options.clientCapabilities, scopeRefsOf(this.settings.minter));
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
        const file = await (await this.work()).resolve(parsed, context.scope);
        return file ? storedFileSource(this.settings.store, file) : null;
      },
    };
  }

  // ---------------------------------------------------------------- MCP

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

    mountResourceHandlers(host, attachment, { templates: this.templates, work: this.work });
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
