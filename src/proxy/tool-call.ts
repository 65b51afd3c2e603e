/**
 * One proxied `tools/call`, as named steps: the call context the adapters see, the adapters'
 * `before` steps in order (a file argument rewritten to a handoff path; a step may end the call
 * with its own result, e.g. `upload_required`), the params forwarded
 * upstream, their `after` steps in reverse (outputs captured as artifacts), and the mapping of a
 * failure to a tool error result. {@link ProxyCore} owns the state (routes, in-flight calls, the
 * scope rule) and calls {@link callRoute} once it has found the route.
 */
import { isFileBridgeError, toToolErrorResult } from "../errors/file-bridge-error.js";
import {
  type CallContext,
  type JsonObject,
  type LocalTool,
  type MountedUpstream,
  type PreparedCall,
  type RequestContext,
  RpcError,
  type ToolAdapter,
  UpstreamUnavailableError,
} from "./types.js";

/** Where a downstream tool name goes: its upstream, the upstream's own name, its adapters. */
export interface ToolRoute {
  upstream: MountedUpstream;
  upstreamName: string;
  /** The tool as listed downstream (`{}` for a name routed by prefix only). */
  definition: JsonObject;
  adapters: ToolAdapter[];
}

/** What one routed call needs from the core besides the route. */
export interface RouteCallOptions {
  /** Timeout of the upstream call (reset by progress), in milliseconds. */
  timeoutMs: number;
  log: (line: string) => void;
}

/** A tool error result for a failure of the proxy itself (never a pass-through). */
export function proxyToolError(code: string, message: string): JsonObject {
  return { isError: true, content: [{ type: "text", text: `Error ${code}: ${message}` }] };
}

/** Calls a tool the proxy serves itself; a failure is a tool error result. */
export async function callLocalTool(
  tool: LocalTool,
  params: JsonObject,
  ctx: RequestContext,
  scopeOf: () => string,
): Promise<JsonObject> {
  try {
    return await tool.call((params.arguments as JsonObject | undefined) ?? {}, {
      scope: scopeOf(),
      extra: ctx.extra,
      signal: ctx.signal,
    });
  } catch (error) {
    return toToolErrorResult(error);
  }
}

/** What the adapters of one call see: the scope (derived on first use), the upstream, the signal. */
function callContextOf(
  name: string,
  route: ToolRoute,
  ctx: RequestContext,
  scopeOf: () => string,
): CallContext {
  const port = route.upstream.port;
  return {
    get scope() {
      return scopeOf();
    },
    extra: ctx.extra,
    signal: ctx.signal,
    tool: name,
    upstream: port.name,
    callUpstream: (tool, args) =>
      port.request("tools/call", { name: tool, arguments: args }, { signal: ctx.signal }),
    readUpstream: (uri) => port.request("resources/read", { uri }, { signal: ctx.signal }),
  };
}

/**
 * Runs the adapters' `before` steps in order, each on the previous one's arguments; every step lands
 * in `prepared` (one per adapter, so `after` finds its own state) as soon as it exists, so what it
 * made is disposed even when a later step fails.
 */
async function runBefore(
  adapters: ToolAdapter[],
  args: JsonObject | undefined,
  callCtx: CallContext,
  prepared: PreparedCall[],
): Promise<JsonObject | undefined> {
  let current = args;
  for (const adapter of adapters) {
    if (!adapter.before) {
      prepared.push({ args: current ?? {} });
      continue;
    }
    const step = await adapter.before(current ?? {}, callCtx);
    prepared.push(step);
    current = step.args;
    // A step that answers the call itself (upload_required) ends it: later steps do not run.
    if (step.result) break;
  }
  return current;
}

/**
 * The params sent upstream: the upstream's own tool name, the adapted arguments (unchanged for a
 * pass-through tool), and `_meta` without the downstream's progress token (the upstream client
 * sets its own).
 */
function forwardedParams(params: JsonObject, route: ToolRoute, args: JsonObject | undefined): JsonObject {
  const forwarded: JsonObject = { ...params, name: route.upstreamName };
  if (route.adapters.length > 0) forwarded.arguments = args ?? {};
  const meta = params._meta as JsonObject | undefined;
  if (meta && "progressToken" in meta) {
    const { progressToken: _token, ...rest } = meta;
    if (Object.keys(rest).length > 0) forwarded._meta = rest;
    else delete forwarded._meta;
  }
  return forwarded;
}

/** Runs the adapters' `after` steps in reverse order on a successful result. */
async function runAfter(
  adapters: ToolAdapter[],
  result: JsonObject,
  callCtx: CallContext,
  prepared: PreparedCall[],
): Promise<JsonObject> {
  let current = result;
  for (let i = adapters.length - 1; i >= 0; i--) {
    const adapter = adapters[i] as ToolAdapter;
    if (adapter.after) current = await adapter.after(current, callCtx, prepared[i]?.state);
  }
  return current;
}

/**
 * A failed call as the downstream sees it: JSON-RPC errors pass as they are; an unreachable
 * upstream, a file error or anything unexpected becomes a tool error result (logged).
 */
function failureResult(error: unknown, name: string, log: (line: string) => void): JsonObject {
  if (error instanceof RpcError) throw error;
  if (error instanceof UpstreamUnavailableError) {
    log(`tools/call ${name}: ${error.message}`);
    return proxyToolError(
      "UPSTREAM_UNAVAILABLE",
      `${error.message}. The call did not complete; try again (the proxy reconnects on the next call).`,
    );
  }
  if (isFileBridgeError(error)) {
    log(`tools/call ${name}: ${error.code}: ${error.message}`);
    return toToolErrorResult(error);
  }
  log(`tools/call ${name}: unexpected ${(error as Error)?.stack ?? String(error)}`);
  return toToolErrorResult(error);
}

/**
 * Calls a routed tool through its adapters: `before` steps, the upstream call (with the
 * downstream's progress and cancellation), `after` steps on a successful result; whatever the
 * `before` steps prepared (handoff files) is disposed whether the call returned or threw.
 */
export async function callRoute(
  route: ToolRoute,
  params: JsonObject,
  ctx: RequestContext,
  scopeOf: () => string,
  options: RouteCallOptions,
): Promise<JsonObject> {
  const name = String(params.name);
  // A pass-through tool: no steps to run, prepare or dispose (issue 43: three promises and a
  // context object fewer per call); the same request, result and failure as below.
  if (route.adapters.length === 0) {
    try {
      return await route.upstream.port.request("tools/call", forwardedParams(params, route, undefined), {
        signal: ctx.signal,
        ...(ctx.progress ? { onprogress: ctx.progress } : {}),
        timeoutMs: options.timeoutMs,
      });
    } catch (error) {
      return failureResult(error, name, options.log);
    }
  }
  const callCtx = callContextOf(name, route, ctx, scopeOf);
  const prepared: PreparedCall[] = [];
  try {
    const args = await runBefore(
      route.adapters,
      params.arguments as JsonObject | undefined,
      callCtx,
      prepared,
    );
    const answered = prepared.find((step) => step.result !== undefined)?.result;
    if (answered) return answered;
    const result = await route.upstream.port.request("tools/call", forwardedParams(params, route, args), {
      signal: ctx.signal,
      ...(ctx.progress ? { onprogress: ctx.progress } : {}),
      timeoutMs: options.timeoutMs,
    });
    if (result.isError === true) return result;
    return await runAfter(route.adapters, result, callCtx, prepared);
  } catch (error) {
    return failureResult(error, name, options.log);
  } finally {
    await Promise.allSettled(prepared.map((p) => p.dispose?.()));
  }
}
