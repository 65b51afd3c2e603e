import type { McpServer, Server, ServerContext, Transport } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { toMcpRequestError } from "../errors.js";
import type {
  HostClientCapabilities,
  HostMethod,
  HostRequestContext,
  HostRequestHandler,
  HostTool,
  HostToolHandle,
  HostToolsRewrite,
  LowLevelServerLike,
  McpHost,
  McpServerLike,
} from "../host.js";
import { hasFunctions, SdkHost, type SdkMcpServer, toolConfig, withRawCapabilities } from "../host-kit.js";
import { canWatchToolCalls, watchToolCalls } from "../tool-call-schemas.js";
import type { CompleteParams, CompleteResult } from "../types.js";
import { PRIVATE_COMPLETE_METHOD, v1Schemas } from "../v1/schemas.js";
import { contextFromV2, isV2Context, type V2Context } from "./context.js";
import { isInputRequiredSignal, withElicitation } from "./elicitation.js";
import { rewriteToolsList } from "./tools-list.js";

/**
 * The SDK v2 adapter of the host port (`@modelcontextprotocol/server` 2.x, protocol 2026-07-28 and
 * the 2025 era on the same server). Type imports only: the package loads without the SDK.
 *
 * What differs from the v1 adapter (docs/sdk-v2.md lists it for users):
 * - Handlers are mounted by method name (`setRequestHandler("resources/read", …)`); v2 validates
 *   the params of spec methods itself.
 * - The context comes from `ctx.http` (auth, the web `Request`); see `context.ts`.
 * - A server is usually built per request (`createMcpHandler`'s factory) and closed after it, or
 *   built and closed without ever connecting (the factory also runs for `subscriptions/listen`). So
 *   `onClose` also fires when a server that never connected is closed, and nothing here outlives the
 *   server.
 * - On a 2026-07-28 request the cacheable results carry cache hints: `resources/list` is per
 *   principal (`cacheScope: "private"`, short `ttlMs`), `resources/templates/list` the same for
 *   everyone (`"public"`). 2025-era results are left as they are.
 * - Notifications: on the 2025 era (stdio, in-memory, a stateful or stateless 2025 HTTP exchange)
 *   they go out on the server's connection as on v1. A 2026-07-28 exchange behind
 *   `createMcpHandler` has no channel for them: they reach clients through `subscriptions/listen`
 *   streams fed by the handler's `notify` (the registry's `publishTo(handler)`), so the per-request
 *   server sends nothing itself. `serveStdio` routes a modern connection's own sends onto its listen
 *   stream, so there they go out as on v1.
 * - Completion: as on v1, requests for our templates are renamed on arrival to a private method
 *   (v2 dispatches custom methods by name), so an `McpServer`'s own completions keep working.
 */

/**
 * One cache hint of a 2026-07-28 cacheable result (SDK v2's `CacheHint`, written down structurally so
 * the package's declarations need no SDK).
 *
 * @example
 * ```ts
 * const hint: V2CacheHint = { cacheScope: "private", ttlMs: 5_000 };
 * ```
 */
export interface V2CacheHint {
  /** How long the result may be cached, in milliseconds. */
  ttlMs?: number;
  /** `"public"`: any cache may keep it; `"private"`: only the requesting client. */
  cacheScope?: "public" | "private";
}

/**
 * Cache hints for the 2026-07-28 cacheable results this adapter answers (`ttlMs`, `cacheScope`).
 *
 * @example
 * ```ts
 * const hints: V2CacheHints = { "resources/list": { ttlMs: 0 } }; // always re-list; still private
 * registry.attach(v2Host(server, { cacheHints: hints }));
 * ```
 */
export interface V2CacheHints {
  /**
   * `resources/list`: each principal has its own list, so it must never be shared between users.
   * @default { cacheScope: "private", ttlMs: 5000 }
   */
  "resources/list"?: V2CacheHint;
  /**
   * `resources/templates/list`: the same templates for everyone.
   * @default { cacheScope: "public", ttlMs: 3600000 }
   */
  "resources/templates/list"?: V2CacheHint;
}

const DEFAULT_CACHE_HINTS: Required<V2CacheHints> = {
  "resources/list": { cacheScope: "private", ttlMs: 5_000 },
  "resources/templates/list": { cacheScope: "public", ttlMs: 3_600_000 },
};

/** The first protocol revision of the stateless ("modern") era. */
const MODERN_ERA_FROM = "2026-07-28";

