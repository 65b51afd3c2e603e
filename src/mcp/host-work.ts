/**
 * What the SDK host adapters run only inside a request, loaded on first use (`loadHostWork()`,
 * issue 39): the URL elicitation round trips of both SDK generations, the listing of fixed
 * resources, the answer to a `completion/complete` no provider claims, and the rewrite of a
 * `tools/list` answer. The adapters keep everything attaching needs, and every check a caller
 * sees first (a client that cannot open URLs is refused before this loads). Imports no adapter
 * module, so the adapters can load it, and no zod: esbuild then wrapped zod's modules in lazy
 * init functions even in a bundle that drops this module (`FileBridge`'s grew by 1.3 KB).
 */
import type {
  HostElicitationAnswer,
  HostRequestContext,
  HostResource,
  HostToolsRewrite,
  HostUrlElicitation,
} from "./host.js";
import type { CompleteResult, McpResource } from "./types.js";

const JSONRPC_METHOD_NOT_FOUND = -32601;
const JSONRPC_INVALID_PARAMS = -32602;
const JSONRPC_REQUEST_TIMEOUT = -32001;
const EMPTY_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

/** The marker of {@link InputRequiredSignal} (`request-files-flow.ts` and the v2 adapter read it). */
const INPUT_REQUIRED_SIGNAL = Symbol.for("mcp-file-bridge.input-required");

/**
 * Thrown by a 2026-07-28 `elicitUrl`: the round ends with `result` (an `input_required` result). No
 * numeric `code`, so `requestFiles` does not take it for a client error.
 */
export class InputRequiredSignal extends Error {
  readonly [INPUT_REQUIRED_SIGNAL] = true;
  constructor(readonly result: Record<string, unknown>) {
    super("input_required: the client answers on its retry of this request");
    this.name = "InputRequiredSignal";
  }
}

/** Timeouts as the caller gave them, in whole milliseconds of at least 1. */
function timeoutOf(options: { timeoutMs?: number }): { timeout?: number } {
  return options.timeoutMs === undefined ? {} : { timeout: Math.max(1, Math.floor(options.timeoutMs)) };
}

/** What SDK v1 sends a URL elicitation's request with: its `extra`, as far as that goes. */
export interface V1RequestSender {
  signal: AbortSignal;
  sendRequest(request: never, schema: never, options: never): Promise<unknown>;
}

/**
 * SDK v1: `elicitation/create` in URL mode, sent through `extra.sendRequest` (the answer checked
 * with `resultSchema`) so it stays related to the request (over HTTP: the same SSE stream). SDK v1's default request timeout (60 s) is too short
 * when a client answers only after the person is done; the caller gives the link's lifetime.
 */
export async function elicitUrlV1(
  extra: V1RequestSender,
  resultSchema: unknown,
  request: HostUrlElicitation,
  options: { timeoutMs?: number } = {},
): Promise<HostElicitationAnswer> {
  const params = {
    mode: "url" as const,
    message: request.message,
    url: request.url,
    elicitationId: request.elicitationId,
  };
  const answer = await extra.sendRequest(
    { method: "elicitation/create", params } as never,
    resultSchema as never,
    { signal: extra.signal, ...timeoutOf(options) } as never,
  );
  return answer as HostElicitationAnswer;
}

/** What SDK v2 elicits with on the 2025 era: its request context's `mcpReq`, as far as that goes. */
export interface V2Elicitor {
  signal: AbortSignal;
  elicitInput(params: never, options: never): Promise<unknown>;
}

/**
 * SDK v2 on the 2025 era: `elicitation/create` in URL mode through `ctx.mcpReq.elicitInput`, related
 * to the request. SDK v2 reports its own timeout as an SdkError with a string code; the port speaks
 * JSON-RPC's.
 */
export async function elicitUrlV2(
  mcpReq: V2Elicitor,
  request: HostUrlElicitation,
  options: { timeoutMs?: number } = {},
): Promise<HostElicitationAnswer> {
  try {
    const answer = await mcpReq.elicitInput(
      {
        mode: "url",
        message: request.message,
        url: request.url,
        elicitationId: request.elicitationId,
      } as never,
      { signal: mcpReq.signal, ...timeoutOf(options) } as never,
    );
    return answer as HostElicitationAnswer;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "REQUEST_TIMEOUT") {
      throw Object.assign(new Error("Request timed out", { cause: error }), {
        code: JSONRPC_REQUEST_TIMEOUT,
      });
    }
    throw error;
  }
}

/**
 * SDK v2 on 2026-07-28: the signal that ends the round with an `input_required` result, which embeds
 * the `elicitation/create` keyed by the elicitation id and carries `requestState` (sealed by the
 * adapter).
 */
export function inputRequired(request: HostUrlElicitation, requestState: string): InputRequiredSignal {
  return new InputRequiredSignal({
    resultType: "input_required",
    inputRequests: {
      [request.elicitationId]: {
        method: "elicitation/create",
        params: { mode: "url", message: request.message, url: request.url },
      },
    },
    requestState,
  });
}

/** The `resources/list` entries of fixed resources. */
export function fixedEntries(resources: Iterable<HostResource>): McpResource[] {
  return [...resources].map((resource) => {
    const entry: McpResource = { uri: resource.uri, name: resource.name };
    if (resource.title !== undefined) entry.title = resource.title;
    if (resource.description !== undefined) entry.description = resource.description;
    if (resource.mimeType !== undefined) entry.mimeType = resource.mimeType;
    if (resource._meta !== undefined) entry._meta = resource._meta;
    return entry;
  });
}

/**
 * What a server's fallback handler answers while no provider claims a `completion/complete`:
 * an empty completion, or, on an `McpServer`, its own error for a template it does not know (without
 * the SDK's doubled `MCP error -32602: ` prefix: the client adds one). Other methods go to the
 * handler that was there before, or are not found.
 */
export async function answerUnclaimed(
  request: { method: string; params?: unknown },
  extra: never,
  mcpServer: boolean,
  previous: ((request: never, extra: never) => Promise<unknown>) | undefined,
): Promise<unknown> {
  if (request.method === "completion/complete") {
    const ref = (request.params as { ref?: { type?: unknown; uri?: unknown } } | undefined)?.ref;
    if (mcpServer && ref?.type === "ref/resource") {
      throw Object.assign(new Error(`Resource template ${String(ref.uri)} not found`), {
        code: JSONRPC_INVALID_PARAMS,
      });
    }
    return EMPTY_COMPLETION;
  }
  if (previous) return previous(request as never, extra);
  throw Object.assign(new Error("Method not found"), { code: JSONRPC_METHOD_NOT_FOUND });
}

/** The `tools/list` result of one request with `rewrites` applied, in order (others as they are). */
export function rewriteListed(
  result: unknown,
  rewrites: readonly HostToolsRewrite[],
  context: () => HostRequestContext,
): unknown {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return result;
  const listed = result as Record<string, unknown>;
  if (!Array.isArray(listed.tools)) return result;
  const port = context();
  let tools = listed.tools as Array<Record<string, unknown>>;
  for (const each of rewrites) tools = each(tools, port);
  // Spread keeps the SDK's symbol-keyed cache hint on the result.
  return { ...listed, tools };
}
