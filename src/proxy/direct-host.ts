/**
 * A host port with no SDK and no transport behind it: the handlers a piece mounts are called
 * directly, and its notifications go to a callback. The proxy attaches its `ResourceRegistry` to one
 * per scope, so the registry's documented behaviour (lists, reads, links, subscriptions,
 * notifications) serves the proxy's own resources on either SDK generation, at the cost of a
 * function call.
 */
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { McpRequestError, toMcpRequestError } from "../mcp/errors.js";
import {
  type HostCompletionProvider,
  type HostExtra,
  type HostMethod,
  type HostMethods,
  type HostRequestHandler,
  type HostToolHandle,
  MCP_HOST,
  type McpHost,
} from "../mcp/host.js";

/**
 * A {@link McpHost} for one fixed session: requests come in through {@link DirectHost.request} with
 * the caller's own request context (`extra`), so the pieces attached to it derive the caller's scope
 * with the same scope function as the code that called; without one, the session id is the only
 * context (a stdio-like, `"local"` transport).
 *
 * @example
 * ```ts
 * const host = new DirectHost("scope-1", (method, params) => console.log(method, params));
 * registry.attach(host, { scope: "scope-1" });
 * host.open();
 * const page = await host.request("resources/list", {});
 * ```
 */
export class DirectHost implements McpHost {
  readonly [MCP_HOST] = true as const;
  readonly kind = "direct";
  readonly server: object = {};
  readonly supportsTools = false;
  readonly #sessionId: string;
  readonly #onNotification: (method: string, params: Record<string, unknown> | undefined) => void;
  readonly #handlers = new Map<HostMethod, HostRequestHandler<HostMethod>>();
  readonly #closeListeners = new Set<() => void>();
  #open = false;

  constructor(
    sessionId: string,
    onNotification: (method: string, params: Record<string, unknown> | undefined) => void,
  ) {
    this.#sessionId = sessionId;
    this.#onNotification = onNotification;
  }

  canHandle(method: HostMethod | "completion/complete"): boolean {
    return method === "completion/complete" || !this.#handlers.has(method);
  }

  handle<M extends HostMethod>(method: M, handler: HostRequestHandler<M>): void {
    if (this.#handlers.has(method)) {
      throw new FileBridgeError("INVALID_INPUT", `the host already handles ${method}`);
    }
    this.#handlers.set(method, handler as unknown as HostRequestHandler<HostMethod>);
  }

  /** Completions are not asked for through a direct host. */
  addCompletion(_provider: HostCompletionProvider): void {}

  declareCapabilities(): void {}

  registerTool(): HostToolHandle {
    throw new FileBridgeError("INVALID_INPUT", "a direct host has no tools");
  }

  isConnected(): boolean {
    return this.#open;
  }

  connectionSessionId(): string | undefined {
    return this.#open ? this.#sessionId : undefined;
  }

  onClose(listener: () => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  async notifyResourceListChanged(): Promise<void> {
    if (this.#open) this.#onNotification("notifications/resources/list_changed", undefined);
  }

  async notifyResourceUpdated(uri: string): Promise<void> {
    if (this.#open) this.#onNotification("notifications/resources/updated", { uri });
  }

  /** Starts serving (what `connect` is to an SDK server): notifications flow from now on. */
  open(): void {
    this.#open = true;
  }

  /** Stops serving and tells the attached pieces. */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const listener of [...this.#closeListeners]) listener();
  }

  /**
   * Calls the handler of `method` with the caller's `extra` (its session, verified identity and
   * transport, as the scope functions read them). Throws what an SDK server would answer: `-32601` for
   * a method nobody handles, and the JSON-RPC error of whatever the handler throws (`code`,
   * `message`, `data`).
   */
  async request<M extends HostMethod>(
    method: M,
    params: HostMethods[M]["params"],
    extra: HostExtra = { sessionId: this.#sessionId },
    signal: AbortSignal = new AbortController().signal,
  ): Promise<HostMethods[M]["result"]> {
    const handler = this.#handlers.get(method) as HostRequestHandler<M> | undefined;
    if (!handler) throw new McpRequestError(-32601, `Method not found: ${method}`);
    try {
      return await handler(params, {
        sessionId: this.#sessionId,
        transport: "local",
        signal,
        extra,
      });
    } catch (error) {
      throw toMcpRequestError(error);
    }
  }
}
