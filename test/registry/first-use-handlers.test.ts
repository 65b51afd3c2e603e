/**
 * `ResourceRegistry`'s handlers and notifications run its work (registry-work.ts with
 * handler-work.ts and notifier-work.ts), loaded on first use (issue 39): `attach` mounts without
 * loading it and throws its errors synchronously, two first requests share one load, and a load
 * that fails is that request's error while the next request loads again (and changes are then
 * notified).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError, ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { memoryStore } from "../../src/storage/memory-store.js";
import { countLoads } from "../support/first-use.js";
import { connectInMemory } from "../support/in-memory-client.js";
import { bytes, errorCode } from "./support.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `ResourceRegistry` of a fresh module graph whose work load is counted (failing the first time with `failFirst`). */
async function freshRegistry(failFirst = false) {
  const { loads } = countLoads("src/registry/registry-work.js", { failFirst });
  const { ResourceRegistry } = await import("../../src/registry/resource-registry.js");
  const registry = new ResourceRegistry({ store: memoryStore(), notifyDelayMs: 1 });
  cleanups.push(() => registry.close());
  return { registry, attempts: () => loads.attempts };
}

async function connect(server: McpServer): Promise<Client> {
  const { client, close } = await connectInMemory(server, { name: "first-use", version: "1.0.0" });
  cleanups.push(close);
  return client;
}

describe("the registry's handlers and notifications, loaded on first use", () => {
  it("attach() mounts without loading the work; its errors stay synchronous", async () => {
    const { registry, attempts } = await freshRegistry();
    const server = new McpServer({ name: "s", version: "1.0.0" });
    registry.attach(server);
    registry.attach(server, { scope: "default" }); // again: only adds the scope
    let thrown: unknown;
    try {
      registry.attach(new McpServer({ name: "t", version: "1.0.0" }), { scope: "" });
    } catch (error) {
      thrown = error;
    }
    expect(errorCode(thrown)).toBe("INVALID_INPUT");
    expect(() => registry.publishTo({} as never)).toThrow(/publishTo\(handler\)/);
    await connect(server);
    expect(() => registry.attach(server as never)).not.toThrow(); // attached already: nothing to do
    const late = new McpServer({ name: "u", version: "1.0.0" });
    await connect(late);
    expect(() => registry.attach(late)).toThrow(/already connected/);
    await registry.close(); // nothing pending: nothing to load
    expect(attempts()).toBe(0);
  });

  it("two first requests share one load", async () => {
    const { registry, attempts } = await freshRegistry();
    const server = new McpServer({ name: "s", version: "1.0.0" });
    registry.attach(server);
    const client = await connect(server);
    const [list, templates] = await Promise.all([client.listResources(), client.listResourceTemplates()]);
    expect(list.resources).toEqual([]);
    expect(templates.resourceTemplates.map((t) => t.name)).toEqual(["uploads", "artifacts"]);
    expect(attempts()).toBe(1);
  });

  it("a failed load fails that request; the next one loads again, and changes are notified", async () => {
    const { registry, attempts } = await freshRegistry(true);
    const server = new McpServer({ name: "s", version: "1.0.0" });
    registry.attach(server);
    const client = await connect(server);
    const error = await client.listResources().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32603);
    expect(attempts()).toBe(1);
    expect((await client.listResources()).resources).toEqual([]);
    expect(attempts()).toBe(2);
    const changed = new Promise<void>((resolve) => {
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve());
    });
    const file = await registry.add(bytes("hello"), { scope: "default", name: "a.txt" });
    await changed;
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([registry.uriFor(file)]);
    expect(attempts()).toBe(2);
  });
});
