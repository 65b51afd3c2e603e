import { FileBridgeError } from "../errors/file-bridge-error.js";
import { baseName } from "../internal/file-name.js";
import type { CompleteResult, ListResourcesResult, McpResource } from "../mcp/types.js";
import { assertScope, type ScopeSource } from "../scope/scope.js";
import type { StoredFile } from "../storage/types.js";
import type { RegistrySettings } from "./check-options.js";
import { decodeListCursor, encodeListCursor } from "./cursor.js";
import type { IndexPage } from "./scope-index.js";
import type { ParsedUri, Template, TemplateSet } from "./templates.js";

/**
 * The work of the `resources/list` handler and of template completion (handlers.ts mounts them):
 * list pages with opaque cursors, and the values of a template's variables. Loaded on first use
 * with registry-work.ts.
 */

const MAX_COMPLETION_VALUES = 100;

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
