/**
 * One connection to an upstream MCP server through the SDK v2 `Client` (`@modelcontextprotocol/client`
 * 2.x): a stdio command or a Streamable HTTP URL, with the same behaviour as `UpstreamConnection` (SDK
 * v1) — raw results, JSON-RPC errors with their code, message and data, reconnection on the next call
 * after a crash, timeouts reset by progress. Unlike SDK v1 it also reaches 2026-07-28-only servers:
 * it probes with `server/discover` and falls back to the 2025 `initialize` handshake. On a 2026-07-28
 * connection notifications arrive on a `subscriptions/listen` stream this class keeps open, and
 * `resources/subscribe` / `resources/unsubscribe` (which that protocol does not have) change what
 * the stream listens for.
 */
import {
  Client,
  type McpSubscription,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  type JsonObject,
  RPC,
  RpcError,
  type UpstreamPort,
  type UpstreamRequestOptions,
} from "../../types.js";
import { ClientConnection, transportFor } from "./client-connection.js";
import { directCallsPossible, directToolCall, RAW_RESULT } from "./direct-call.js";
import type { NodeFetchOptions } from "./node-fetch.js";
import {
  DEFAULT_CLIENT_INFO,
  listenFilter,
  type UpstreamConnectionOptions,
  upstreamErrors,
  withoutEnvelope,
  withoutSubscriptionId,
} from "./shared.js";

/** Options of {@link UpstreamConnectionV2}: those of `UpstreamConnection`, plus the protocol era. */
export interface UpstreamConnectionV2Options extends UpstreamConnectionOptions {
  /**
   * Which protocol generation to speak. `"auto"` probes with `server/discover` (2026-07-28) and falls
   * back to `initialize` (2025) for older servers; `"legacy"` speaks only 2025 (what SDK v1 does);
   * `"modern"` requires 2026-07-28 and fails to connect to anything else. @default "auto"
   */
  era?: "auto" | "legacy" | "modern";
}

/** The 2026-07-28 revision a `"modern"` connection pins. */
const MODERN_REVISION = "2026-07-28";
/** Longest wait for the `server/discover` probe (a silent stdio server is a 2025 one). */
const PROBE_TIMEOUT_MS = 30_000;

/** SDK errors that mean the connection is gone or unusable, not that the upstream answered. */
const CONNECTION_ERRORS = new Set<string>([
  SdkErrorCode.NotConnected,
  SdkErrorCode.ConnectionClosed,
  SdkErrorCode.SendFailed,
  SdkErrorCode.ClientHttpNotImplemented,
  SdkErrorCode.ClientHttpAuthentication,
  SdkErrorCode.ClientHttpForbidden,
  SdkErrorCode.ClientHttpUnexpectedContent,
  SdkErrorCode.ClientHttpFailedToOpenStream,
  SdkErrorCode.ClientHttpFailedToTerminateSession,
]);

/**
 * An {@link UpstreamPort} over the MCP SDK v2 client: the same options and behaviour as
 * `UpstreamConnection`, and it also reaches servers that speak only 2026-07-28.
 *
 * @example
 * ```ts
 * const upstream = new UpstreamConnectionV2({
 *   name: "files",
 *   target: { url: "https://files.example.com/mcp", headers: { authorization: "Bearer abc" } },
 *   onNotification: (method) => console.log("upstream says", method),
 * });
 * await upstream.connect();
 * console.log(upstream.protocolVersion); // "2026-07-28" or a 2025 revision
 * const tools = await upstream.request("tools/list", {});
 * ```
 */
export class UpstreamConnectionV2 extends ClientConnection<Client> {
  declare protected readonly options: UpstreamConnectionV2Options;
  /** The open `subscriptions/listen` stream of a 2026-07-28 connection. */
  #subscription: McpSubscription | undefined;
  /** Resource URIs subscribed to; on 2026-07-28 part of the listen filter (kept across reconnects). */
  #uris = new Set<string>();
  /** Whether the listen stream was already reopened once since the last call (no reopening loops). */
  #relistened = false;
  /** The listen stream of the client last forgotten, until `shutdown` closes it. */
  #retired: McpSubscription | undefined;
  /** The upstream's URL when plain `tools/call`s may go direct (see `directToolCalls`). */
  readonly #directUrl: URL | undefined;