/**
 * Whether `value` looks like an SDK v2 low-level `Server`: the v1 members plus
 * `getNegotiatedProtocolVersion`, which SDK v1 does not have.
 */
export function isV2LowLevelServer(value: unknown): value is Server {
  return hasFunctions(value, [
    "setRequestHandler",
    "assertCanSetRequestHandler",
    "registerCapabilities",
    "sendResourceListChanged",
    "sendResourceUpdated",
    "getNegotiatedProtocolVersion",
    "connect",
    "close",
  ]);
}

/** Whether `value` looks like an SDK v2 `McpServer`. */
export function isV2McpServer(value: unknown): value is McpServer {
  return hasFunctions(value, ["registerTool", "connect"]) && isV2LowLevelServer((value as McpServer).server);
}

/** A 2026-07-28 exchange behind `createMcpHandler`: a per-request transport with no channel for notifications. */
function isPerRequestTransport(transport: Transport | undefined): boolean {
  return hasFunctions(transport, ["handleMessage", "writeCommentFrame"]);
}

/**
 * Options of {@link v2Host}.
 *
 * @example
 * ```ts
 * const options: V2HostOptions = { cacheHints: { "resources/templates/list": { ttlMs: 60_000 } } };
 * uploads.attach(v2Host(server, options));
 * ```
 */
export interface V2HostOptions {
  /** Cache hints for 2026-07-28 list results. @default see {@link V2CacheHints} */
  cacheHints?: V2CacheHints;
  /**
   * The key that seals the `requestState` of a 2026-07-28 `input_required` round
   * (`uploads.requestFiles`): the client echoes it back, and the retry may reach another replica, so
   * replicas behind one address need the same key (32 random bytes or more).
   * @default a random key per process
   */
  requestStateKey?: Uint8Array | string;
}

class V2Host extends SdkHost<ServerContext | V2Context> implements McpHost {
  readonly kind = "sdk-v2";
  readonly #low: Server;
  #mcp: McpServer | undefined;
  #cacheHints: Required<V2CacheHints> = DEFAULT_CACHE_HINTS;
  #stateKey: Uint8Array | string | undefined;
  // A server that never connected (createMcpHandler builds one for `subscriptions/listen` and
  // closes it unconnected) gets no `onclose` from the SDK: its close is reported too.
  protected override closeOptions = { unconnectedClose: true };

  constructor(low: Server) {
    super(low);
    this.#low = low;
  }

  protected get mcpServer(): SdkMcpServer | undefined {
    return this.#mcp as SdkMcpServer | undefined;
  }

