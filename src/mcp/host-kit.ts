/**
 * What the SDK v1 and v2 adapters of the host port do the same way, written once: completion of
 * our templates next to a server's own completions, close listeners, and a tool's config. No SDK
 * import: both generations' low-level `Server`s are used structurally (same member names).
 */
import { toMcpRequestError } from "./errors.js";
import { FixedResources } from "./fixed-resources.js";
import {
  type HostCapabilities,
  type HostCompletionProvider,
  type HostMethod,
  type HostRequestContext,
  type HostRequestHandler,
  type HostResource,
  type HostResourceHandle,
  type HostTool,
  MCP_HOST,
} from "./host.js";
import { loadHostWork } from "./load-host-work.js";
import type { CompleteParams, CompleteResult, CompletionReference } from "./types.js";
import { PRIVATE_COMPLETE_METHOD, v1Schemas } from "./v1/schemas.js";

const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

/** Whether `value` is an object with a function under each of `names` (how SDK objects are recognized). */
export function hasFunctions(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return names.every((name) => typeof record[name] === "function");
}

/** A transport, as far as routing incoming messages goes. */
interface RoutableTransport {
  onmessage?: ((message: never, extra?: never) => void) | undefined;
}

/** A low-level `Server` of either generation, as far as completion routing goes. */
export interface RoutableServer {
  fallbackRequestHandler?: ((request: never, extra: never) => Promise<unknown>) | undefined;
  connect(transport: never): Promise<void>;
  readonly transport?: unknown;
}

/** The reference of a `completion/complete` request, when `message` is one. */
function completionReference(message: unknown): CompletionReference | undefined {
  const request = message as { method?: unknown; id?: unknown; params?: { ref?: unknown } } | null;
  if (request?.method !== "completion/complete" || request.id === undefined) return undefined;
  const parsed = v1Schemas().CompletionReferenceSchema.safeParse(request.params?.ref);
  return parsed.success ? (parsed.data as CompletionReference) : undefined;
}

/**
 * Our completion providers on one server. The requests they claim are renamed on arrival to a private
 * method (SDKs dispatch by method name), so the server's own `completion/complete` (an `McpServer`'s
 * prompt completions) keeps working for the rest; until the server mounts one, unclaimed references
 * get what an `McpServer` answers.
 */
export class CompletionRouter {
  readonly #providers: HostCompletionProvider[] = [];

  /** Adds a provider; `true` the first time (the caller then mounts the private method and `install`s). */
  add(provider: HostCompletionProvider): boolean {
    this.#providers.push(provider);
    return this.#providers.length === 1;
  }

  /** Answers a claimed request (the private method's handler). */
  async complete(params: CompleteParams, ctx: HostRequestContext): Promise<CompleteResult> {
    const provider = this.#providers.find((each) => each.handles(params.ref));
    if (!provider) return EMPTY_COMPLETION;
    try {
      return await provider.complete(params, ctx);
    } catch (error) {
      throw toMcpRequestError(error);
    }
  }

  /**
   * Routes claimed requests on every connection of `low` (now and later), and answers unclaimed ones
   * while `answersUnclaimed` (nothing else handles `completion/complete` yet).
   */
  install(low: RoutableServer, options: { answersUnclaimed: boolean; mcpServer: boolean }): void {
    if (options.answersUnclaimed) this.#answerUnclaimed(low, options.mcpServer);
    const connect = low.connect;
    low.connect = async (transport: never) => {
      await connect.call(low, transport);
      this.#route(transport as RoutableTransport);
    };
    if (low.transport) this.#route(low.transport as RoutableTransport);
  }

  #answerUnclaimed(low: RoutableServer, mcpServer: boolean): void {
    const previous = low.fallbackRequestHandler;
    // What it answers (an empty completion; an McpServer's own error for a template) is loaded on first use.
    low.fallbackRequestHandler = (async (request: { method: string; params?: unknown }, extra: never) =>
      (await loadHostWork()).answerUnclaimed(request, extra, mcpServer, previous)) as never;
  }

  #route(transport: RoutableTransport): void {
    const inner = transport.onmessage;
    if (!inner) return;
    transport.onmessage = ((message: unknown, extra?: unknown) => {
      const ref = completionReference(message);
      const claimed = ref !== undefined && this.#providers.some((each) => each.handles(ref));
      const routed = claimed ? { ...(message as object), method: PRIVATE_COMPLETE_METHOD } : message;
      inner.call(transport, routed as never, extra as never);
    }) as never;
  }
}

