import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import { toMcpRequestError } from "../errors.js";
import type {
  HostMethod,
  HostRequestContext,
  HostRequestHandler,
  HostTool,
  HostToolHandle,
  McpHost,
} from "../host.js";
import { hasFunctions, SdkHost, type SdkMcpServer, toolConfig, withRawCapabilities } from "../host-kit.js";
import { canWatchToolCalls, watchToolCalls } from "../tool-call-schemas.js";
import type { CompleteParams, CompleteResult } from "../types.js";
import { contextFromV1, type V1Extra } from "./context.js";
import { v1Schemas } from "./schemas.js";

/**
 * The SDK v1 adapter of the host port: wraps an `McpServer` (and its low-level `Server`) or a bare
 * low-level `Server`, through public SDK API only. Type imports only: the package loads without
 * the SDK installed.
 *
 * Completions. An `McpServer` answers `completion/complete` itself (prompts, its own resource
 * templates) once a completable argument is registered — before or after the registry attaches —
 * and its handler cannot be reached or extended through public API. So the adapter leaves
 * `completion/complete` to it and routes the requests its own providers handle elsewhere: when the
 * server connects, the transport's `onmessage` is wrapped (Transport is public API) and a
 * `completion/complete` request whose reference a provider claims is renamed to a private method,
 * mounted with `setRequestHandler` like any other, so the SDK still parses, cancels and answers
 * it. When nothing else handles `completion/complete`, `fallbackRequestHandler` (public) answers
 * the rest with an empty completion, and an `McpServer` that registers a completable argument
 * later takes over from it.
 */

/** The schema of each request method the adapter mounts (built on first use, with the schemas). */
const requestSchemas = () => {
  const schemas = v1Schemas();
  return {
    "resources/list": schemas.ListResourcesRequestSchema,
    "resources/templates/list": schemas.ListResourceTemplatesRequestSchema,
    "resources/read": schemas.ReadResourceRequestSchema,
    "resources/subscribe": schemas.SubscribeRequestSchema,
    "resources/unsubscribe": schemas.UnsubscribeRequestSchema,
    ...schemas.FilesRequestSchemas,
  } as const;
};

/** Whether `value` looks like an SDK v1 low-level `Server`. */
export function isV1LowLevelServer(value: unknown): value is Server {
  return hasFunctions(value, [
    "setRequestHandler",
    "assertCanSetRequestHandler",
    "registerCapabilities",
    "sendResourceListChanged",
    "sendResourceUpdated",
    "connect",
  ]);
}

/** Whether `value` looks like an SDK v1 `McpServer`. */
export function isV1McpServer(value: unknown): value is McpServer {
  return hasFunctions(value, ["registerTool", "connect"]) && isV1LowLevelServer((value as McpServer).server);
}

class V1Host extends SdkHost<V1Extra> implements McpHost {
  readonly kind = "sdk-v1";
  readonly #low: Server;
  #mcp: McpServer | undefined;

  constructor(low: Server) {
    super(low);
    this.#low = low;
  }

  protected get mcpServer(): SdkMcpServer | undefined {
    return this.#mcp as SdkMcpServer | undefined;
  }

  adopt(mcp: McpServer): void {
    this.#mcp ??= mcp;
    // withFiles sees the called tool's schema (x-mcp-file constraints) on any server a piece attaches to.
    if (canWatchToolCalls(mcp)) watchToolCalls(mcp);
  }

  protected mount<M extends HostMethod>(method: M, handler: HostRequestHandler<M>): void {
    this.#low.assertCanSetRequestHandler(method);
    const schema = requestSchemas()[method];
    this.#low.setRequestHandler(schema, (async (request: { params?: unknown }, extra: V1Extra) => {
      try {
        return await handler((request.params ?? {}) as never, this.context(extra));
      } catch (error) {
        throw toMcpRequestError(error);
      }
    }) as never);
  }

  protected context(extra: V1Extra): HostRequestContext {
    const context = contextFromV1(extra, this.#low);
    const capabilities = withRawCapabilities(context.clientCapabilities, this.initialize.capabilities);
    if (capabilities) context.clientCapabilities = capabilities;
    return context;
  }

  protected mountCompletion(
    answer: (params: CompleteParams, extra: V1Extra) => Promise<CompleteResult>,
  ): void {
    this.#low.setRequestHandler(v1Schemas().PrivateCompleteRequestSchema, (async (
      request: { params: CompleteParams },
      extra: V1Extra,
    ) => answer(request.params, extra)) as never);
  }

  requestContext(extra: unknown): HostRequestContext {
    const candidate = extra as Partial<V1Extra> | null;
    if (
      typeof candidate !== "object" ||
      candidate === null ||
      !(candidate.signal instanceof AbortSignal) ||
      typeof candidate.sendRequest !== "function" ||
      typeof candidate.sendNotification !== "function"
    ) {
      throw new FileBridgeError(
        "INVALID_INPUT",
        "requestContext() needs the SDK request context (the `extra` a tool callback gets)",
      );
    }
    return this.context(candidate as V1Extra);
  }

  registerTool(tool: HostTool): HostToolHandle {
    const mcp = this.#mcp;
    if (!mcp) throw new FileBridgeError("INVALID_INPUT", "registering a tool needs an McpServer");
    const config = toolConfig(tool, tool.inputSchema, tool.outputSchema);
    // Without an input schema, SDK v1 calls the callback with `extra` alone.
    const callback =
      tool.inputSchema === undefined
        ? (extra: V1Extra) => tool.handler({}, this.context(extra))
        : (args: Record<string, unknown>, extra: V1Extra) => tool.handler(args, this.context(extra));
    return mcp.registerTool(tool.name, config as never, callback as never);
  }

  notifyResourceListChanged(): Promise<void> {
    return this.#low.sendResourceListChanged();
  }

  notifyResourceUpdated(uri: string): Promise<void> {
    return this.#low.sendResourceUpdated({ uri });
  }
}

const hosts = new WeakMap<object, V1Host>();

/**
 * The SDK v1 host of a server: one per low-level `Server`, shared by an `McpServer` and its
 * `server` so every piece attached to either sees the same host.
 */
export function v1Host(server: McpServer | Server): McpHost {
  const mcp = isV1McpServer(server) ? server : undefined;
  const low = mcp ? mcp.server : (server as Server);
  let host = hosts.get(low);
  if (!host) {
    host = new V1Host(low);
    hosts.set(low, host);
  }
  if (mcp) host.adopt(mcp);
  return host;
}
