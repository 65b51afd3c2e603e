import { toMcpRequestError } from "../mcp/errors.js";
import type { McpHost } from "../mcp/host.js";
import type { CompleteResult, ListResourcesResult, ReadResourceResult } from "../mcp/types.js";
import type { ScopeSource } from "../scope/scope.js";
import type { StoredFile } from "../storage/types.js";
import type { CompletionRequest } from "./handler-work.js";
import type { Attachment } from "./notifier.js";
import type { TemplateSet } from "./templates.js";

/**
 * The registry's MCP side: the `resources/*` handlers and the completion provider it mounts on a
 * host (`ResourceRegistry.attach`). Mounting is synchronous; what the handlers do past the caller's
 * scope and the templates (list pages, reads, lookups, completion values) is the registry's work,
 * loaded on the first request (registry-work.ts, handler-work.ts).
 */

/** An MCP request's `extra`, as scope functions see it. */
export type RequestExtra = ScopeSource & { signal?: AbortSignal };

/** What the handlers run of the registry's work (registry-work.ts). */
export interface RequestWork {
  /** A `resources/list` page of `scope` (`INVALID_CURSOR` for a cursor it did not make). */
  list(scope: string, cursor: string | undefined): Promise<ListResourcesResult>;
  read(uri: string, extra: RequestExtra): Promise<ReadResourceResult>;
  resolveUri(uri: string, callerScope: string, extra?: ScopeSource): Promise<StoredFile>;
  complete(request: CompletionRequest): Promise<CompleteResult>;
}

/** What the handlers use of the registry. */
export interface RegistryView {
  readonly templates: TemplateSet;
  callerScope(extra: RequestExtra): Promise<string>;
  /** The registry's work, loaded on first use. */
  work(): Promise<RequestWork>;
}

export const RESOURCE_METHODS = [
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
] as const;
const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

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
      return await (await view.work()).list(scope, params.cursor);
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
      return await (await view.work()).read(uri, extra);
    } catch (error) {
      throw toMcpRequestError(error, { uri });
    }
  });
  host.handle("resources/subscribe", async ({ uri }, { extra }) => {
    try {
      const callerScope = await scoped(extra);
      const file = await (await view.work()).resolveUri(uri, callerScope, extra);
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
      const scope = parsed ? view.templates.scopeFor(parsed, callerScope) : null;
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
      const template = view.templates.bySource(ref.type === "ref/resource" ? ref.uri : "");
      if (!template) return EMPTY_COMPLETION;
      try {
        const callerScope = await view.callerScope(extra);
        const work = await view.work();
        return await work.complete({ template, callerScope, argument, context: context?.arguments, extra });
      } catch (error) {
        throw toMcpRequestError(error);
      }
    },
  });
}
