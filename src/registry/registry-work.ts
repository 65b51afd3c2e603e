/**
 * What only the async paths of `ResourceRegistry` run — the per-scope indexes, finding and
 * resolving URIs, registering and removing files, syncs and remote changes, a link's checks and
 * download URL, reads, and the `resources/*` handlers' list pages and completions — loaded on first
 * use (`loadWork()` in resource-registry.ts): a server's start does not compile it (issue 39). The
 * registry's constructor, option checks, templates and `attach` stay where they are, synchronous;
 * so do the link's content blocks and the resolver's file source, whose modules the root shares
 * (importing them from here would split their CommonJS chunk).
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import type { HostMethods } from "../mcp/host.js";
import type {
  CompleteParams,
  CompleteResult,
  ListResourcesResult,
  ReadResourceResult,
} from "../mcp/types.js";
import type { ScopeSource } from "../scope/scope.js";
import type { StoreChange, StoredFile } from "../storage/types.js";
import type { RegistrySettings } from "./check-options.js";
import { answerResource, completeTemplate, listPage } from "./handler-work.js";
import type { RequestExtra, RequestWork, ResourceMethod } from "./handlers.js";
import type { Attachment, ResourceNotifier } from "./notifier.js";
import { NotifierWork } from "./notifier-work.js";
import type { LinkOptions } from "./options.js";
import { readFileResource, resourceNotFound } from "./read-content.js";
import type { ScopeIndex } from "./scope-index.js";
import { ScopeIndexes } from "./scope-indexes.js";
import type { ParsedUri, Template } from "./templates.js";

/** What the work uses of its registry: the checked options and the parts built with them. */
export interface RegistryDeps extends RegistrySettings {
  readonly notifier: ResourceNotifier;
  /** How long an unused scope's index is kept; `undefined` keeps every scope. */
  readonly indexIdleMs: number | undefined;
  /** The caller's scope, checked (the registry's `scope` option). */
  callerScope(extra: RequestExtra): Promise<string>;
}

/** What a link is made of (`RegistryWork.link`). */
export interface LinkTarget {
  readonly file: StoredFile;
  readonly download: { url: string; expiresAt: number } | undefined;
}

/** The async side of one `ResourceRegistry`, made on its first async call. */
export class RegistryWork implements RequestWork {
  private readonly indexes: ScopeIndexes;
  /** Collects the changes and sends the notifications (the registry's notifier state). */
  private readonly notifier: NotifierWork;

  constructor(private readonly deps: RegistryDeps) {
    const { store, templates, now, indexIdleMs } = deps;
    const notifier = new NotifierWork(deps.notifier);
    this.notifier = notifier;
    this.indexes = new ScopeIndexes(
      store,
      (file) => templates.templateFor(file).index,
      now,
      indexIdleMs,
      () => notifier.attachedScopes(),
    );
  }

  // ---------------------------------------------------------------- access

  private readonly isLive = (file: StoredFile): boolean =>
    file.expiresAt === undefined || file.expiresAt > this.deps.now();

  private uriFor(file: StoredFile): string {
    return this.deps.templates.uriFor(file);
  }

  async mayAccess(scope: string, callerScope: string, extra?: ScopeSource): Promise<boolean> {
    if (scope === callerScope) return true;
    const { authorizeFn } = this.deps;
    if (!authorizeFn) return false;
    try {
      return (await authorizeFn(scope, { callerScope, ...(extra === undefined ? {} : { extra }) })) === true;
    } catch {
      return false;
    }
  }

  /** Finds the live file a parsed URI names in `scope`, or `null`. */
  private async find(parsed: ParsedUri, scope: string): Promise<StoredFile | null> {
    const { template } = parsed;
    const { store, templates } = this.deps;
    const { notifier } = this;
    if (parsed.id !== undefined) {
      const file = await store.head(scope, parsed.id);
      if (!file || file.scope !== scope || templates.templateFor(file) !== template) return null;
      if (parsed.path !== undefined && file.name !== parsed.path) return null;
      return file;
    }
    const path = parsed.path as string;
    for (;;) {
      const candidate = await this.indexes.with(scope, (index) => index.latestByName(template.index, path));
      if (!candidate) return null;
      const fresh = await store.head(scope, candidate.id);
      if (fresh && this.isLive(fresh)) return fresh;
      // Gone from the store (expired, or removed by another process): forget it and try the next.
      await this.indexes.with(scope, (index) => {
        if (index.delete(candidate.id)) notifier.changed(scope, true, [this.uriFor(candidate)]);
      });
    }
  }

