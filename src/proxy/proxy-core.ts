/**
 * The proxy core: routes downstream MCP requests to one or more upstreams (tools and prompts by name,
 * with optional prefixes; resources by URI), runs the tool adapters around marked tools, merges the
 * listings, and fans upstream notifications out to the connected downstream sessions. SDK-free: it
 * speaks plain JSON through {@link UpstreamPort}s; `src/proxy/sdk/downstream/` puts it behind an MCP server.
 */
import { isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import { defaultScope, type ScopeFunction } from "../scope/scope.js";
import { decodeCursor, encodeCursor } from "./merged-cursor.js";
import {
  callLocalTool,
  callRoute,
  proxyToolError,
  type RouteCallOptions,
  type ToolRoute,
} from "./tool-call.js";
import {
  type DownstreamSink,
  type JsonObject,
  type LocalResources,
  type LocalTool,
  type MountedUpstream,
  type RequestContext,
  RPC,
  RpcError,
  type UpstreamPort,
  UpstreamUnavailableError,
} from "./types.js";

/** Options of {@link ProxyCore}. */
export interface ProxyCoreOptions {
  upstreams: MountedUpstream[];
  localTools?: LocalTool[];
  localResources?: LocalResources;
  /** Scope of a request. @default defaultScope */
  scope?: ScopeFunction;
  /** Timeout of one upstream tool call (reset by progress), in milliseconds. @default 600000 */
  callTimeoutMs?: number;
  /** Log lines (what happened). */
  log?: (line: string) => void;
}

/**
 * Routes MCP requests between downstream sessions and upstream servers.
 *
 * @example
 * ```ts
 * const core = new ProxyCore({ upstreams: [{ port: upstream, prefix: "fs_" }] });
 * const { tools } = await core.listTools(ctx);
 * ```
 */
export class ProxyCore {
  readonly upstreams: MountedUpstream[];
  #options: ProxyCoreOptions;
  #routes: Promise<Map<string, ToolRoute>> | undefined;
  /** What every routed call is given (the timeout, the log): made once. */
  #routeCall: RouteCallOptions | undefined;
  /** The routes {@link #routes} resolved to, once complete: read while `of` is still the current listing. */
  #routesBuilt:
    | { of: Promise<Map<string, ToolRoute>> | undefined; routes: Map<string, ToolRoute> }
    | undefined;
  #uriOwners = new Map<string, MountedUpstream>();
  #sinks = new Set<DownstreamSink>();
  #inFlight = 0;
  #drained: Array<() => void> = [];
  #closing = false;

  constructor(options: ProxyCoreOptions) {
    this.#options = options;
    this.upstreams = options.upstreams;
  }

  #log(line: string): void {
    this.#options.log?.(line);
  }

  /** Adds a downstream session; returns its removal. */
  addSink(sink: DownstreamSink): () => void {
    this.#sinks.add(sink);
    return () => this.#sinks.delete(sink);
  }

  /**
   * Sends a notification to every downstream session, or only to the sessions of one scope. Listener
   * feeds hear the unscoped ones; the proxy's own file changes reach them through
   * {@link ProxyCore.notifyListeners} instead.
   */
  broadcast(method: string, params?: JsonObject, scope?: string): void {
    for (const sink of this.#sinks) {
      if (scope !== undefined && (sink.listener || sink.scope !== scope)) continue;
      try {
        sink.notify(method, params);
      } catch {
        // a closed session
      }
    }
  }

  /**
   * Sends a notification to the listener feeds only (2026-07-28 `subscriptions/listen`): a change of
   * the proxy's own files, which carries no user's content (a list change, or an update that only
   * streams naming the URI receive).
   */
  notifyListeners(method: string, params?: JsonObject): void {
    for (const sink of this.#sinks) {
      if (!sink.listener) continue;
      try {
        sink.notify(method, params);
      } catch {
        // a closed feed
      }
    }
  }

  /** Forgets what the proxy holds for a scope that has no session any more (an anonymous session's). */
  releaseScope(scope: string): void {
    this.#options.localResources?.release?.(scope);
  }

  /** Handles a notification an upstream sent. */
  onUpstreamNotification(upstream: UpstreamPort, method: string, params: JsonObject | undefined): void {
    switch (method) {
      case "notifications/tools/list_changed":
        this.#routes = undefined;
        this.#log(`upstream ${upstream.name}: tools changed`);
        this.broadcast(method, params);
        break;
      case "notifications/prompts/list_changed":
      case "notifications/resources/list_changed":
      case "notifications/resources/updated":
      case "notifications/message":
        this.broadcast(method, params);
        break;
      default:
        break;
    }
  }

  scopeOf(ctx: RequestContext): string {
    return (this.#options.scope ?? defaultScope)(ctx.extra);
  }

  /**
   * The caller's scope, or `undefined` when the request carries none (a stateless request without
   * a verified identity). Lists then leave out the proxy's own files instead of failing: the
   * upstreams' parts need no scope.
   */
  #scopeIfAny(ctx: RequestContext): string | undefined {
    try {
      return this.scopeOf(ctx);
    } catch (error) {
      if (isFileBridgeError(error) && error.code === "FORBIDDEN") return undefined;
      throw error;
    }
  }

  // ---------------------------------------------------------------- tools

  /** Every page of an upstream listing. */
  async #listAll(
    upstream: UpstreamPort,
    method: string,
    key: string,
    signal?: AbortSignal,
  ): Promise<JsonObject[]> {
    const items: JsonObject[] = [];
    let cursor: unknown;
    for (let page = 0; page < 1000; page++) {
      const result = await upstream.request(
        method,
        cursor === undefined ? {} : { cursor },
        signal ? { signal } : {},
      );
      const list = result[key];
      if (Array.isArray(list)) items.push(...(list as JsonObject[]));
      cursor = result.nextCursor;
      if (typeof cursor !== "string") break;
    }
    return items;
  }

  /** The upstream's tools, as its `tools/list` answers (all pages). */
  async upstreamTools(upstream: MountedUpstream): Promise<JsonObject[]> {
    return await this.#listAll(upstream.port, "tools/list", "tools");
  }

  #buildRoutes(): Promise<Map<string, ToolRoute>> {
    if (this.#routes) return this.#routes;
    let building: Promise<Map<string, ToolRoute>> | undefined;
    building = (async () => {
      const routes = new Map<string, ToolRoute>();
      let complete = true;
      for (const upstream of this.upstreams) {
        let tools: JsonObject[];
        try {
          tools = await this.upstreamTools(upstream);
        } catch (error) {
          complete = false;
          this.#log(`upstream ${upstream.port.name}: cannot list tools: ${(error as Error).message}`);
          continue;
        }
        for (const tool of tools) {
          const upstreamName = String(tool.name);
          const adapters = upstream.adaptersFor?.(tool) ?? [];
          let definition: JsonObject = { ...tool, name: `${upstream.prefix ?? ""}${upstreamName}` };
          for (const adapter of adapters) {
            if (adapter.describe) definition = adapter.describe(structuredClone(definition));
          }
          routes.set(String(definition.name), { upstream, upstreamName, definition, adapters });
        }
      }
      // A listing that failed for an upstream is tried again on the next request.
      if (!complete && this.#routes === building) this.#routes = undefined;
      // Only the current listing is kept: one dropped while it was built must not displace a newer one
      // (`building` is unset only when there was nothing to await: no upstream, no route).
      else if (complete && building !== undefined && this.#routes === building)
        this.#routesBuilt = { of: building, routes };
      return routes;
    })();
    this.#routes = building;
    return building;
  }

  /**
   * The routes of the current listing when it is complete and already resolved, else `undefined`:
   * the pass-through path reads them without an `await` (issue 43). A listing dropped or rebuilt
   * (`tools/list_changed`, a failed upstream) is never read here: `of` no longer matches.
   */
  #routesNow(): Map<string, ToolRoute> | undefined {
    const built = this.#routesBuilt;
    return built !== undefined && built.of === this.#routes ? built.routes : undefined;
  }

  async listTools(_ctx: RequestContext): Promise<JsonObject> {
    const routes = await this.#buildRoutes();
    const tools = [...routes.values()].map((route) => route.definition);
    for (const local of this.#options.localTools ?? []) tools.push(local.definition);
    return { tools };
  }

  /** The upstream a name belongs to (by prefix), for names not in the listing. */
  #byPrefix(name: string): { upstream: MountedUpstream; rest: string } | undefined {
    const candidates = this.upstreams
      .filter((u) => name.startsWith(u.prefix ?? ""))
      .sort((a, b) => (b.prefix ?? "").length - (a.prefix ?? "").length);
    const upstream = candidates[0];
    return upstream ? { upstream, rest: name.slice((upstream.prefix ?? "").length) } : undefined;
  }

  async callTool(params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    if (this.#closing)
      return proxyToolError("UPSTREAM_UNAVAILABLE", "the proxy is shutting down; try again later.");
    this.#inFlight++;
    // One async layer, not two (issue 43: the pass-through path's promises).
    try {
      const name = String(params.name);
      // Asked for only when the call handles files: a pass-through tool needs no scope.
      let scope: string | undefined;
      const scopeOf = (): string => {
        scope ??= this.scopeOf(ctx);
        return scope;
      };
      const local = this.#options.localTools?.find((tool) => tool.definition.name === name);
      if (local) return await callLocalTool(local, params, ctx, scopeOf);
      const route = this.#routesNow()?.get(name) ?? (await this.#routeOf(name));
      // A tool that handles files needs the caller's scope: ask before the upstream does any work.
      if (route.adapters.length > 0) {
        try {
          scopeOf();
        } catch (error) {
          return toToolErrorResult(error);
        }
      }
      this.#routeCall ??= {
        timeoutMs: this.#options.callTimeoutMs ?? 600_000,
        log: (line) => this.#log(line),
      };
      return await callRoute(route, params, ctx, scopeOf, this.#routeCall);
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  /**
   * Whether `name` is a pure pass-through: an upstream tool from the listing that no adapter handles
   * (no file parameters, no artifact rules), not one of the proxy's own. The endpoints' fast paths
   * take only those; the call still runs through {@link ProxyCore.callTool}.
   */
  async isPassThrough(name: string): Promise<boolean> {
    const known = this.passThroughNow(name);
    if (known !== undefined) return known;
    if (this.#options.localTools?.some((tool) => tool.definition.name === name)) return false;
    const route = (await this.#buildRoutes().catch(() => undefined))?.get(name);
    return route !== undefined && route.adapters.length === 0;
  }

  /**
   * {@link ProxyCore.isPassThrough} without a promise when the listing is already built: `true` or
   * `false` as it would resolve, `undefined` when only the asynchronous check can tell (the listing
   * is being built, or was dropped).
   */
  passThroughNow(name: string): boolean | undefined {
    if (this.#options.localTools?.some((tool) => tool.definition.name === name)) return false;
    const routes = this.#routesNow();
    if (routes === undefined) return undefined;
    const route = routes.get(name);
    return route !== undefined && route.adapters.length === 0;
  }

  /**
   * The route of a downstream tool name: from the listing, else (a name the listing does not have)
   * the upstream its prefix names, which answers with its own "unknown tool" error.
   */
  async #routeOf(name: string): Promise<ToolRoute> {
    let routes: Map<string, ToolRoute>;
    try {
      routes = await this.#buildRoutes();
    } catch {
      routes = new Map();
    }
    const route = routes.get(name);
    if (route) return route;
    const owner = this.#byPrefix(name);
    if (!owner) throw new RpcError(RPC.INVALID_PARAMS, `Tool ${name} not found`);
    return { upstream: owner.upstream, upstreamName: owner.rest, definition: {}, adapters: [] };
  }

  // ---------------------------------------------------------------- prompts

  #with(capability: string): MountedUpstream[] {
    return this.upstreams.filter((u) => u.port.capabilities?.[capability] !== undefined);
  }

  async #connectAll(): Promise<void> {
    await Promise.allSettled(this.upstreams.map((u) => u.port.connect()));
  }

  async listPrompts(): Promise<JsonObject> {
    await this.#connectAll();
    const prompts: JsonObject[] = [];
    for (const upstream of this.#with("prompts")) {
      const list = await this.#listAll(upstream.port, "prompts/list", "prompts").catch(() => []);
      for (const prompt of list)
        prompts.push({ ...prompt, name: `${upstream.prefix ?? ""}${String(prompt.name)}` });
    }
    return { prompts };
  }

  async getPrompt(params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    const owner = this.#byPrefix(String(params.name));
    if (!owner) throw new RpcError(RPC.INVALID_PARAMS, `Prompt ${String(params.name)} not found`);
    return await this.#forward(owner.upstream, "prompts/get", { ...params, name: owner.rest }, ctx);
  }

  async #forward(
    upstream: MountedUpstream,
    method: string,
    params: JsonObject,
    ctx: RequestContext,
  ): Promise<JsonObject> {
    try {
      return await upstream.port.request(method, params, { signal: ctx.signal });
    } catch (error) {
      if (error instanceof UpstreamUnavailableError) throw new RpcError(RPC.INTERNAL_ERROR, error.message);
      throw error;
    }
  }

  // ---------------------------------------------------------------- resources

  /**
   * Upstreams' resources (in mount order), then the proxy's own; sources are merged into one page
   * until one of them has more, whose cursor (with the source's index) goes into `nextCursor`.
   */
  async listResources(params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    await this.#connectAll();
    const sources = this.#with("resources");
    const local = this.#options.localResources;
    const decoded = decodeCursor(params.cursor);
    let cursor = decoded.c;
    const resources: JsonObject[] = [];
    for (let i = decoded.i; i <= sources.length; i++, cursor = undefined) {
      let page: JsonObject;
      if (i === sources.length) {
        const scope = local ? this.#scopeIfAny(ctx) : undefined;
        if (!local || scope === undefined) break;
        page = await local.list(scope, cursor, ctx.extra);
      } else {
        const upstream = sources[i] as MountedUpstream;
        try {
          page = await upstream.port.request("resources/list", cursor === undefined ? {} : { cursor }, {
            signal: ctx.signal,
          });
        } catch (error) {
          this.#log(`resources/list on ${upstream.port.name}: ${(error as Error).message}`);
          continue;
        }
        for (const resource of (page.resources as JsonObject[] | undefined) ?? []) {
          if (typeof resource.uri === "string") this.#uriOwners.set(resource.uri, upstream);
        }
      }
      resources.push(...((page.resources as JsonObject[] | undefined) ?? []));
      if (typeof page.nextCursor === "string")
        return { resources, nextCursor: encodeCursor(i, page.nextCursor) };
    }
    return { resources };
  }

  async listResourceTemplates(ctx: RequestContext): Promise<JsonObject> {
    await this.#connectAll();
    const resourceTemplates: JsonObject[] = [];
    for (const upstream of this.#with("resources")) {
      const list = await this.#listAll(upstream.port, "resources/templates/list", "resourceTemplates").catch(
        () => [],
      );
      resourceTemplates.push(...list);
    }
    const scope = this.#options.localResources ? this.#scopeIfAny(ctx) : undefined;
    if (this.#options.localResources && scope !== undefined) {
      resourceTemplates.push(...(await this.#options.localResources.templates(scope, ctx.extra)));
    }
    return { resourceTemplates };
  }

  /** Tries the upstream that listed the URI, then every upstream with resources, in order. */
  async #routeUri(uri: string, method: string, params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    await this.#connectAll();
    const owner = this.#uriOwners.get(uri);
    const candidates = owner ? [owner] : this.#with("resources");
    let first: unknown;
    for (const upstream of candidates) {
      try {
        return await this.#forward(upstream, method, params, ctx);
      } catch (error) {
        first ??= error;
      }
    }
    throw first ?? new RpcError(RPC.RESOURCE_NOT_FOUND, `Resource ${uri} not found`, { uri });
  }

  async readResource(params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    const uri = String(params.uri);
    const local = this.#options.localResources;
    if (local?.owns(uri)) {
      try {
        return await local.read(this.scopeOf(ctx), uri, ctx.extra);
      } catch (error) {
        // An upstream may serve URIs of the same shape (e.g. its own artifact://…).
        if (this.#with("resources").length === 0) throw error;
        return await this.#routeUri(uri, "resources/read", params, ctx).catch(() => {
          throw error;
        });
      }
    }
    return await this.#routeUri(uri, "resources/read", params, ctx);
  }

  async subscribe(params: JsonObject, ctx: RequestContext, unsubscribe = false): Promise<JsonObject> {
    const uri = String(params.uri);
    const local = this.#options.localResources;
    if (local?.owns(uri)) {
      await (unsubscribe ? local.unsubscribe : local.subscribe)?.call(
        local,
        this.scopeOf(ctx),
        uri,
        ctx.extra,
      );
      return {};
    }
    return await this.#routeUri(
      uri,
      unsubscribe ? "resources/unsubscribe" : "resources/subscribe",
      params,
      ctx,
    );
  }

  // ---------------------------------------------------------------- completion, logging

  async complete(params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    const ref = params.ref as JsonObject | undefined;
    const empty = { completion: { values: [], hasMore: false } };
    if (ref?.type === "ref/prompt") {
      const owner = this.#byPrefix(String(ref.name));
      if (!owner || owner.upstream.port.capabilities?.completions === undefined) return empty;
      return await this.#forward(
        owner.upstream,
        "completion/complete",
        { ...params, ref: { ...ref, name: owner.rest } },
        ctx,
      );
    }
    for (const upstream of this.#with("completions")) {
      try {
        return await this.#forward(upstream, "completion/complete", params, ctx);
      } catch {
        // try the next
      }
    }
    return empty;
  }

  /** Forwards a client's level to upstreams that declare logging; nothing of ours logs through MCP. */
  async setLoggingLevel(params: JsonObject, ctx: RequestContext): Promise<JsonObject> {
    await Promise.allSettled(
      // pass-through: the upstream's own capability, forwarded unchanged
      this.#with("logging").map((u) => this.#forward(u, "logging/setLevel", params, ctx)),
    );
    return {};
  }

  // ---------------------------------------------------------------- lifecycle

  /** Calls in flight. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Stops taking new tool calls and waits until those in flight finished (or `timeoutMs` passed). */
  async drain(timeoutMs = 30_000): Promise<void> {
    this.#closing = true;
    if (this.#inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref?.();
      this.#drained.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    await Promise.allSettled(this.upstreams.map((u) => u.port.close()));
  }
}
