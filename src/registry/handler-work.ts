import { FileBridgeError } from "../errors/file-bridge-error.js";
import { baseName } from "../internal/file-name.js";
import type { HostMethods } from "../mcp/host.js";
import type {
  CompleteResult,
  ListResourcesResult,
  McpResource,
  McpResourceTemplate,
  ReadResourceResult,
} from "../mcp/types.js";
import { assertScope, type ScopeSource } from "../scope/scope.js";
import type { StoredFile } from "../storage/types.js";
import type { RegistrySettings } from "./check-options.js";
import { decodeListCursor, encodeListCursor } from "./cursor.js";
import type { RequestExtra, ResourceMethod } from "./handlers.js";
import type { Attachment } from "./notifier.js";
import type { IndexPage } from "./scope-index.js";
import type { ParsedUri, Template, TemplateSet } from "./templates.js";

/**
 * The work of the `resources/*` handlers and of template completion (handlers.ts mounts them): the
 * caller's scope, list pages with opaque cursors, the templates, subscriptions, and the values of a
 * template's variables. Loaded on first use with registry-work.ts.
 */

const MAX_COMPLETION_VALUES = 100;

/** What the handlers' answers use of the registry's work. */
export interface AnswerView {
  readonly templates: TemplateSet;
  callerScope(extra: RequestExtra): Promise<string>;
  list(scope: string, cursor: string | undefined): Promise<ListResourcesResult>;
  read(uri: string, extra: RequestExtra): Promise<ReadResourceResult>;
  resolveUri(uri: string, callerScope: string, extra?: ScopeSource): Promise<StoredFile>;
}

/**
 * Answers one `resources/*` request of a caller of `attachment`. The caller's scope is learned
 * first (the attachment's sessions are notified of its changes); errors are thrown as they are
 * (handlers.ts turns them into JSON-RPC errors).
 */
export async function answerResource<M extends ResourceMethod>(
  view: AnswerView,
  method: M,
  params: HostMethods[M]["params"],
  extra: RequestExtra,
  attachment: Attachment,
): Promise<HostMethods[M]["result"]> {
  const scoped = async (): Promise<string> => {
    const scope = await view.callerScope(extra);
    attachment.scopes.add(scope);
    attachment.connected = true;
    return scope;
  };
  const { cursor, uri } = params as { cursor?: string; uri: string };
  switch (method) {
    case "resources/list":
      return view.list(await scoped(), cursor) as never;
    case "resources/templates/list":
      await scoped().catch(() => undefined);
      return { resourceTemplates: templateDescriptors(view.templates) } as never;
    case "resources/read":
      await scoped();
      return view.read(uri, extra) as never;
    case "resources/subscribe": {
      const file = await view.resolveUri(uri, await scoped(), extra);
      // Keyed by the canonical URI, so a client's own spelling (a raw space, `?`) still matches.
      attachment.subscriptions.set(`${file.scope}\n${view.templates.uriFor(file)}`, uri);
      return {} as never;
    }
    default: {
      const callerScope = await scoped();
      const parsed = view.templates.parse(uri);
      const scope = parsed ? view.templates.scopeFor(parsed, callerScope) : null;
      if (parsed && scope !== null) {
        const values = { scope, id: parsed.id ?? "", name: parsed.path ?? "" };
        attachment.subscriptions.delete(`${scope}\n${view.templates.uriWith(parsed.template, values)}`);
      }
      return {} as never;
    }
  }
}

/** What `resources/templates/list` shows. */
export function templateDescriptors(templates: TemplateSet): McpResourceTemplate[] {
  return templates.all.map(({ options: t, parsed }) => ({
    name: t.name,
    uriTemplate: parsed.source,
    ...(t.title === undefined ? {} : { title: t.title }),
    ...(t.description === undefined ? {} : { description: t.description }),
    ...(t.mimeType === undefined ? {} : { mimeType: t.mimeType }),
  }));
}

/** A list page of a scope's index, with the cursor of the next one. */
export async function listPage(
  settings: Pick<RegistrySettings, "listMode" | "pageSize" | "templates">,
  scope: string,
  cursor: string | undefined,
  pageOf: (after: string | undefined, limit: number) => Promise<IndexPage>,
): Promise<ListResourcesResult> {
  if (settings.listMode === "none") {
    if (cursor !== undefined) throw new FileBridgeError("INVALID_CURSOR", "invalid cursor");
    return { resources: [] };
  }
  const after = cursor === undefined ? undefined : decodeListCursor(scope, cursor);
  const page = await pageOf(after, settings.pageSize);
  const resources: McpResource[] = page.files.map((file) => ({
    uri: settings.templates.uriFor(file),
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

/** What a completion uses of the registry. */
export interface CompletionView {
  readonly templates: TemplateSet;
  mayAccess(scope: string, callerScope: string, extra?: ScopeSource): Promise<boolean>;
  /** The distinct values of `pick` over the live files of the completed template in `scope`. */
  fileValues(scope: string, pick: (file: StoredFile) => string): Promise<string[]>;
}

/** The variable being completed (`completion/complete`'s `argument`). */
export interface CompletionArgument {
  name: string;
  value: string;
}

/** One completion of one of the registry's templates, its caller's scope known. */
export interface CompletionRequest {
  readonly template: Template;
  readonly callerScope: string;
  readonly argument: CompletionArgument;
  readonly context: Record<string, string> | undefined;
  readonly extra: ScopeSource;
}

/**
 * The scope a completion's context names (the scope variable's value), when the caller may see it;
 * else the caller's own scope.
 */
async function namedScope(view: CompletionView, request: CompletionRequest): Promise<string> {
  const { template, callerScope, context } = request;
  const named = template.scopeVar ? context?.[template.scopeVar] : undefined;
  if (named === undefined || !template.scopeVar) return callerScope;
  const parsed: ParsedUri =
    template.scopeInUri === "raw" ? { template, scope: named } : { template, scopeRef: named };
  const scope = view.templates.scopeFor(parsed, callerScope);
  if (scope === null) return callerScope;
  try {
    assertScope(scope);
  } catch {
    return callerScope;
  }
  return (await view.mayAccess(scope, callerScope, request.extra)) ? scope : callerScope;
}

/** The values of a template variable that start with what the client typed (case-insensitive). */
export async function completeTemplate(
  view: CompletionView,
  request: CompletionRequest,
): Promise<CompleteResult> {
  const { template, argument } = request;
  const prefix = argument.value.toLowerCase();
  let candidates: string[] = [];
  if (argument.name === template.scopeVar) {
    // The caller's own scope, as the template writes it (its reference, unless the template is raw).
    candidates = [view.templates.scopeValue(template, request.callerScope)];
  } else if (argument.name === template.idVar || argument.name === template.pathVar) {
    const scope = await namedScope(view, request);
    const byId = argument.name === template.idVar;
    candidates = await view.fileValues(scope, (file) => (byId ? file.id : file.name));
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