  async resolveUri(uri: string, callerScope: string, extra?: ScopeSource): Promise<StoredFile> {
    const { templates } = this.deps;
    const parsed = templates.parse(uri);
    if (!parsed) throw resourceNotFound(uri);
    const scope = templates.scopeFor(parsed, callerScope);
    if (scope === null || !(await this.mayAccess(scope, callerScope, extra))) throw resourceNotFound(uri);
    const file = await this.find(parsed, scope);
    if (!file) throw resourceNotFound(uri);
    return file;
  }

  /** `ResourceRegistry.resolver()`'s lookup, past the parse: the file, or `null` (also for no access). */
  async resolve(parsed: ParsedUri, callerScope: string): Promise<StoredFile | null> {
    const scope = this.deps.templates.scopeFor(parsed, callerScope);
    if (scope === null || !(await this.mayAccess(scope, callerScope))) return null;
    return this.find(parsed, scope);
  }

  // ---------------------------------------------------------------- changes

  /** Lists a file in its scope's index and tells the scope's sessions and the other replicas. */
  async index(file: StoredFile): Promise<void> {
    await this.indexes.with(file.scope, (index) => {
      // Always a list change: even when a first use just loaded the scope (file included) from the
      // store, no session has been told about the file yet.
      index.upsert(file);
      this.notifier.changed(file.scope, true, [this.uriFor(file)]);
    });
    this.publish({ type: "added", scope: file.scope, file });
  }

  private publish(change: StoreChange): void {
    this.deps.feed?.publish(change).catch(() => {}); // best effort: other replicas reload on their next list
  }

  /**
   * A change another replica made (checked by the registry: a valid scope and id, a file of that
   * scope): update the scope's index if this replica holds it, and notify.
   */
  async applyRemote(change: StoreChange): Promise<void> {
    const { scope } = change;
    const { notifier } = this;
    if (change.type === "added") {
      const file = change.file;
      if (this.indexes.peek(scope)) await this.indexes.with(scope, (index) => index.upsert(file));
      notifier.changed(scope, true, [this.uriFor(file)]);
      return;
    }
    const known = this.indexes.peek(scope)
      ? await this.indexes.with(scope, (index) => index.delete(change.id))
      : undefined;
    notifier.changed(scope, true, known ? [this.uriFor(known)] : []);
  }

  /**
   * Re-reads every scope this replica holds from the store (after the feed was cut off); a scope
   * that cannot be re-read now is forgotten, so its next use loads it afresh.
   */
  async resync(): Promise<void> {
    for (const scope of this.indexes.loadedScopes()) {
      try {
        await this.sync(scope);
      } catch {
        await this.indexes.mutexFor(scope).runExclusive(() => this.indexes.forget(scope));
      }
    }
  }

  /** `ResourceRegistry.remove`, past its argument checks. */
  async remove(scope: string, id: string): Promise<boolean> {
    const { store } = this.deps;
    const { notifier } = this;
    return this.indexes.with(scope, async (index) => {
      const known = index.get(id) ?? (await store.head(scope, id)) ?? undefined;
      const deleted = await store.delete(scope, id);
      const dropped = index.delete(id);
      if (known && (deleted || dropped)) notifier.changed(scope, true, [this.uriFor(known)]);
      if (deleted || dropped !== undefined) this.publish({ type: "removed", scope, id });
      return deleted || dropped !== undefined;
    });
  }