/**
 * The `capabilities` of the `initialize` request as the client sent them. Both SDK generations parse
 * them with a closed schema that drops keys it does not know (the files extension's `files`), and
 * keep only the parsed copy; the raw value is read off the transport's incoming messages
 * (Transport is public API), the way completion routing reads them.
 */
export class InitializeCapture {
  #capabilities: Record<string, unknown> | undefined;
  #installed = false;

  /** The raw capabilities of the last `initialize` on this server's connection, if any. */
  get capabilities(): Record<string, unknown> | undefined {
    return this.#capabilities;
  }

  /** Starts watching every connection of `low` (now and later); once per server. */
  install(low: RoutableServer): void {
    if (this.#installed) return;
    this.#installed = true;
    const connect = low.connect;
    low.connect = async (transport: never) => {
      // The SDK sets `onmessage` and then calls `start()`, which may deliver queued messages at once
      // (in-memory transports): the watch goes in between, so the `initialize` is never missed.
      const startable = transport as RoutableTransport & { start?: () => Promise<void> };
      const start = startable.start;
      if (typeof start === "function") {
        startable.start = async () => {
          this.#watch(startable);
          return start.call(startable);
        };
      }
      await connect.call(low, transport);
      this.#watch(transport as RoutableTransport);
    };
    if (low.transport) this.#watch(low.transport as RoutableTransport);
  }

  readonly #watched = new WeakSet<object>();

  #watch(transport: RoutableTransport): void {
    if (this.#watched.has(transport)) return;
    this.#watched.add(transport);
    const inner = transport.onmessage;
    if (!inner) return;
    transport.onmessage = ((message: unknown, extra?: unknown) => {
      const request = message as { method?: unknown; params?: { capabilities?: unknown } } | null;
      const capabilities = request?.params?.capabilities;
      if (request?.method === "initialize" && typeof capabilities === "object" && capabilities !== null) {
        this.#capabilities = capabilities as Record<string, unknown>;
      }
      inner.call(transport, message as never, extra as never);
    }) as never;
  }
}

/** The parsed client capabilities with the keys the SDK dropped put back from the raw ones. */
export function withRawCapabilities<T extends object>(
  parsed: T | undefined,
  raw: Record<string, unknown> | undefined,
): T | undefined {
  if (raw === undefined) return parsed;
  return { ...raw, ...parsed } as T;
}

/** A low-level `Server` of either generation, as far as closing goes. */
export interface ClosableServer {
  onclose?: (() => void) | undefined;
  close(): Promise<void>;
  readonly transport?: unknown;
}

/**
 * The close listeners of one server, hooked into its `onclose` once. With `unconnectedClose`, a
 * server closed without ever connecting (SDK v2's `createMcpHandler` builds one for
 * `subscriptions/listen` and closes it unconnected, and the SDK fires no `onclose` then) reports its
 * close too.
 */
export class CloseListeners {
  readonly #listeners = new Set<() => void>();
  #hooked = false;

