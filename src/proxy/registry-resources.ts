/**
 * The proxy's own resources (captured artifacts, uploads) next to the upstreams'. A
 * `ResourceRegistry` owns `resources/*` of the host it is attached to, so the proxy attaches it to a
 * {@link DirectHost} per scope and calls that host's handlers: the registry's public behaviour
 * (lists, reads, large-file links, subscriptions, notifications) stays exactly as documented, with
 * no SDK involved, so it serves a downstream on either SDK generation.
 */

import { isJsonRpcErrorLike } from "../mcp/errors.js";
import type { HostExtra, HostMethod, HostMethods } from "../mcp/host.js";
import type { ResourceRegistry } from "../registry/resource-registry.js";
import type { ScopeSource } from "../scope/scope.js";
import { DirectHost } from "./direct-host.js";
import type { JsonObject, LocalResources } from "./types.js";
import { RpcError } from "./types.js";

/**
 * {@link LocalResources} served by a `ResourceRegistry`. Give the registry the scope function the
 * core uses (`defaultScope` unless configured): each request reaches the registry with the caller's
 * own `extra`, so the registry derives the same scope the core did, by the one documented rule.
 *
 * @example
 * ```ts
 * const registry = new ResourceRegistry({ store, minter, scope: defaultScope });
 * const local = new RegistryResources(registry, (scope, method, params) => core.broadcast(method, params, scope));
 * ```
 */
export class RegistryResources implements LocalResources {
  #registry: ResourceRegistry;
  #onNotification: (scope: string, method: string, params: JsonObject | undefined) => void;
  #hosts = new Map<string, DirectHost>();

  constructor(
    registry: ResourceRegistry,
    onNotification: (scope: string, method: string, params: JsonObject | undefined) => void,
  ) {
    this.#registry = registry;
    this.#onNotification = onNotification;
  }

  owns(uri: string): boolean {
    return this.#registry.parseUri(uri) !== null;
  }

  #host(scope: string): DirectHost {
    let host = this.#hosts.get(scope);
    if (!host) {
      const created = new DirectHost(scope, (method, params) => this.#onNotification(scope, method, params));
      this.#registry.attach(created, { scope });
      created.open();
      this.#hosts.set(scope, created);
      host = created;
    }
    return host;
  }

  async #request<M extends HostMethod>(
    scope: string,
    method: M,
    params: HostMethods[M]["params"],
    extra: ScopeSource | undefined,
  ): Promise<JsonObject> {
    const host = this.#host(scope);
    try {
      return (await (extra === undefined
        ? host.request(method, params)
        : host.request(method, params, extra as HostExtra))) as unknown as JsonObject;
    } catch (error) {
      if (isJsonRpcErrorLike(error)) {
        throw new RpcError(error.code, error.message.replace(/^MCP error -?\d+: /, ""), error.data);
      }
      throw error;
    }
  }

  async list(scope: string, cursor: string | undefined, extra?: ScopeSource): Promise<JsonObject> {
    return await this.#request(scope, "resources/list", cursor === undefined ? {} : { cursor }, extra);
  }

  async templates(scope: string, extra?: ScopeSource): Promise<JsonObject[]> {
    const result = await this.#request(scope, "resources/templates/list", {}, extra);
    return (result.resourceTemplates as JsonObject[] | undefined) ?? [];
  }

  async read(scope: string, uri: string, extra?: ScopeSource): Promise<JsonObject> {
    return await this.#request(scope, "resources/read", { uri }, extra);
  }

  async subscribe(scope: string, uri: string, extra?: ScopeSource): Promise<void> {
    await this.#request(scope, "resources/subscribe", { uri }, extra);
  }

  async unsubscribe(scope: string, uri: string, extra?: ScopeSource): Promise<void> {
    await this.#request(scope, "resources/unsubscribe", { uri }, extra);
  }

  release(scope: string): void {
    const host = this.#hosts.get(scope);
    if (!host) return;
    this.#hosts.delete(scope);
    host.close();
    this.#registry.detach(host);
  }

  async close(): Promise<void> {
    const hosts = [...this.#hosts.values()];
    this.#hosts.clear();
    for (const host of hosts) {
      host.close();
      this.#registry.detach(host);
    }
  }
}
