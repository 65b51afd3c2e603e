/**
 * What the two upstream connections (SDK v1 and SDK v2) share beyond pure helpers: the life of one
 * client — connect once (concurrent callers share the attempt), count calls in flight, translate
 * every failure, forget a client that went away so the next call reconnects, close. No SDK import:
 * each subclass brings its generation's client.
 */
import type { JsonObject, UpstreamPort, UpstreamRequestOptions } from "../../types.js";
import { type NodeFetch, type NodeFetchOptions, nodeFetch } from "./node-fetch.js";
import {
  DEFAULT_INITIALIZE_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  INITIALIZE_NOTICE_MS,
  streamBroke,
  type UpstreamConnectionOptions,
  type UpstreamTarget,
  upstreamErrors,
} from "./shared.js";

/** What the base needs of an SDK client (either generation's `Client`). */
export interface UpstreamClient {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  connect(transport: never): Promise<void>;
  getServerCapabilities(): unknown;
  notification(notification: { method: string; params?: JsonObject }): Promise<void>;
  close(): Promise<void>;
}

/** The parameters of a stdio upstream, as both SDKs' `StdioClientTransport` take them. */
export function stdioParameters(
  target: Extract<UpstreamTarget, { command: string }>,
  stderr: UpstreamConnectionOptions["stderr"],
  defaultEnvironment: Record<string, string>,
): {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  stderr: "inherit" | "pipe" | "ignore";
} {
  return {
    command: target.command,
    args: target.args ?? [],
    env: { ...defaultEnvironment, ...(target.env ?? {}) },
    ...(target.cwd ? { cwd: target.cwd } : {}),
    stderr: stderr ?? "inherit",
  };
}

/**
 * The transport to an upstream, built with one SDK generation's classes: its stdio transport for a
 * command (the default environment plus the target's), its Streamable HTTP transport (with the
 * target's headers and the connection's `node:http` fetch, see {@link nodeFetch}) for a URL.
 */
export function transportFor<T>(
  target: UpstreamTarget,
  stderr: UpstreamConnectionOptions["stderr"],
  sdk: {
    stdio(parameters: ReturnType<typeof stdioParameters>): T;
    http(url: URL, init: { requestInit: { headers: Record<string, string> }; fetch: typeof fetch }): T;
    defaultEnvironment(): Record<string, string>;
  },
  http: NodeFetch,
): T {
  if ("command" in target) return sdk.stdio(stdioParameters(target, stderr, sdk.defaultEnvironment()));
  return sdk.http(new URL(target.url), {
    requestInit: { headers: { ...(target.headers ?? {}) } },
    fetch: http.fetch,
  });
}

/** What `deliverInOrder` needs of a transport: the handler the client set when it connected. */
interface MessageSource {
  onmessage?: ((message: unknown, extra?: unknown) => void) | undefined;
}

/**
 * Both SDK generations hand a notification to its handler one microtask after it arrives but settle
 * a response at once, so when one read brings an upstream's progress and its result together (a
 * stdio chunk often does), the result settles first and the progress is dropped as "unknown token".
 * Each message is handed on only after the previous one's handlers were queued: the upstream's
 * order holds.
 */
function deliverInOrder(transport: MessageSource, onError: (error: Error) => void): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  let previous: Promise<void> = Promise.resolve();
  transport.onmessage = (message, extra) => {
    previous = previous
      .then(() => deliver.call(transport, message, extra))
      .catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))));
  };
}

/** The base of `UpstreamConnection` (SDK v1) and `UpstreamConnectionV2` (SDK v2). */
export abstract class ClientConnection<C extends UpstreamClient> implements UpstreamPort {
  readonly name: string;
  /** The pid of a stdio upstream's process, when running. */
  pid: number | null = null;
  protected readonly options: UpstreamConnectionOptions;
  /** The connected client, if any. */
  protected client: C | undefined;
  /** Calls waiting for an answer now. */
  protected inFlight = 0;
  protected serverCapabilities: JsonObject | undefined;
  /** The `fetch` of a Streamable HTTP upstream's transports: its keep-alive sockets live as long as this. */
  protected readonly http: NodeFetch;
  #connecting: Promise<C> | undefined;
  #closed = false;

