import { FileBridgeError } from "../errors/file-bridge-error.js";
import { baseName } from "../internal/file-name.js";
import { toMcpRequestError } from "../mcp/errors.js";
import type { McpHost } from "../mcp/host.js";
import type { CompleteResult, ListResourcesResult, McpResource, ReadResourceResult } from "../mcp/types.js";
import type { ScopeSource } from "../scope/scope.js";
import type { StoredFile } from "../storage/types.js";
import { decodeListCursor, encodeListCursor } from "./cursor.js";
import type { Attachment } from "./notifier.js";
import type { IndexPage, ScopeIndex } from "./scope-index.js";
import { type ParsedUri, type TemplateSet, validScope } from "./templates.js";

/**
 * The registry's MCP side: the `resources/*` handlers and the completion provider it mounts on a
 * host (`ResourceRegistry.attach`), the paginated list and the completion of template variables.
 */

/** An MCP request's `extra`, as scope functions see it. */
export type RequestExtra = ScopeSource & { signal?: AbortSignal };

/** What the handlers use of the registry. */
export interface RegistryView {
  readonly templates: TemplateSet;
  readonly listMode: "list" | "none";
  readonly pageSize: number;
  isLive(file: StoredFile): boolean;
  withIndex<T>(scope: string, fn: (index: ScopeIndex) => T | Promise<T>): Promise<T>;
  /** A list page of the scope's index (answered before a large scope is wholly loaded). */
  listIndex(scope: string, after: string | undefined, limit: number): Promise<IndexPage>;
  uriFor(file: StoredFile): string;
  templateFor(file: Pick<StoredFile, "kind">): ReturnType<TemplateSet["templateFor"]>;
  callerScope(extra: RequestExtra): Promise<string>;
  mayAccess(scope: string, callerScope: string, extra?: ScopeSource): Promise<boolean>;
  /** The scope a parsed URI names for this caller; `null` for another scope's reference. */
  scopeFor(parsed: ParsedUri, callerScope: string): string | null;
  resolveUri(uri: string, callerScope: string, extra?: ScopeSource): Promise<StoredFile>;
  read(uri: string, extra: RequestExtra): Promise<ReadResourceResult>;
}

export const RESOURCE_METHODS = [
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
] as const;
const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };
const MAX_COMPLETION_VALUES = 100;

async function listPage(
  view: RegistryView,
  scope: string,
  cursor: string | undefined,
): Promise<ListResourcesResult> {
  if (view.listMode === "none") {
    if (cursor !== undefined) throw new FileBridgeError("INVALID_CURSOR", "invalid cursor");
    return { resources: [] };
  }
  const after = cursor === undefined ? undefined : decodeListCursor(scope, cursor);
  const page = await view.listIndex(scope, after, view.pageSize);
  const resources: McpResource[] = page.files.map((file) => ({
    uri: view.uriFor(file),
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

/**
 * The scope a completion's context names (the scope variable's value), when the caller may see it;
 * else the caller's own scope.
 */
async function namedScope(
  view: RegistryView,
  template: ParsedUri["template"],
  named: string | undefined,
  callerScope: string,
  extra: RequestExtra,
): Promise<string> {
  if (named === undefined || !template.scopeVar) return callerScope;
  const parsed: ParsedUri =
    template.scopeInUri === "raw" ? { template, scope: named } : { template, scopeRef: named };
  const scope = view.scopeFor(parsed, callerScope);
  if (scope === null || !validScope(scope)) return callerScope;
  return (await view.mayAccess(scope, callerScope, extra)) ? scope : callerScope;
}

async function complete(
  view: RegistryView,
  templateUri: string,
  argument: { name: string; value: string },
  context: Record<string, string> | undefined,
  extra: RequestExtra,
): Promise<CompleteResult | null> {
  const template = view.templates.bySource(templateUri);
  if (!template) return null;
  const callerScope = await view.callerScope(extra);
  const prefix = argument.value.toLowerCase();
  let candidates: string[] = [];
  if (argument.name === template.scopeVar) {
    // The caller's own scope, as the template writes it (its reference, unless the template is raw).
    candidates = [view.templates.scopeValue(template, callerScope)];
  } else if (argument.name === template.idVar || argument.name === template.pathVar) {
    const named = template.scopeVar ? context?.[template.scopeVar] : undefined;
    const scope = await namedScope(view, template, named, callerScope, extra);
    const byId = argument.name === template.idVar;
    candidates = await view.withIndex(scope, (index) => {
      const seen = new Set<string>();
      for (const file of index.all()) {
        if (view.templateFor(file) !== template || !view.isLive(file)) continue;
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

/** Mounts the `resources/*` handlers and the completion provider of one attachment. */
export function mountResourceHandlers(host: McpHost, attachment: Attachment, view: RegistryView): void {
  const scoped = async (extra: RequestExtra): Promise<string> => {
    const scope = await view.callerScope(extra);
    attachment.scopes.add(scope);
    attachment.connected = true;
    return scope;
  };

  host.handle("resources/list", async (params, { extra }) => {
    try {
      const scope = await scoped(extra);
      return await listPage(view, scope, params.cursor);
    } catch (error) {
      throw toMcpRequestError(error);
    }
  });
  host.handle("resources/templates/list", async (_params, { extra }) => {
    await scoped(extra).catch(() => undefined);
    return { resourceTemplates: view.templates.descriptors() };
  });
  host.handle("resources/read", async ({ uri }, { extra }) => {
    try {
      await scoped(extra);
      return await view.read(uri, extra);
    } catch (error) {
      throw toMcpRequestError(error, { uri });
    }
  });
  host.handle("resources/subscribe", async ({ uri }, { extra }) => {
    try {
      const callerScope = await scoped(extra);
      const file = await view.resolveUri(uri, callerScope, extra);
      // Keyed by the canonical URI, so a client's own spelling (a raw space, `?`) still matches.
      attachment.subscriptions.set(`${file.scope}\n${view.templates.uriFor(file)}`, uri);
      return {};
    } catch (error) {
      throw toMcpRequestError(error, { uri });
    }
  });
  host.handle("resources/unsubscribe", async ({ uri }, { extra }) => {
    try {
      const callerScope = await scoped(extra);
      const parsed = view.templates.parse(uri);
      const scope = parsed ? view.scopeFor(parsed, callerScope) : null;
      if (parsed && scope !== null) {
        const values = { scope, id: parsed.id ?? "", name: parsed.path ?? "" };
        attachment.subscriptions.delete(`${scope}\n${view.templates.uriWith(parsed.template, values)}`);
      }
      return {};
    } catch (error) {
      throw toMcpRequestError(error, { uri });
    }
  });
  // Completion of our templates' variables; prompts and other references stay with the server.
  host.addCompletion({
    handles: (ref) => ref.type === "ref/resource" && view.templates.bySource(ref.uri) !== undefined,
    complete: async ({ ref, argument, context }, { extra }) => {
      const uri = ref.type === "ref/resource" ? ref.uri : "";
      try {
        return (await complete(view, uri, argument, context?.arguments, extra)) ?? EMPTY_COMPLETION;
      } catch (error) {
        throw toMcpRequestError(error);
      }
    },
  });
}
