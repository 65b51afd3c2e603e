/**
 * Which input schema the tool a `tools/call` runs was registered with, for code the tool's handler
 * calls (`withFiles` enforces the `x-mcp-file { accept, maxSize }` its fields publish from it). A
 * handler is given only its arguments and the SDK's request context, never the tool's name or
 * schema, so the `tools/call` dispatch of an `McpServer` is watched: before the server's own
 * handler runs, the called tool's schema (what the server itself validates the arguments against,
 * `params.name` looked up in its registry, updates included) is noted under the request's
 * `AbortSignal`, the one object both SDK generations hand unchanged to the tool handler (v1
 * `extra.signal`, v2 `ctx.mcpReq.signal`, kept by every context copy v2 makes). Nothing is held
 * past the request (a `WeakMap` on the signal).
 *
 * The watch goes into the server's request-handler table (`_requestHandlers`, a `Map` both
 * generations keep; the public API has no way to wrap a handler set by someone else): the entry for
 * `tools/call` now, and any set later (an `McpServer` sets it when its first tool registers). No SDK
 * import: both generations are used structurally, and a server without that table is refused, so a
 * future SDK that changes it fails loudly instead of leaving constraints unchecked.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";

type RequestHandler = (request: unknown, raw: unknown) => unknown;

/** What the watch knows about one call: the called tool's input schema (`undefined`: it has none). */
export interface CalledTool {
  readonly inputSchema: unknown;
  /** Whether the called tool declares an `outputSchema` (its results must keep `structuredContent`). */
  readonly hasOutputSchema?: boolean;
}

const calls = new WeakMap<AbortSignal, CalledTool>();
const watched = new WeakSet<object>();
const WATCH = Symbol.for("mcp-file-bridge.tool-call-watch");

/** The request's `AbortSignal` in an SDK request context of either generation, or `undefined`. */
function requestSignal(raw: unknown): AbortSignal | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const v2 = (raw as { mcpReq?: { signal?: unknown } }).mcpReq?.signal;
  if (v2 instanceof AbortSignal) return v2;
  const v1 = (raw as { signal?: unknown }).signal;
  return v1 instanceof AbortSignal ? v1 : undefined;
}

/**
 * The tool a handler's call runs, when the server it runs on is watched ({@link watchToolCalls});
 * `undefined` when it is not (or `extra` is not an SDK request context).
 *
 * @example
 * ```ts
 * const called = calledTool(extra); // in a tool handler
 * if (called) constraintsAt(called.inputSchema, steps);
 * ```
 */
export function calledTool(extra: unknown): CalledTool | undefined {
  const signal = requestSignal(extra);
  return signal ? calls.get(signal) : undefined;
}

interface WatchableMcpServer {
  server: { _requestHandlers?: unknown };
  _registeredTools?: unknown;
}

/** Whether `server` is an `McpServer` (either generation) whose `tools/call` dispatch can be watched. */
export function canWatchToolCalls(server: unknown): boolean {
  const mcp = server as WatchableMcpServer | null;
  return (
    typeof mcp === "object" &&
    mcp !== null &&
    typeof mcp._registeredTools === "object" &&
    mcp._registeredTools !== null &&
    typeof mcp.server === "object" &&
    mcp.server !== null &&
    mcp.server._requestHandlers instanceof Map
  );
}

/**
 * Watches `server`'s `tools/call` dispatch so {@link calledTool} answers in its tool handlers. Once
 * per server; later calls do nothing.
 *
 * @throws FileBridgeError `INVALID_INPUT` when `server` is not an SDK v1 or v2 `McpServer`.
 * @example
 * ```ts
 * watchToolCalls(new McpServer({ name: "files", version: "1.0.0" }));
 * ```
 */
export function watchToolCalls(server: object, caller = "attach()"): void {
  if (!canWatchToolCalls(server)) {
    throw new FileBridgeError(
      "INVALID_INPUT",
      `${caller} needs an McpServer (SDK v1 @modelcontextprotocol/sdk or v2 @modelcontextprotocol/server)`,
    );
  }
  const mcp = server as WatchableMcpServer & {
    _registeredTools: Record<string, { inputSchema?: unknown; outputSchema?: unknown }>;
  };
  const handlers = mcp.server._requestHandlers as Map<string, RequestHandler>;
  if (watched.has(handlers)) return;
  watched.add(handlers);
  const watch = (handler: RequestHandler): RequestHandler => {
    if ((handler as { [WATCH]?: true })[WATCH]) return handler;
    const watching = (request: unknown, raw: unknown) => {
      const signal = requestSignal(raw);
      const name = (request as { params?: { name?: unknown } } | null)?.params?.name;
      if (signal) {
        const tools = mcp._registeredTools;
        const tool = typeof name === "string" && Object.hasOwn(tools, name) ? tools[name] : undefined;
        calls.set(signal, {
          inputSchema: tool?.inputSchema,
          hasOutputSchema: tool?.outputSchema !== undefined && tool?.outputSchema !== null,
        });
      }
      return handler(request, raw);
    };
    return Object.assign(watching, { [WATCH]: true as const });
  };
  const set = handlers.set;
  handlers.set = function (this: Map<string, RequestHandler>, method: string, handler: RequestHandler) {
    return set.call(this, method, method === "tools/call" ? watch(handler) : handler);
  };
  const current = handlers.get("tools/call");
  if (current) set.call(handlers, "tools/call", watch(current));
}