  constructor(options: UpstreamConnectionV2Options) {
    super(options);
    const { target } = options;
    // (a URL that does not parse fails at connect, as before)
    const direct = "url" in target && options.directToolCalls !== false && URL.canParse(target.url);
    this.#directUrl = direct ? new URL(target.url) : undefined;
  }

  /** The protocol revision negotiated with the upstream (e.g. `"2026-07-28"`), once connected. */
  get protocolVersion(): string | undefined {
    return this.client?.getNegotiatedProtocolVersion();
  }

  /**
   * SDK v2's transport treats a JSON answer and a one-event SSE answer alike for every request but
   * `subscriptions/listen`, whose stream's end closes the subscription: that one streams as it is.
   */
  protected override fetchOptions(): NodeFetchOptions {
    return { oneEventAsJson: (body) => !body.includes('"subscriptions/listen"') };
  }

  #transport(): Transport {
    return transportFor<Transport>(
      this.options.target,
      this.options.stderr,
      {
        stdio: (parameters) => new StdioClientTransport(parameters),
        http: (url, init) => new StreamableHTTPClientTransport(url, init),
        defaultEnvironment: getDefaultEnvironment,
      },
      this.http,
    );
  }

  protected async open(): Promise<Client> {
    const era = this.options.era ?? "auto";
    const client = new Client(this.options.clientInfo ?? DEFAULT_CLIENT_INFO, {
      capabilities: {},
      versionNegotiation: {
        mode: era === "modern" ? { pin: MODERN_REVISION } : era,
        probe: { timeoutMs: Math.min(this.timeout(), PROBE_TIMEOUT_MS) },
      },
    });
    client.fallbackNotificationHandler = async (notification) => {
      this.options.onNotification?.(
        notification.method,
        withoutSubscriptionId(notification.params as JsonObject | undefined),
      );
    };
    const transport = this.#transport();
    await this.start(client, transport, () =>
      transport instanceof StdioClientTransport ? transport.pid : null,
    );
    this.#relistened = false;
    if (client.getProtocolEra() === "modern") {
      // Notifications are best effort: a server that refuses the stream still serves requests.
      await this.#listen(client).catch((error: unknown) => this.#reportListenFailure(error));
    }
    return client;
  }

  protected override forget(client: Client): void {
    if (this.client === client) {
      // kept for `shutdown`, which closes it before the session ends
      this.#retired = this.#subscription;
      this.#subscription = undefined;
    }
    super.forget(client);
  }

  /**
   * Opens the `subscriptions/listen` stream for what there is to hear (the `list_changed` the
   * upstream advertises, the subscribed resources), then closes the one it replaces.
   */
  async #listen(client: Client): Promise<void> {
    const previous = this.#subscription;
    const filter = listenFilter(this.serverCapabilities, this.#uris);
    // on failure the previous stream (if any) stays the current one
    const subscription = filter ? await client.listen(filter, { timeout: this.timeout() }) : undefined;
    if (this.client !== client) {
      await subscription?.close().catch(() => undefined);
      return;
    }
    this.#subscription = subscription;
    if (subscription) void subscription.closed.then((how) => this.#listenEnded(client, subscription, how));
    await previous?.close().catch(() => undefined);
  }

  /**
   * The listen stream ended without us closing it: reopen it once (a proxy in between may cut idle
   * streams); when that fails too, the upstream is gone and the next call reconnects.
   */
  #listenEnded(client: Client, subscription: McpSubscription, how: string): void {
    if (how === "local" || this.#subscription !== subscription || this.client !== client) return;
    this.#subscription = undefined;
    if (this.#relistened) {
      this.drop(client);
      return;
    }
    this.#relistened = true;
    this.#listen(client).catch((error: unknown) => {
      this.#reportListenFailure(error);
      this.drop(client);
    });
  }

  #reportListenFailure(error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    this.options.onError?.(
      new Error(`upstream "${this.name}": cannot listen for notifications: ${reason}`, { cause: error }),
    );
  }

  override async request(
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions = {},
  ): Promise<JsonObject> {
    this.#relistened = false;
    return await super.request(method, params, options);
  }

  protected async send(
    client: Client,
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions,
  ): Promise<JsonObject> {
    if (
      (method === "resources/subscribe" || method === "resources/unsubscribe") &&
      client.getProtocolEra() === "modern"
    ) {
      return await this.#subscribe(client, String(params?.uri), method === "resources/subscribe");
    }
    if (
      method === "tools/call" &&
      this.#directUrl !== undefined &&
      params !== undefined &&
      !options.onprogress &&
      client.getProtocolEra() === "modern" &&
      directCallsPossible(client, this.http)
    ) {
      const timeout = this.timeout(options);
      return await directToolCall(client, this.http, this.#directUrl, params, {
        signal: options.signal,
        timeout,
      });
    }
    const request = params === undefined ? { method } : { method, params };
    const result = (await client.request(request as never, RAW_RESULT, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onprogress ? { onprogress: options.onprogress, resetTimeoutOnProgress: true } : {}),
      timeout: this.timeout(options),
    })) as JsonObject;
    return withoutEnvelope(result);
  }

  /**
   * `resources/subscribe` on 2026-07-28: the URI joins (or leaves) the listen filter. An upstream
   * without the `resources.subscribe` capability answers -32601, as a 2025 one does.
   */
  async #subscribe(client: Client, uri: string, subscribe: boolean): Promise<JsonObject> {
    const resources = this.serverCapabilities?.resources as { subscribe?: unknown } | undefined;
    if (resources?.subscribe !== true) throw new RpcError(RPC.METHOD_NOT_FOUND, "Method not found");
    const had = this.#uris.has(uri);
    if (subscribe) this.#uris.add(uri);
    else this.#uris.delete(uri);
    if (had === subscribe) return {};
    try {
      await this.#listen(client);
    } catch (error) {
      if (subscribe) this.#uris.delete(uri);
      else this.#uris.add(uri);
      throw error;
    }
    return {};
  }

  protected translate(error: unknown, client: Client, signal: AbortSignal | undefined): Error {
    if (signal?.aborted) return upstreamErrors.cancelled();
    if (error instanceof RpcError) return error;
    if (error instanceof ProtocolError) return new RpcError(error.code, error.message, error.data);
    if (error instanceof SdkHttpError) {
      const session = (client.transport as StreamableHTTPClientTransport | undefined)?.sessionId;
      // A 2025 server forgot the session (restarted): the next call opens a new one.
      if (error.status === 404 && session !== undefined) {
        this.drop(client);
        return upstreamErrors.failed(this.name, error);
      }
      // A 2026-07-28 server answers some JSON-RPC errors with an HTTP error status: the body is the answer.
      const answer = jsonRpcError(error.data.text);
      if (answer) return new RpcError(answer.code, answer.message, answer.data);
    }
    if (error instanceof SdkError) {
      if (error.code === SdkErrorCode.RequestTimeout) return upstreamErrors.timedOut(this.name, error);
      if (error.code === SdkErrorCode.InvalidResult) return upstreamErrors.malformed(this.name);
      if (error.code === SdkErrorCode.MethodNotSupportedByProtocolVersion) {
        return new RpcError(RPC.METHOD_NOT_FOUND, error.message, error.data);
      }
      if (!CONNECTION_ERRORS.has(error.code))
        return new RpcError(RPC.INTERNAL_ERROR, error.message, error.data);
      const lost = this.client !== client || error.code === SdkErrorCode.ConnectionClosed;
      this.drop(client);
      return lost ? upstreamErrors.lostDuringCall(this.name, error) : upstreamErrors.failed(this.name, error);
    }
    // A network failure (fetch failed, a stream cut): the next call reconnects.
    this.drop(client);
    return upstreamErrors.failed(this.name, error);
  }

  protected async shutdown(client: Client): Promise<void> {
    const retired = this.#retired;
    this.#retired = undefined;
    await retired?.close().catch(() => undefined);
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client.close().catch(() => undefined);
  }
}

/** The `error` of a JSON-RPC error response in `text`, if that is what it is. */
function jsonRpcError(text: unknown): { code: number; message: string; data?: unknown } | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    const { code, message, data } = body.error ?? {};
    if (typeof code !== "number" || typeof message !== "string") return undefined;
    return data === undefined ? { code, message } : { code, message, data };
  } catch {
    return undefined;
  }
}