  constructor(options: UpstreamConnectionOptions) {
    this.name = options.name;
    this.options = options;
    this.http = nodeFetch(this.fetchOptions());
  }

  /** How this generation's transport may be answered (see {@link nodeFetch}). */
  protected fetchOptions(): NodeFetchOptions {
    return {};
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  get capabilities(): JsonObject | undefined {
    return this.serverCapabilities;
  }

  async connect(): Promise<void> {
    await this.ensure();
  }

  /** The connected client: the current one, the attempt under way, or a new attempt. */
  protected ensure(): Promise<C> {
    if (this.#closed) return Promise.reject(upstreamErrors.closing(this.name));
    if (this.client) return Promise.resolve(this.client);
    this.#connecting ??= this.open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /** Connects a new client and makes it the current one (`this.client`, `pid`, capabilities). */
  protected abstract open(): Promise<C>;

  /** Sends one request on `client`: the raw result. */
  protected abstract send(
    client: C,
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions,
  ): Promise<JsonObject>;

  /** The error a failed request is reported as (`RpcError`, `UpstreamUnavailableError`). */
  protected abstract translate(error: unknown, client: C, signal: AbortSignal | undefined): Error;

  /** Closes what a closing connection holds besides the client (streams, sessions), then the client. */
  protected abstract shutdown(client: C): Promise<void>;

  /**
   * Connects `client` over `transport` and makes it the current one: a client that closes is
   * forgotten (the next call reconnects), and one whose Streamable HTTP stream breaks under a call is
   * dropped, so the call fails now instead of at its timeout.
   */
  protected async start(client: C, transport: unknown, pidOf: () => number | null): Promise<void> {
    client.onclose = () => this.forget(client);
    client.onerror = (error) => {
      this.options.onError?.(error);
      if (this.inFlight > 0 && streamBroke(error)) this.drop(client);
    };
    const limit = this.options.initializeTimeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const notice =
      limit > INITIALIZE_NOTICE_MS
        ? setTimeout(() => {
            this.options.onError?.(
              upstreamErrors.slowInitialize(this.name, this.options.target, INITIALIZE_NOTICE_MS),
            );
          }, INITIALIZE_NOTICE_MS)
        : undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.options.onError?.(upstreamErrors.noInitializeLog(this.name, this.options.target, limit));
        reject(upstreamErrors.noInitialize(this.name, limit));
      }, limit);
    });
    try {
      // An upstream that never answers `initialize` is named now, not at the SDK's request timeout.
      await Promise.race([client.connect(transport as never), silent]);
      deliverInOrder(transport as MessageSource, (error) => this.options.onError?.(error));
    } catch (cause) {
      await client.close().catch(() => undefined);
      if (cause instanceof Error && cause.message.includes("did not answer initialize")) throw cause;
      throw upstreamErrors.cannotConnect(this.name, cause);
    } finally {
      clearTimeout(timer);
      clearTimeout(notice);
    }
    this.serverCapabilities = (client.getServerCapabilities() ?? {}) as JsonObject;
    this.pid = pidOf();
    this.client = client;
  }

  /** A request's timeout: its own, else the connection's, else 10 minutes. */
  protected timeout(options?: UpstreamRequestOptions): number {
    return options?.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Forgets `client` if it is the current one (it closed, or is being dropped). */
  protected forget(client: C): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.pid = null;
  }

  /** Closes `client` so the next call reconnects (in-flight calls on it fail now). */
  protected drop(client: C): void {
    this.forget(client);
    void client.close().catch(() => undefined);
  }

  async request(
    method: string,
    params: JsonObject | undefined,
    options: UpstreamRequestOptions = {},
  ): Promise<JsonObject> {
    // the connected client without a promise when there is one (the pass-through path, issue 43)
    const client = !this.#closed && this.client ? this.client : await this.ensure();
    this.inFlight++;
    try {
      return await this.send(client, method, params, options);
    } catch (error) {
      throw this.translate(error, client, options.signal);
    } finally {
      this.inFlight--;
    }
  }

  async notify(method: string, params?: JsonObject): Promise<void> {
    const client = this.client;
    if (!client) return;
    await client.notification(params === undefined ? { method } : { method, params }).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.client ?? (await this.#connecting?.catch(() => undefined));
    if (client) {
      this.forget(client);
      await this.shutdown(client);
    }
    this.http.close();
  }
}
