import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { ResourceRegistry, type ResourceRegistryOptions } from "../../src/registry/resource-registry.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore } from "../../src/storage/types.js";
import { connectInMemory } from "../support/in-memory-client.js";

export interface Harness {
  store: FileStore;
  registry: ResourceRegistry;
  server: McpServer;
  client: Client;
  close(): Promise<void>;
}

/** A registry on an McpServer, connected to a real SDK Client over InMemoryTransport. */
export async function connect(
  options: Partial<ResourceRegistryOptions> = {},
  setup?: (server: McpServer, registry: ResourceRegistry) => void,
): Promise<Harness> {
  const store = options.store ?? memoryStore();
  const registry = new ResourceRegistry({ ...options, store });
  const server = new McpServer({ name: "registry-test", version: "1.0.0" });
  registry.attach(server);
  setup?.(server, registry);
  const connection = await connectInMemory(server);
  return {
    store,
    registry,
    server,
    client: connection.client,
    async close() {
      await connection.close();
      await registry.close();
    },
  };
}

export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** The JSON-RPC error of a rejected request, for asserting on `code` and `data`. */
export async function rpcError(
  promise: Promise<unknown>,
): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError)
      return { code: error.code, data: (error.data ?? {}) as Record<string, unknown> };
    throw error;
  }
  throw new Error("expected the request to fail");
}

/** Resolves with the next notification for which `take` returns true. */
export function waitFor<T>(
  subscribe: (listener: (value: T) => void) => void,
  take: (value: T) => boolean = () => true,
): Promise<T> {
  return new Promise((resolve) => {
    subscribe((value) => {
      if (take(value)) resolve(value);
    });
  });
}

export function errorCode(error: unknown): string | undefined {
  return (error as { code?: string } | undefined)?.code;
}

export interface NotificationLog {
  listChanged: number;
  updated: string[];
  /** Resolves once `predicate` holds (checked after every notification). */
  until(predicate: (log: NotificationLog) => boolean): Promise<void>;
}

/** Records resource notifications a client receives. */
export function recordNotifications(client: Client): NotificationLog {
  const waiters = new Set<() => void>();
  const log: NotificationLog = {
    listChanged: 0,
    updated: [],
    until(predicate) {
      if (predicate(log)) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => {
          if (predicate(log)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
      });
    },
  };
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    log.listChanged++;
    wake();
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    log.updated.push(notification.params.uri);
    wake();
  });
  return log;
}