  /** `ResourceRegistry.sync`, past its argument check. */
  async sync(scope: string): Promise<{ added: number; removed: number }> {
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

  // ---------------------------------------------------------------- links and reads

  /**
   * `ResourceRegistry.link`, past its argument checks: the file as the store has it now, and its
   * download URL (the registry writes the link's content blocks).
   */
  async link(file: StoredFile, options: LinkOptions): Promise<LinkTarget> {
    const { store, templates } = this.deps;
    const uriHint = { data: { id: file.id } };
    // Another scope's file can be linked only where its URI can name that scope (a raw template):
    // a reference URI would resolve for nobody but the file's own scope.
    const foreign = options.scope !== undefined && options.scope !== file.scope;
    if (
      foreign &&
      (templates.templateFor(file).scopeInUri !== "raw" ||
        !(await this.mayAccess(file.scope, options.scope as string)))
    ) {
      throw new FileBridgeError("NOT_FOUND", "file not found", uriHint);
    }
    const fresh = await store.head(file.scope, file.id);
    if (!fresh) throw new FileBridgeError("NOT_FOUND", "file not found", uriHint);
    return { file: fresh, download: await this.mintDownload(fresh, options.extra) };
  }

  /** A download URL for `file` with the `downloadClaims` of the caller, or `undefined` without a minter. */
  private async mintDownload(
    file: StoredFile,
    extra: ScopeSource | undefined,
  ): Promise<{ url: string; expiresAt: number } | undefined> {
    const { minter, downloadClaims } = this.deps;
    if (!minter) return undefined;
    const claims = await downloadClaims?.(file, extra);
    return claims === undefined ? await minter.downloadUrl(file) : await minter.downloadUrl(file, { claims });
  }

  async read(uri: string, extra: RequestExtra): Promise<ReadResourceResult> {
    const callerScope = await this.deps.callerScope(extra);
    const file = await this.resolveUri(uri, callerScope, extra);
    return readFileResource(this.deps.store, file, uri, {
      maxInlineBytes: this.deps.maxInlineBytes,
      textTypes: this.deps.textTypes,
      mintDownload: () => this.mintDownload(file, extra),
    });
  }

  // ---------------------------------------------------------------- the handlers' work

  list(scope: string, cursor: string | undefined): Promise<ListResourcesResult> {
    return listPage(this.deps, scope, cursor, (after, limit) =>
      this.indexes.page(scope, after, limit, this.isLive),
    );
  }

  /** A `resources/*` request of a caller of `attachment` (handlers.ts). */
  answer<M extends ResourceMethod>(
    method: M,
    params: HostMethods[M]["params"],
    extra: RequestExtra,
    attachment: Attachment,
  ): Promise<HostMethods[M]["result"]> {
    const view = {
      templates: this.deps.templates,
      callerScope: (of: RequestExtra) => this.deps.callerScope(of),
      list: (scope: string, cursor: string | undefined) => this.list(scope, cursor),
      read: (uri: string, of: RequestExtra) => this.read(uri, of),
      resolveUri: (uri: string, callerScope: string, of?: ScopeSource) =>
        this.resolveUri(uri, callerScope, of),
    };
    return answerResource(view, method, params, extra, attachment);
  }

  /** A completion of `template`'s variable for the caller (handlers.ts). */
  async completeFor(
    template: Template,
    params: CompleteParams,
    extra: RequestExtra,
  ): Promise<CompleteResult> {
    const callerScope = await this.deps.callerScope(extra);
    const { argument, context } = params;
    return completeTemplate(
      {
        templates: this.deps.templates,
        mayAccess: (scope, callerScope, extra) => this.mayAccess(scope, callerScope, extra),
        fileValues: (scope, pick) => this.fileValues(scope, template, pick),
      },
      { template, callerScope, argument, context: context?.arguments, extra },
    );
  }

  /** The distinct values of `pick` over a scope's live files of `template`. */
  private fileValues(
    scope: string,
    template: Template,
    pick: (file: StoredFile) => string,
  ): Promise<string[]> {
    return this.indexes.with(scope, (index: ScopeIndex) => {
      const seen = new Set<string>();
      for (const file of index.all()) {
        if (this.deps.templates.templateFor(file) !== template || !this.isLive(file)) continue;
        seen.add(pick(file));
      }
      return [...seen];
    });
  }
}
