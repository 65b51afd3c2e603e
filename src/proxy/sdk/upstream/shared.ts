/**
 * What the two upstream connections (`UpstreamConnection` on SDK v1, `UpstreamConnectionV2` on SDK v2)
 * share: their options, defaults, the errors they turn failures into, and a few pure helpers. No SDK
 * import here, so either connection loads without the other SDK installed.
 */
import {
  type JsonObject,
  RPC,
  RpcError,
  type UpstreamNotificationHandler,
  UpstreamUnavailableError,
} from "../../types.js";

/** How to reach an upstream: the `mcpServers` entry shape. */
export type UpstreamTarget =
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string; headers?: Record<string, string> };

/** Options of `UpstreamConnection` and `UpstreamConnectionV2`. */
export interface UpstreamConnectionOptions {
  name: string;
  target: UpstreamTarget;
  /** Receives every notification the upstream sends (except progress, which goes to its request). */
  onNotification?: UpstreamNotificationHandler;
  /** Where a stdio upstream's stderr goes. @default "inherit" */
  stderr?: "inherit" | "pipe" | "ignore";
  /** Name/version announced to the upstream. */
  clientInfo?: { name: string; version: string };
  /** Default request timeout, in milliseconds. @default 600000 */
  timeoutMs?: number;
  /**
   * How long the upstream may take to answer `initialize`, in milliseconds: past it the attempt is
   * given up (a stdio upstream's process ended) with an error naming the command that was run.
   * Whatever the limit, an upstream still silent after {@link INITIALIZE_NOTICE_MS} is named through
   * `onError` (the proxy logs it), with the command.
   * @default 60000 (the SDKs' request timeout)
   */
  initializeTimeoutMs?: number;
  /** Called for transport-level problems (logging). */
  onError?: (error: Error) => void;
  /**
   * Send a plain `tools/call` (no progress asked for) on a Streamable HTTP connection without the
   * SDK client's request machinery (SDK v1: a 2025 session; SDK v2: a 2026-07-28 connection): the
   * same request on the same connection, with the same outcome (what is not a plain answer is
   * handed to the client to decode). `false` sends every request through the client. @default true
   */
  directToolCalls?: boolean;
}

export const DEFAULT_CLIENT_INFO = { name: "mcp-file-bridge-proxy", version: "0.1.0" } as const;
export const DEFAULT_TIMEOUT_MS = 600_000;
export const DEFAULT_INITIALIZE_TIMEOUT_MS = 60_000;
/** When a silent upstream is first named in the log (a first `npx -y` may still be downloading). */
export const INITIALIZE_NOTICE_MS = 5_000;

/** What was run (or asked) to reach an upstream: its command line, or its URL. */
export function targetText(target: UpstreamTarget): string {
  if (!("command" in target)) return `url ${target.url}`;
  const words = [target.command, ...(target.args ?? [])].map((word) =>
    /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`,
  );
  return `command: ${words.join(" ")}${target.cwd ? ` (in ${target.cwd})` : ""}`;
}

/**
 * Whether a transport error says a Streamable HTTP stream broke without resumption: a call waiting
 * on it would hang until its timeout, so the connection is closed (in-flight calls fail now, the
 * next call reconnects).
 */
export function streamBroke(error: Error): boolean {
  return /SSE stream disconnected|reconnect/i.test(error.message);
}

/** A message for an error, with its cause's message when there is one. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

/** The errors both connections raise, worded the same. */
export const upstreamErrors = {
  closing: (name: string) => new UpstreamUnavailableError(name, "the proxy is shutting down"),
  slowInitialize: (name: string, target: UpstreamTarget, ms: number) =>
    new Error(
      `no answer to initialize from upstream "${name}" after ${ms / 1000}s (${targetText(target)}); still waiting`,
    ),
  /**
   * What callers get: no command line, working folder or URL, which may carry credentials and
   * reach every user of a shared proxy. The operator's log gets {@link upstreamErrors.noInitializeLog}.
   */
  noInitialize: (name: string, ms: number) =>
    new UpstreamUnavailableError(
      name,
      `upstream "${name}" did not answer initialize within ${ms / 1000}s; the proxy's log names what ` +
        "was run: run it by hand to see what it does, or raise proxy.limits.initializeTimeout",
    ),
  noInitializeLog: (name: string, target: UpstreamTarget, ms: number) =>
    new Error(`upstream "${name}" did not answer initialize within ${ms / 1000}s (${targetText(target)})`),
  cannotConnect: (name: string, cause: unknown) =>
    new UpstreamUnavailableError(name, `cannot connect to upstream "${name}": ${describe(cause)}`, {
      cause,
    }),
  lostDuringCall: (name: string, cause: unknown) =>
    new UpstreamUnavailableError(name, `upstream "${name}" closed the connection during the call`, { cause }),
  timedOut: (name: string, cause: unknown) =>
    new UpstreamUnavailableError(name, `upstream "${name}" did not answer in time`, { cause }),
  failed: (name: string, cause: unknown) =>
    new UpstreamUnavailableError(name, `upstream "${name}" failed: ${describe(cause)}`, { cause }),
  cancelled: () => new RpcError(RPC.REQUEST_TIMEOUT, "Request was cancelled"),
  malformed: (name: string) => new RpcError(RPC.INTERNAL_ERROR, `upstream "${name}" sent a malformed result`),
};

