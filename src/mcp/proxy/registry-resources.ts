/**
 * The proxy's own resources (captured artifacts, uploads) next to the upstreams'. A
 * `ResourceRegistry` owns `resources/*` of the server it is attached to, so the proxy attaches it to
 * a private in-memory server per scope and asks that server through an SDK client: the registry's
 * public behaviour (lists, reads, large-file links, subscriptions, notifications) stays exactly as
 * documented.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { JsonObject, LocalResources } from "../../proxy/types.js";
import { RpcError } from "../../proxy/types.js";
import type { ResourceRegistry } from "../../registry/resource-registry.js";

const RAW = z.looseObject({});

interface Pair {
  client: Client;
  server: Server;
}

/**
 * {@link LocalResources} served by a `ResourceRegistry`. Give the registry
 * `scope: (extra) => extra.sessionId ?? "default"`: each private server's session id is the scope.
 *
 * @example
 * ```ts
 * const registry = new ResourceRegistry({ store, minter, scope: (extra) => extra.sessionId ?? "default" });
 * const local = new RegistryResources(registry, (scope, method, params) => core.broadcast(method, params, scope));
 * ```
 */
export class RegistryResources implements LocalResources {
  #registry: ResourceRegistry;
  #onNotification: (scope: string, method: string, params: JsonObject | undefined) => void;
  #pairs = new Map<string, Promise<Pair>>();

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

  #pair(scope: string): Promise<Pair> {
    let pair = this.#pairs.get(scope);
    if (!pair) {
      pair = (async () => {
        const server = new Server(
          { name: "mcp-file-bridge-proxy-files", version: "0.1.0" },
          { capabilities: {} },
        );
        this.#registry.attach(server, { scope });
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        serverSide.sessionId = scope;
        const client = new Client({ name: "mcp-file-bridge-proxy", version: "0.1.0" });
        client.fallbackNotificationHandler = async (notification) => {
          this.#onNotification(scope, notification.method, notification.params as JsonObject | undefined);
        };
        await server.connect(serverSide);
        await client.connect(clientSide);
        return { client, server };
      })();
      pair.catch(() => this.#pairs.delete(scope));
      this.#pairs.set(scope, pair);
    }
    return pair;
  }

  async #request(scope: string, method: string, params: JsonObject): Promise<JsonObject> {
    const { client } = await this.#pair(scope);
    try {
      return (await client.request({ method, params } as never, RAW)) as JsonObject;
    } catch (error) {
      if (error instanceof McpError) {
        throw new RpcError(error.code, error.message.replace(/^MCP error -?\d+: /, ""), error.data);
      }
      throw error;
    }
  }

  async list(scope: string, cursor: string | undefined): Promise<JsonObject> {
    return await this.#request(scope, "resources/list", cursor === undefined ? {} : { cursor });
  }

  async templates(scope: string): Promise<JsonObject[]> {
    const result = await this.#request(scope, "resources/templates/list", {});
    return (result.resourceTemplates as JsonObject[] | undefined) ?? [];
  }

  async read(scope: string, uri: string): Promise<JsonObject> {
    return await this.#request(scope, "resources/read", { uri });
  }

  async subscribe(scope: string, uri: string): Promise<void> {
    await this.#request(scope, "resources/subscribe", { uri });
  }

  async unsubscribe(scope: string, uri: string): Promise<void> {
    await this.#request(scope, "resources/unsubscribe", { uri });
  }

  async close(): Promise<void> {
    const pairs = [...this.#pairs.values()];
    this.#pairs.clear();
    await Promise.allSettled(
      pairs.map(async (pending) => {
        const { client, server } = await pending;
        await client.close();
        await server.close();
      }),
    );
  }
}
