/**
 * One connection to an upstream MCP server through the SDK `Client`: a stdio command or a
 * Streamable HTTP URL. Requests go out and results come back raw (no schema stripping), JSON-RPC
 * errors keep their code, message and data, and a connection that drops is reopened on the next call.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type JsonObject, RpcError, type UpstreamRequestOptions } from "../../types.js";
import { ClientConnection, transportFor } from "./client-connection.js";
import { directCallsPossibleV1, directToolCallV1, RAW_RESULT } from "./direct-call-v1.js";
import type { NodeFetchOptions } from "./node-fetch.js";
import { DEFAULT_CLIENT_INFO, type UpstreamConnectionOptions, upstreamErrors } from "./shared.js";

export type { UpstreamConnectionOptions, UpstreamTarget } from "./shared.js";

const MCP_PREFIX = /^MCP error -?\d+: /;

/** The message the upstream sent, without the SDK's `MCP error <code>: ` prefix. */
function originalMessage(error: McpError): string {
  return error.message.replace(MCP_PREFIX, "");
}

/**
 * An {@link UpstreamPort} over the MCP SDK client.
 *
 * @example
 * ```ts
 * const upstream = new UpstreamConnection({ name: "files", target: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] } });
 * await upstream.connect();
 * const tools = await upstream.request("tools/list", {});
 * ```
 */
export class UpstreamConnection extends ClientConnection<Client> {
  /** The upstream's URL when plain `tools/call`s may go direct (see `directToolCalls`). */
  readonly #directUrl: URL | undefined;

  constructor(options: UpstreamConnectionOptions) {
    super(options);
    const { target } = options;
    // (a URL that does not parse fails at connect, as before)
    const direct = "url" in target && options.directToolCalls !== false && URL.canParse(target.url);
    this.#directUrl = direct ? new URL(target.url) : undefined;
  }

  /** SDK v1's transport treats a JSON answer and a one-event SSE answer alike: the cheaper one it is. */
  protected override fetchOptions(): NodeFetchOptions {
    return { oneEventAsJson: true };
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
    const client = new Client(this.options.clientInfo ?? DEFAULT_CLIENT_INFO, { capabilities: {} });
    client.fallbackNotificationHandler = async (notification) => {
      this.options.onNotification?.(notification.method, notification.params as JsonObject | undefined);
    };
    const transport = this.#transport();
    await this.start(client, transport, () =>
      transport instanceof StdioClientTransport ? transport.pid : null,
    );
    return client;
  }

  protected async send(
    client: Client,
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions,
  ): Promise<JsonObject> {
    if (
      method === "tools/call" &&
      this.#directUrl !== undefined &&
      params !== undefined &&
      !options.onprogress &&
      directCallsPossibleV1(client, this.http)
    ) {
      return await directToolCallV1(client, this.http, this.#directUrl, params, {
        signal: options.signal,
        timeout: this.timeout(options),
      });
    }
    const request = params === undefined ? { method } : { method, params };
    return (await client.request(request as never, RAW_RESULT, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onprogress ? { onprogress: options.onprogress, resetTimeoutOnProgress: true } : {}),
      timeout: this.timeout(options),
    })) as JsonObject;
  }

  protected translate(error: unknown, client: Client, signal: AbortSignal | undefined): Error {
    if (signal?.aborted) return upstreamErrors.cancelled();
    if (error instanceof McpError) {
      const lost = this.client !== client;
      if (error.code === ErrorCode.ConnectionClosed && lost) {
        return upstreamErrors.lostDuringCall(this.name, error);
      }
      if (error.code === ErrorCode.RequestTimeout && /timed out/i.test(error.message)) {
        return upstreamErrors.timedOut(this.name, error);
      }
      return new RpcError(error.code, originalMessage(error), error.data);
    }
    if (error instanceof Error && error.name === "ZodError") {
      return upstreamErrors.malformed(this.name);
    }
    return upstreamErrors.failed(this.name, error);
  }

  protected async shutdown(client: Client): Promise<void> {
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client.close().catch(() => undefined);
  }
}