/** The `_meta` key a 2026-07-28 server stamps on notifications delivered on a `subscriptions/listen` stream. */
export const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";

/**
 * A notification's params without the upstream's listen-stream id (meaningless downstream, where the
 * proxy's own server stamps its own); `_meta` is dropped when nothing else is left in it.
 */
export function withoutSubscriptionId(params: JsonObject | undefined): JsonObject | undefined {
  const meta = params?._meta;
  if (!params || typeof meta !== "object" || meta === null || !(SUBSCRIPTION_ID_KEY in meta)) return params;
  const { [SUBSCRIPTION_ID_KEY]: _id, ...restMeta } = meta as JsonObject;
  const { _meta: _old, ...rest } = params;
  return Object.keys(restMeta).length > 0 ? { ...rest, _meta: restMeta } : rest;
}

/** The prefix of the keys MCP reserves in `_meta` for its own per-message envelope. */
const RESERVED_META_PREFIX = "io.modelcontextprotocol/";

/**
 * A result without the upstream's reserved `_meta` envelope keys (`io.modelcontextprotocol/…`, such as
 * the upstream's own `serverInfo`): they describe the upstream's exchange with the proxy, not the
 * proxy's with its client, whose SDK stamps its own. `_meta` is dropped when nothing else is left.
 */
export function withoutEnvelope(result: JsonObject): JsonObject {
  const meta = result._meta;
  if (typeof meta !== "object" || meta === null) return result;
  const kept = Object.entries(meta as JsonObject).filter(([key]) => !key.startsWith(RESERVED_META_PREFIX));
  if (kept.length === Object.keys(meta).length) return result;
  const { _meta: _old, ...rest } = result;
  return kept.length > 0 ? { ...rest, _meta: Object.fromEntries(kept) } : rest;
}

/** What a 2026-07-28 `subscriptions/listen` filter asks for, from the upstream's capabilities. */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/**
 * The listen filter for an upstream: every `list_changed` its capabilities advertise, plus the
 * resource URIs subscribed to; `undefined` when there is nothing to listen for.
 */
export function listenFilter(
  capabilities: JsonObject | undefined,
  uris: Iterable<string>,
): ListenFilter | undefined {
  const listChanged = (key: string) =>
    (capabilities?.[key] as { listChanged?: unknown } | undefined)?.listChanged === true;
  const filter: ListenFilter = {};
  if (listChanged("tools")) filter.toolsListChanged = true;
  if (listChanged("prompts")) filter.promptsListChanged = true;
  if (listChanged("resources")) filter.resourcesListChanged = true;
  const subscribed = [...uris];
  if (subscribed.length > 0) filter.resourceSubscriptions = subscribed;
  return Object.keys(filter).length > 0 ? filter : undefined;
}
