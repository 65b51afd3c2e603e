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
import { z } from "zod";
import {
  type JsonObject,
  RpcError,
  type UpstreamPort,
  type UpstreamRequestOptions,
} from "../../proxy/types.js";
import {
  DEFAULT_CLIENT_INFO,
  DEFAULT_TIMEOUT_MS,
  streamBroke,
  type UpstreamConnectionOptions,
  upstreamErrors,
} from "./shared.js";

export type { UpstreamConnectionOptions, UpstreamTarget } from "./shared.js";

/** Accepts any result as it is (the SDK would otherwise drop unknown fields). */
const RAW_RESULT = z.looseObject({});
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
export class UpstreamConnection implements UpstreamPort {
  readonly name: string;
  #options: UpstreamConnectionOptions;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #inFlight = 0;
  #closed = false;
  #capabilities: JsonObject | undefined;

  constructor(options: UpstreamConnectionOptions) {
    this.name = options.name;
    this.#options = options;
  }

  get connected(): boolean {
    return this.#client !== undefined;
  }

  get capabilities(): JsonObject | undefined {
    return this.#capabilities;
  }

  /** The pid of a stdio upstream's process, when running. */
  pid: number | null = null;

  #transport(): Transport {
    const target = this.#options.target;
    if ("command" in target) {
      const transport = new StdioClientTransport({
        command: target.command,
        args: target.args ?? [],
        env: { ...getDefaultEnvironment(), ...(target.env ?? {}) },
        ...(target.cwd ? { cwd: target.cwd } : {}),
        stderr: this.#options.stderr ?? "inherit",
      });
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(target.url), {
      requestInit: { headers: { ...(target.headers ?? {}) } },
    });
  }

  async connect(): Promise<void> {
    await this.#ensure();
  }

  #ensure(): Promise<Client> {
    if (this.#closed) return Promise.reject(upstreamErrors.closing(this.name));
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<Client> {
    const client = new Client(this.#options.clientInfo ?? DEFAULT_CLIENT_INFO, {
      capabilities: {},
    });
    client.fallbackNotificationHandler = async (notification) => {
      this.#options.onNotification?.(notification.method, notification.params as JsonObject | undefined);
    };
    const transport = this.#transport();
    client.onclose = () => {
      if (this.#client === client) {
        this.#client = undefined;
        this.pid = null;
      }
    };
    client.onerror = (error) => {
      this.#options.onError?.(error);
      // A Streamable HTTP stream that breaks without resumption would leave the call hanging until
      // its timeout: close, so in-flight calls fail now and the next call reconnects.
      if (this.#inFlight > 0 && streamBroke(error)) {
        void client.close().catch(() => undefined);
      }
    };
    try {
      await client.connect(transport);
    } catch (cause) {
      await client.close().catch(() => undefined);
      throw upstreamErrors.cannotConnect(this.name, cause);
    }
    this.#capabilities = (client.getServerCapabilities() ?? {}) as JsonObject;
    this.pid = transport instanceof StdioClientTransport ? transport.pid : null;
    this.#client = client;
    return client;
  }

  async request(
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions = {},
  ): Promise<JsonObject> {
    const client = await this.#ensure();
    this.#inFlight++;
    try {
      const request = params === undefined ? { method } : { method, params };
      return (await client.request(request as never, RAW_RESULT, {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onprogress ? { onprogress: options.onprogress, resetTimeoutOnProgress: true } : {}),
        timeout: options.timeoutMs ?? this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      })) as JsonObject;
    } catch (error) {
      throw this.#translate(error, client, options.signal);
    } finally {
      this.#inFlight--;
    }
  }

  #translate(error: unknown, client: Client, signal: AbortSignal | undefined): Error {
    if (signal?.aborted) return upstreamErrors.cancelled();
    if (error instanceof McpError) {
      const lost = this.#client !== client;
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

  async notify(method: string, params?: JsonObject): Promise<void> {
    const client = this.#client;
    if (!client) return;
    await client
      .notification((params === undefined ? { method } : { method, params }) as never)
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client ?? (await this.#connecting?.catch(() => undefined));
    this.#client = undefined;
    if (client) {
      const transport = client.transport;
      if (transport instanceof StreamableHTTPClientTransport) {
        await transport.terminateSession().catch(() => undefined);
      }
      await client.close().catch(() => undefined);
    }
  }
}