  adopt(mcp: McpServer | undefined, options: V2HostOptions): void {
    this.#mcp ??= mcp;
    // withFiles sees the called tool's schema (x-mcp-file constraints) on any server a piece attaches to.
    if (mcp && canWatchToolCalls(mcp)) watchToolCalls(mcp);
    if (options.requestStateKey !== undefined) this.#stateKey = options.requestStateKey;
    if (options.cacheHints) {
      this.#cacheHints = {
        "resources/list": {
          ...DEFAULT_CACHE_HINTS["resources/list"],
          ...options.cacheHints["resources/list"],
        },
        "resources/templates/list": {
          ...DEFAULT_CACHE_HINTS["resources/templates/list"],
          ...options.cacheHints["resources/templates/list"],
        },
      };
    }
  }

  /** Whether the current connection speaks the 2026-07-28 (stateless) revision. */
  #modern(): boolean {
    const version = this.#low.getNegotiatedProtocolVersion();
    return version !== undefined && version >= MODERN_ERA_FROM;
  }

  /** The port's context of a v2 request, with capabilities and URL elicitation for either era. */
  protected context(ctx: ServerContext | V2Context): HostRequestContext {
    return withElicitation(contextFromV2(ctx), ctx, {
      modern: () => this.#modern(),
      initializeCapabilities: () =>
        withRawCapabilities(
          this.#low.getClientCapabilities() as HostClientCapabilities | undefined,
          this.initialize.capabilities,
        ),
      ...(this.#stateKey === undefined ? {} : { stateKey: this.#stateKey }),
    });
  }

  requestContext(extra: unknown): HostRequestContext {
    if (!isV2Context(extra)) {
      throw new FileBridgeError(
        "INVALID_INPUT",
        "requestContext() needs the SDK request context (the `ctx` a tool callback gets)",
      );
    }
    return this.context(extra);
  }

  protected mount<M extends HostMethod>(method: M, handler: HostRequestHandler<M>): void {
    this.#low.assertCanSetRequestHandler(method);
    const hint = (this.#cacheHints as Partial<Record<HostMethod, V2CacheHint>>)[method];
    if (method.startsWith("files/")) {
      // A custom method: SDK v2 dispatches it by name with a params schema of ours.
      this.#low.setRequestHandler(method, { params: v1Schemas().FilesParamsSchema }, (async (
        params: Record<string, unknown>,
        ctx: ServerContext,
      ) => {
        try {
          return await handler(params as never, this.context(ctx));
        } catch (error) {
          throw toMcpRequestError(error);
        }
      }) as never);
      return;
    }
    this.#low.setRequestHandler(
      method as never,
      (async (request: { params?: unknown }, ctx: ServerContext) => {
        let result: Record<string, unknown>;
        try {
          result = (await handler((request.params ?? {}) as never, this.context(ctx))) as never;
        } catch (error) {
          throw toMcpRequestError(error);
        }
        // Cache hints exist only on 2026-07-28; a handler's own fields win.
        if (hint === undefined || !this.#modern()) return result;
        return { ...hint, ...result };
      }) as never,
    );
  }

  rewriteListedTools(rewrite: HostToolsRewrite): void {
    rewriteToolsList(this.#low, rewrite, (ctx) => this.context(ctx as ServerContext));
  }

  registerTool(tool: HostTool): HostToolHandle {
    const mcp = this.#mcp;
    if (!mcp) throw new FileBridgeError("INVALID_INPUT", "registering a tool needs an McpServer");
    const wrap = (schema: HostTool["inputSchema"]) =>
      schema === undefined || schema instanceof z.ZodType ? schema : z.object(schema);
    const inputSchema = wrap(tool.inputSchema);
    const outputSchema = wrap(tool.outputSchema);
    const config = toolConfig(tool, inputSchema, outputSchema);
    // Without an input schema, SDK v2 (like v1) calls the callback with the context alone.
    // A handler that lets a 2026-07-28 `elicitUrl` signal escape still ends the round with it.
    const run = async (args: Record<string, unknown>, ctx: ServerContext) => {
      try {
        return await tool.handler(args, this.context(ctx));
      } catch (error) {
        if (isInputRequiredSignal(error)) return error.result;
        throw error;
      }
    };
    const callback =
      inputSchema === undefined
        ? (ctx: ServerContext) => run({}, ctx)
        : (args: Record<string, unknown>, ctx: ServerContext) => run(args, ctx);
    return mcp.registerTool(tool.name, config as never, callback as never);
  }

  async notifyResourceListChanged(): Promise<void> {
    if (isPerRequestTransport(this.#low.transport)) return;
    await this.#low.sendResourceListChanged();
  }

  async notifyResourceUpdated(uri: string): Promise<void> {
    if (isPerRequestTransport(this.#low.transport)) return;
    // On 2026-07-28 connections (serveStdio) the SDK routes it onto the listen stream that named the URI.
    await this.#low.sendResourceUpdated({ uri });
  }

  protected mountCompletion(
    answer: (params: CompleteParams, ctx: ServerContext) => Promise<CompleteResult>,
  ): void {
    this.#low.setRequestHandler(
      PRIVATE_COMPLETE_METHOD,
      { params: v1Schemas().PrivateCompleteRequestSchema.shape.params },
      (async (params: CompleteParams, ctx: ServerContext) => answer(params, ctx)) as never,
    );
  }
}

const hosts = new WeakMap<object, V2Host>();

/**
 * The SDK v2 host of a server (`@modelcontextprotocol/server` 2.x): one per low-level `Server`,
 * shared by an `McpServer` and its `server`. `toHost()` picks it by itself; call it directly only to
 * pass options.
 *
 * @example
 * ```ts
 * import { McpServer } from "@modelcontextprotocol/server";
 * const server = new McpServer({ name: "files", version: "1.0.0" });
 * registry.attach(v2Host(server, { cacheHints: { "resources/list": { ttlMs: 0 } } }));
 * ```
 */
export function v2Host(server: McpServerLike | LowLevelServerLike, options: V2HostOptions = {}): McpHost {
  const mcp = isV2McpServer(server) ? server : undefined;
  const low = mcp ? mcp.server : (server as unknown as Server);
  if (!isV2LowLevelServer(low)) {
    throw new FileBridgeError("INVALID_INPUT", "v2Host() needs an SDK v2 McpServer or Server");
  }
  let host = hosts.get(low);
  if (!host) {
    host = new V2Host(low);
    hosts.set(low, host);
  }
  host.adopt(mcp, options);
  return host;
}
