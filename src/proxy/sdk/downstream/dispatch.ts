/**
 * What the downstream server of either SDK generation answers, and how: one table from MCP method to
 * the SDK-free {@link ProxyCore}. The v1 and v2 servers only differ in how they mount a handler and
 * build the request context.
 */

import { requestClientCapabilities } from "../../../mcp/client-files.js";
import { toMcpRequestError } from "../../../mcp/errors.js";
import { toolsForClient } from "../../../uploads/listed-marks.js";
import type { ProxyCore } from "../../proxy-core.js";
import type { DownstreamSink, JsonObject, RequestContext } from "../../types.js";

/** Options of a downstream proxy server (either generation). */
export interface ProxyServerOptions {
  name: string;
  version: string;
  instructions?: string;
  /** Which optional capabilities to announce (from the upstreams'). */
  prompts?: boolean;
  /**
   * Relay the upstreams' log messages (and their level requests) to this server's client. An upstream's
   * log is about every caller's calls, so a server with several users must not relay it.
   */
  logging?: boolean;
  completions?: boolean;
  /**
   * Some tool takes uploads: on 2026-07-28 (one server per request) the server announces the files
   * extension entry the revision Claude Code ships probes (`upload: {}`, no `revision`), and its
   * upload consumers answer file descriptors with `upload_required`. 2025-era connections (where the
   * draft's and the Codex variant's `files/*` methods would be looked for) announce nothing.
   */
  uploads?: boolean;
}

/** The capabilities a downstream proxy server announces. */
export function proxyCapabilities(options: ProxyServerOptions): Record<string, object> {
  return {
    tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    ...(options.prompts ? { prompts: { listChanged: true } } : {}),
    ...(options.logging ? { logging: {} } : {}),
    ...(options.completions ? { completions: {} } : {}),
  };
}

/** One method's handler over the core. */
export type Route = (core: ProxyCore, params: JsonObject, ctx: RequestContext) => Promise<JsonObject>;

/** The methods a downstream proxy server answers, given its options. */
export function proxyRoutes(options: ProxyServerOptions): Array<[method: string, route: Route]> {
  const routes: Array<[string, Route]> = [
    // A client of the revision Claude Code ships is shown the upload consumers' marks on the
    // descriptor object only (it leaves a tool with any other mark unfilled); others as listed.
    [
      "tools/list",
      async (core, _params, ctx) => {
        const listed = await core.listTools(ctx);
        const tools = Array.isArray(listed.tools) ? (listed.tools as JsonObject[]) : [];
        return { ...listed, tools: toolsForClient(tools, requestClientCapabilities(ctx.extra)) };
      },
    ],
    ["tools/call", (core, params, ctx) => core.callTool(params, ctx)],
    ["resources/list", (core, params, ctx) => core.listResources(params, ctx)],
    ["resources/templates/list", (core, _params, ctx) => core.listResourceTemplates(ctx)],
    ["resources/read", (core, params, ctx) => core.readResource(params, ctx)],
    ["resources/subscribe", (core, params, ctx) => core.subscribe(params, ctx)],
    ["resources/unsubscribe", (core, params, ctx) => core.subscribe(params, ctx, true)],
  ];
  if (options.prompts) {
    routes.push(
      ["prompts/list", (core) => core.listPrompts()],
      ["prompts/get", (core, params, ctx) => core.getPrompt(params, ctx)],
    );
  }
  if (options.completions)
    routes.push(["completion/complete", (core, params, ctx) => core.complete(params, ctx)]);
  if (options.logging) {
    // pass-through: only when an upstream offers logging itself, its level is forwarded to it
    routes.push(["logging/setLevel", (core, params, ctx) => core.setLoggingLevel(params, ctx)]);
  }
  return routes;
}

/** The progress token of a request, when the caller asked for progress. */
export function progressTokenOf(params: JsonObject | undefined): string | number | undefined {
  const token = (params?._meta as JsonObject | undefined)?.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

/** A server of either SDK generation, as far as its connection's notifications go. */
interface NotifyingServer {
  readonly transport?: unknown;
  notification(notification: { method: string; params?: JsonObject }): Promise<void>;
  onclose?: (() => void) | undefined;
}

/** Connection servers whose sink knows the connection's scope (see {@link scopeLearned}). */
const learned = new WeakSet<object>();

/**
 * Whether the connection of `server` (made with {@link connectionSink}) learned its scope from a
 * request already: only then may a call skip the server's handlers (the v1 endpoint's fast path),
 * since the first request must teach the sink its scope.
 */
export function scopeLearned(server: object | undefined): boolean {
  return server !== undefined && learned.has(server);
}

/**
 * The sink of one connection's server (stdio, a 2025 session): the core's notifications go out on
 * the connection, log messages only when the server relays logs. The connection's scope is learned
 * from its first request; when that scope is the session itself (an anonymous session), the core
 * releases it when the connection closes, so nothing of a session outlives it.
 */
export function connectionSink(
  core: ProxyCore,
  server: NotifyingServer,
  options: ProxyServerOptions,
): { sink: DownstreamSink; learnScope(ctx: RequestContext): void } {
  let sessionScoped = false;
  const sink: DownstreamSink = {
    notify(method, params) {
      if (!server.transport) return;
      if (method === "notifications/message" && !options.logging) return;
      void server.notification(params === undefined ? { method } : { method, params }).catch(() => undefined);
    },
  };
  const remove = core.addSink(sink);
  const previous = server.onclose;
  server.onclose = () => {
    remove();
    if (sessionScoped && sink.scope !== undefined) core.releaseScope(sink.scope);
    previous?.();
  };
  return {
    sink,
    learnScope(ctx) {
      if (sink.scope !== undefined) return;
      try {
        sink.scope = core.scopeOf(ctx);
        sessionScoped = sink.scope === ctx.extra.sessionId;
        learned.add(server);
      } catch {
        // no scope (yet): scoped notifications skip this connection
      }
    },
  };
}

/**
 * Runs one route: what it throws becomes the JSON-RPC error both SDK generations answer with the same
 * code, and the result waits for the request's progress updates, which it must not overtake.
 */
export async function answer(
  core: ProxyCore,
  route: Route,
  params: JsonObject,
  ctx: RequestContext,
  relay: { flushed(): Promise<void> },
): Promise<JsonObject> {
  let result: JsonObject;
  try {
    result = await route(core, params, ctx);
  } catch (error) {
    throw toMcpRequestError(error);
  }
  await relay.flushed();
  return result;
}
