/**
 * What the SDK v1 and v2 adapters of the host port do the same way, written once: completion of
 * our templates next to a server's own completions, close listeners, and a tool's config. No SDK
 * import: both generations' low-level `Server`s are used structurally (same member names).
 */
import { toMcpRequestError } from "./errors.js";
import type { HostCompletionProvider, HostRequestContext, HostTool } from "./host.js";
import type { CompleteParams, CompleteResult, CompletionReference } from "./types.js";
import { CompletionReferenceSchema, PRIVATE_COMPLETE_METHOD } from "./v1/schemas.js";

const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };
const JSONRPC_METHOD_NOT_FOUND = -32601;
const JSONRPC_INVALID_PARAMS = -32602;

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
  const parsed = CompletionReferenceSchema.safeParse(request.params?.ref);
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
    low.fallbackRequestHandler = (async (request: { method: string; params?: unknown }, extra: never) => {
      if (request.method === "completion/complete") {
        const ref = (request.params as { ref?: { type?: unknown; uri?: unknown } } | undefined)?.ref;
        if (mcpServer && ref?.type === "ref/resource") {
          // What an McpServer answers for a template it does not know.
          throw Object.assign(
            new Error(`MCP error ${JSONRPC_INVALID_PARAMS}: Resource template ${String(ref.uri)} not found`),
            { code: JSONRPC_INVALID_PARAMS },
          );
        }
        return EMPTY_COMPLETION;
      }
      if (previous) return previous(request as never, extra);
      throw Object.assign(new Error("Method not found"), { code: JSONRPC_METHOD_NOT_FOUND });
    }) as never;
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
