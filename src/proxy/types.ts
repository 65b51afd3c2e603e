/**
 * The proxy core's view of MCP: plain JSON in and out. The SDK-facing halves live in
 * `src/proxy/sdk/upstream/` (the upstream client) and `src/proxy/sdk/downstream/` (the downstream server); this file
 * is the port between them and the SDK-free core.
 */
import type { ScopeSource } from "../scope/scope.js";

/** A JSON object (MCP params and results). */
export type JsonObject = Record<string, unknown>;

/** A progress update, as in `notifications/progress` (without the token). */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of one request to an upstream. */
export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  /** Receives the upstream's progress notifications for this request. */
  onprogress?: (update: ProgressUpdate) => void;
  /** Longest the request may wait (reset by each progress update), in milliseconds. */
  timeoutMs?: number;
}

/**
 * A JSON-RPC error answered by an upstream, or made by the proxy; passed downstream as it is (code,
 * message and data unchanged).
 */
export class RpcError extends Error {
  override readonly name = "RpcError";
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** JSON-RPC error codes the proxy uses. */
export const RPC = {
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  CONNECTION_CLOSED: -32000,
  REQUEST_TIMEOUT: -32001,
  RESOURCE_NOT_FOUND: -32002,
} as const;

/** A failure to reach an upstream (not an answer from it): the call never completed. */
export class UpstreamUnavailableError extends Error {
  override readonly name = "UpstreamUnavailableError";
  readonly upstream: string;
  constructor(upstream: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.upstream = upstream;
  }
}

/** Messages an upstream sends on its own (not answers). */
export type UpstreamNotificationHandler = (method: string, params: JsonObject | undefined) => void;

/** One connection to an upstream MCP server, as the core sees it (see `src/proxy/sdk/upstream/`). */
export interface UpstreamPort {
  readonly name: string;
  /** Connects if not connected (also after a crash: the next call reconnects). */
  connect(): Promise<void>;
  /** Whether a connection is open now. */
  readonly connected: boolean;
  /** The upstream's capabilities (after connecting). */
  readonly capabilities: JsonObject | undefined;
  /**
   * Sends a request and returns the raw result. Throws {@link RpcError} for a JSON-RPC error answer
   * and {@link UpstreamUnavailableError} when the upstream cannot be reached or goes away.
   */
  request(
    method: string,
    params: JsonObject | undefined,
    options?: UpstreamRequestOptions,
  ): Promise<JsonObject>;
  /** Sends a notification (e.g. `notifications/roots/list_changed`); ignored when not connected. */
  notify(method: string, params?: JsonObject): Promise<void>;
  close(): Promise<void>;
}

/** What a tool call's adapters see about the call. */
export interface CallContext {
  /** The caller's scope. */
  scope: string;
  /** The request context, for scope functions and download claims. */
  extra: ScopeSource;
  signal: AbortSignal;
  /** The downstream tool name. */
  tool: string;
  /** The upstream's name. */
  upstream: string;
  /** Calls another tool of the same upstream (e.g. `get_upload_url`). */
  callUpstream(name: string, args: JsonObject): Promise<JsonObject>;
  /** Reads a resource of the same upstream. */
  readUpstream(uri: string): Promise<JsonObject>;
}

/** What a `before` step returns: the arguments to forward, and what to clean up after the call. */
export interface PreparedCall {
  args: JsonObject;
  dispose?: () => Promise<void>;
  /** Passed to `after`. */
  state?: unknown;
  /**
   * Ends the call here with this result, without calling the upstream (e.g. the files extension's
   * `upload_required`: the client uploads, then calls again). `after` steps do not run.
   */
  result?: JsonObject;
}

/**
 * Changes one tool: its listing downstream, its arguments before the call, its result after.
 * Every step is optional; a tool without adapters passes through untouched.
 */
export interface ToolAdapter {
  /** The tool as listed downstream (gets a copy). */
  describe?(tool: JsonObject): JsonObject;
  before?(args: JsonObject, ctx: CallContext): Promise<PreparedCall>;
  /** Runs only for results that are not `isError`. */
  after?(result: JsonObject, ctx: CallContext, state: unknown): Promise<JsonObject>;
}

/** One upstream mounted in the proxy. */
export interface MountedUpstream {
  port: UpstreamPort;
  /** Prefix of its tool and prompt names downstream. @default "" */
  prefix?: string;
  /** The adapters of one of its tools (by upstream name); none = pass-through. */
  adaptersFor?: (tool: JsonObject) => ToolAdapter[];
}

/** A tool the proxy itself serves (e.g. `get_upload_url`). */
export interface LocalTool {
  definition: JsonObject;
  call(
    args: JsonObject,
    ctx: { scope: string; extra: ScopeSource; signal: AbortSignal },
  ): Promise<JsonObject>;
}

/**
 * Resources served by the proxy itself (captured artifacts, uploads), per scope. `scope` is what the
 * core derived from `extra` (the caller's request context); an implementation that derives a scope
 * itself must use the core's scope function on that `extra`, so both sides keep one rule.
 */
export interface LocalResources {
  list(scope: string, cursor: string | undefined, extra?: ScopeSource): Promise<JsonObject>;
  templates(scope: string, extra?: ScopeSource): Promise<JsonObject[]>;
  /** True when the URI is one of ours. */
  owns(uri: string): boolean;
  read(scope: string, uri: string, extra?: ScopeSource): Promise<JsonObject>;
  subscribe?(scope: string, uri: string, extra?: ScopeSource): Promise<void>;
  unsubscribe?(scope: string, uri: string, extra?: ScopeSource): Promise<void>;
  /** Forgets the scope (its session ended); later requests of the scope start afresh. */
  release?(scope: string): void;
}

/** Where the core sends notifications for connected downstream sessions. */
export interface DownstreamSink {
  /** The session's scope, once known. */
  scope?: string;
  /**
   * A listener feed (2026-07-28 `subscriptions/listen` streams of every user): hears the unscoped
   * notifications and `ProxyCore.notifyListeners`, never one scope's.
   */
  listener?: boolean;
  notify(method: string, params?: JsonObject): void;
}

/** The context of one downstream request. */
export interface RequestContext {
  extra: ScopeSource;
  signal: AbortSignal;
  /** Sends progress for this request downstream (only when the caller asked for progress). */
  progress?: (update: ProgressUpdate) => void;
  sink?: DownstreamSink;
}