  add(low: ClosableServer, listener: () => void, options: { unconnectedClose?: boolean } = {}): () => void {
    if (!this.#hooked) {
      this.#hooked = true;
      let fired = false;
      const fire = () => {
        fired = true;
        for (const each of [...this.#listeners]) each();
      };
      const previous = low.onclose;
      low.onclose = () => {
        previous?.();
        fire();
      };
      if (options.unconnectedClose) {
        const close = low.close;
        low.close = async () => {
          const connected = low.transport !== undefined;
          await close.call(low);
          if (!connected && !fired) fire();
        };
      }
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** The config `McpServer.registerTool` takes for a host tool (either generation), given its schemas. */
export function toolConfig(
  tool: HostTool,
  inputSchema: unknown,
  outputSchema: unknown,
): Record<string, unknown> {
  return {
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(inputSchema === undefined ? {} : { inputSchema }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    ...(tool._meta === undefined ? {} : { _meta: tool._meta }),
  };
}

/** A low-level `Server` of either generation, as far as the shared host code goes. */
export interface SdkLowServer extends RoutableServer, ClosableServer {
  assertCanSetRequestHandler(method: string): void;
  removeRequestHandler(method: string): void;
  registerCapabilities(capabilities: HostCapabilities): void;
  readonly transport?: { sessionId?: string | undefined };
}

/** An `McpServer` of either generation, as far as joining its own resources goes. */
export interface SdkMcpServer {
  registerResource(
    name: string,
    uri: string,
    metadata: Record<string, unknown>,
    read: never,
  ): { remove(): void };
}

/**
 * The host-port code both SDK adapters share: which methods are free, mounting a piece's handler
 * over the adapter's own fixed-resource handler, fixed resources joined with an `McpServer`'s own,
 * capabilities, connection state, close listeners, and completion. A subclass says how its SDK
 * mounts a handler, builds a request context, mounts the private completion method and registers
 * tools. `Raw` is the SDK's own request context (`extra` on v1, `ctx` on v2).
 */
export abstract class SdkHost<Raw> {
  readonly [MCP_HOST] = true as const;
  protected readonly completions = new CompletionRouter();
  protected readonly fixed = new FixedResources();
  /** The raw `initialize` capabilities, watched once a `files/*` handler is mounted. */
  protected readonly initialize = new InitializeCapture();
  /** Methods a piece mounted through `handle()`. */
  protected readonly handled = new Set<HostMethod>();
  readonly #closeListeners = new CloseListeners();
  readonly #base: SdkLowServer;

  constructor(low: object) {
    this.#base = low as SdkLowServer;
  }

  /** The `McpServer`, when the host was made from one (not only from its low-level `Server`). */
  protected abstract get mcpServer(): SdkMcpServer | undefined;
  /** Mounts a handler for `method` on the low-level server. */
  protected abstract mount<M extends HostMethod>(method: M, handler: HostRequestHandler<M>): void;
  /** The port's context of an SDK request context. */
  protected abstract context(raw: Raw): HostRequestContext;
  /** Mounts the private completion method, answering with `answer`. */
  protected abstract mountCompletion(
    answer: (params: CompleteParams, raw: Raw) => Promise<CompleteResult>,
  ): void;
  /** Options of the close hook (SDK v2 also reports servers closed unconnected). */
  protected closeOptions: { unconnectedClose?: boolean } = {};

  get server(): object {
    return this.#base;
  }

  serverInfo(): { name: string; title?: string } | undefined {
    // Both generations keep the constructor's Implementation here (the v2 SDK reads it the same way).
    const info = (this.#base as { _serverInfo?: { name?: unknown; title?: unknown } })._serverInfo;
    if (typeof info?.name !== "string") return undefined;
    return typeof info.title === "string" ? { name: info.name, title: info.title } : { name: info.name };
  }

  get supportsTools(): boolean {
    return this.mcpServer !== undefined;
  }

  canHandle(method: HostMethod | "completion/complete"): boolean {
    if (this.fixed.ownsHandler(method)) return true;
    try {
      this.#base.assertCanSetRequestHandler(method);
      return true;
    } catch {
      return false;
    }
  }

  handle<M extends HostMethod>(method: M, handler: HostRequestHandler<M>): void {
    // A piece taking over a resource method from the adapter's own fixed-resource handler.
    if (this.fixed.ownsHandler(method)) {
      this.fixed.releaseHandler(method);
      this.#base.removeRequestHandler(method);
    }
    // The files extension reads the client's `files` capability, which the SDKs drop at parsing.
    if (method.startsWith("files/")) this.initialize.install(this.#base);
    this.mount(method, this.fixed.compose(method, handler));
    this.handled.add(method);
  }

  registerResource(resource: HostResource): HostResourceHandle {
    const mcp = this.mcpServer;
    return this.fixed.register(resource, {
      handled: (method) => this.handled.has(method),
      canHandle: (method) => this.canHandle(method),
      declareResources: () => this.#base.registerCapabilities({ resources: {} }),
      mount: (method, handler) => this.mount(method, handler),
      // Something outside the port serves resources (an McpServer's own registerResource): join it.
      ...(mcp
        ? {
            joinServer: (fixed: HostResource, metadata: Record<string, unknown>) => {
              const read = async (_uri: URL, raw: Raw) => fixed.read(this.context(raw));
              const registered = mcp.registerResource(fixed.name, fixed.uri, metadata, read as never);
              return { remove: () => registered.remove() };
            },
          }
        : {}),
    });
  }

  declareCapabilities(capabilities: HostCapabilities): void {
    this.#base.registerCapabilities(capabilities);
  }

  isConnected(): boolean {
    return this.#base.transport !== undefined;
  }

  connectionSessionId(): string | undefined {
    return this.#base.transport?.sessionId;
  }

  onClose(listener: () => void): () => void {
    return this.#closeListeners.add(this.#base, listener, this.closeOptions);
  }

  addCompletion(provider: HostCompletionProvider): void {
    if (!this.completions.add(provider)) return;
    this.#base.registerCapabilities({ completions: {} });
    this.mountCompletion((params, raw) => this.completions.complete(params, this.context(raw)));
    this.completions.install(this.#base, {
      answersUnclaimed: this.canHandle("completion/complete"),
      mcpServer: this.mcpServer !== undefined,
    });
  }
}
