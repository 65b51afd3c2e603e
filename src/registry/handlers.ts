import { toMcpRequestError } from "../mcp/errors.js";
import type { HostMethods, McpHost } from "../mcp/host.js";
import type { CompleteParams, CompleteResult } from "../mcp/types.js";
import type { ScopeSource } from "../scope/scope.js";
import type { Attachment } from "./notifier.js";
import type { Template, TemplateSet } from "./templates.js";

/**
 * The registry's MCP side: the `resources/*` handlers and the completion provider it mounts on a
 * host (`ResourceRegistry.attach`). Mounting is synchronous, so a server connected right after
 * sees them; what the handlers do (the caller's scope, list pages, templates, reads, lookups,
 * subscriptions, completion values) is the registry's work, loaded on the first request
 * (registry-work.ts, handler-work.ts).
 */

/** An MCP request's `extra`, as scope functions see it. */
export type RequestExtra = ScopeSource & { signal?: AbortSignal };

/** A `resources/*` method the registry answers. */
export type ResourceMethod = (typeof RESOURCE_METHODS)[number];

/** What the handlers run of the registry's work (registry-work.ts). */
export interface RequestWork {
  /** Answers `method` for a caller of `attachment` (whose scopes learn the caller's). */
  answer<M extends ResourceMethod>(
    method: M,
    params: HostMethods[M]["params"],
    extra: RequestExtra,
    attachment: Attachment,
  ): Promise<HostMethods[M]["result"]>;
  /** Completes a variable of `template` for the caller. */
  completeFor(template: Template, params: CompleteParams, extra: RequestExtra): Promise<CompleteResult>;
}

/** What the handlers use of the registry. */
export interface RegistryView {
  readonly templates: TemplateSet;
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

/** Mounts the `resources/*` handlers and the completion provider of one attachment. */
export function mountResourceHandlers(host: McpHost, attachment: Attachment, view: RegistryView): void {
  for (const method of RESOURCE_METHODS) {
    host.handle(method, async (params, { extra }) => {
      try {
        return await (await view.work()).answer(method, params as never, extra, attachment);
      } catch (error) {
        const uri = (params as { uri?: unknown }).uri;
        throw toMcpRequestError(error, typeof uri === "string" ? { uri } : {});
      }
    });
  }
  // Completion of our templates' variables; prompts and other references stay with the server.
  host.addCompletion({
    handles: (ref) => ref.type === "ref/resource" && view.templates.bySource(ref.uri) !== undefined,
    complete: async (params, { extra }) => {
      const { ref } = params;
      const template = view.templates.bySource(ref.type === "ref/resource" ? ref.uri : "");
      if (!template) return { completion: { values: [], hasMore: false } };
      try {
        return await (await view.work()).completeFor(template, params, extra);
      } catch (error) {
        throw toMcpRequestError(error);
      }
    },
  });
}
