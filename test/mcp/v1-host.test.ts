import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridgeError } from "../../src/errors/file-bridge-error.js";
import { McpRequestError } from "../../src/mcp/errors.js";
import {
  type HostCompletionProvider,
  type HostRequestContext,
  isMcpHost,
  type McpHost,
} from "../../src/mcp/host.js";
import { toHost } from "../../src/mcp/to-host.js";
import { connectInMemory } from "../support/in-memory-client.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(server: McpServer | Server): Promise<Client> {
  const { client, close } = await connectInMemory(server, { name: "host-test", version: "1.0.0" });
  cleanups.push(close);
  return client;
}

async function rpcError(promise: Promise<unknown>): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError)
      return { code: error.code, data: (error.data ?? {}) as Record<string, unknown> };
    throw error;
  }
  throw new Error("expected the request to fail");
}

const TEMPLATE = "test://files/{name}";

/** A completion provider for TEMPLATE that answers with the caller's transport kind and the value. */
function provider(seen: HostRequestContext[] = []): HostCompletionProvider {
  return {
    handles: (ref) => ref.type === "ref/resource" && ref.uri === TEMPLATE,
    complete: async ({ argument }, ctx) => {
      seen.push(ctx);
      return { completion: { values: [`${argument.value}-${ctx.transport}`], total: 1, hasMore: false } };
    },
  };
}

function greetPrompt(server: McpServer): void {
  server.registerPrompt(
    "greet",
    {
      argsSchema: {
        who: completable(z.string(), (value) => ["alice", "bob"].filter((n) => n.startsWith(value))),
      },
    },
    ({ who }) => ({ messages: [{ role: "user", content: { type: "text", text: `hi ${who}` } }] }),
  );
}

describe("toHost", () => {
  it("gives an McpServer and its low-level server the same host, and passes a host through", () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    const host = toHost(server);
    expect(isMcpHost(host)).toBe(true);
    expect(host.kind).toBe("sdk-v1");
    expect(toHost(server.server)).toBe(host);
    expect(toHost(host)).toBe(host);
    expect(host.server).toBe(server.server);
    expect(host.supportsTools).toBe(true);
  });

  it("knows a low-level Server has no tools, and refuses what is no server", () => {
    const low = new Server({ name: "low", version: "1.0.0" }, { capabilities: {} });
    const host = toHost(low);
    expect(host.supportsTools).toBe(false);
    expect(() => host.registerTool({ name: "t", handler: async () => ({ content: [] }) })).toThrowError(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    for (const bad of [{}, { setRequestHandler: 1 }, { server: {}, registerTool: () => {} }]) {
      expect(() => toHost(bad as never)).toThrowError(expect.objectContaining({ code: "INVALID_INPUT" }));
    }
  });
});

describe("v1 host: tools", () => {
  it("registers a tool whose handler gets the validated arguments and a local context", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    const host = toHost(server);
    const seen: HostRequestContext[] = [];
    const handle = host.registerTool({
      name: "echo",
      title: "Echo",
      description: "Echoes its text",
      inputSchema: { text: z.string().max(10) },
      annotations: { readOnlyHint: true },
      handler: async (args, ctx) => {
        seen.push(ctx);
        return { content: [{ type: "text", text: `echo ${String(args.text)}` }] };
      },
    });
    host.registerTool({
      name: "ping",
      handler: async (args) => ({ content: [{ type: "text", text: `args ${JSON.stringify(args)}` }] }),
    });
    const client = await connect(server);

    const { tools } = await client.listTools();
    const echo = tools.find((t) => t.name === "echo");
    expect(echo).toMatchObject({
      title: "Echo",
      description: "Echoes its text",
      annotations: { readOnlyHint: true },
    });
    expect(echo?.inputSchema.properties).toHaveProperty("text");

    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(result.content).toEqual([{ type: "text", text: "echo hi" }]);
    expect(seen[0]).toMatchObject({ transport: "local" });
    expect(seen[0]?.sessionId).toBeUndefined();
    expect(seen[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(typeof seen[0]?.extra.sendNotification).toBe("function"); // the SDK's own extra

    const invalid = await client.callTool({ name: "echo", arguments: { text: "far too long text" } });
    expect(invalid.isError).toBe(true);
    expect((await client.callTool({ name: "ping", arguments: {} })).content).toEqual([
      { type: "text", text: "args {}" },
    ]);

    handle.disable();
    expect(handle.enabled).toBe(false);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["ping"]);
  });
});

describe("v1 host: resource handlers", () => {
  function mountAll(host: McpHost): void {
    host.declareCapabilities({ resources: { subscribe: true, listChanged: true } });
    host.handle("resources/list", async ({ cursor }) =>
      cursor === undefined
        ? { resources: [{ uri: "test://files/a", name: "a" }], nextCursor: "p2" }
        : { resources: [{ uri: "test://files/b", name: `b after ${cursor}` }] },
    );
    host.handle("resources/templates/list", async () => ({
      resourceTemplates: [{ name: "files", uriTemplate: TEMPLATE }],
    }));
    host.handle("resources/read", async ({ uri }) => {
      if (uri === "test://files/a") return { contents: [{ uri, mimeType: "text/plain", text: "A" }] };
      if (uri === "test://files/secret") throw new Error("disk path /var/secret exploded");
      if (uri === "test://files/rpc") throw new McpRequestError(-32002, "custom", { uri });
      throw new FileBridgeError("NOT_FOUND", `resource ${uri} not found`, { data: { uri } });
    });
    host.handle("resources/subscribe", async () => ({}));
    host.handle("resources/unsubscribe", async () => ({}));
  }

  it("mounts list (with cursors), templates, read, subscribe and unsubscribe", async () => {
    const low = new Server({ name: "low", version: "1.0.0" }, { capabilities: {} });
    const host = toHost(low);
    expect(host.canHandle("resources/list")).toBe(true);
    mountAll(host);
    expect(host.canHandle("resources/list")).toBe(false);
    expect(() => host.handle("resources/list", async () => ({ resources: [] }))).toThrow();
    const client = await connect(low);

    expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: true });
    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(["test://files/a"]);
    const second = await client.listResources({ cursor: first.nextCursor as string });
    expect(second.resources[0]?.name).toBe("b after p2");
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { name: "files", uriTemplate: TEMPLATE },
    ]);
    expect((await client.readResource({ uri: "test://files/a" })).contents).toEqual([
      { uri: "test://files/a", mimeType: "text/plain", text: "A" },
    ]);
    expect(await client.subscribeResource({ uri: "test://files/a" })).toEqual({});
    expect(await client.unsubscribeResource({ uri: "test://files/a" })).toEqual({});
  });

  it("turns what a handler throws into JSON-RPC errors", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    mountAll(toHost(server));
    const client = await connect(server);
    const missing = await rpcError(client.readResource({ uri: "test://files/nope" }));
    expect(missing).toEqual({ code: -32602, data: { uri: "test://files/nope", code: "NOT_FOUND" } });
    const internal = await rpcError(client.readResource({ uri: "test://files/secret" }));
    expect(internal).toEqual({ code: -32603, data: { code: "STORAGE_ERROR" } });
    try {
      await client.readResource({ uri: "test://files/secret" });
    } catch (error) {
      expect(String((error as Error).message)).not.toContain("/var/secret");
    }
    expect(await rpcError(client.readResource({ uri: "test://files/rpc" }))).toEqual({
      code: -32002,
      data: { uri: "test://files/rpc" },
    });
  });
});

describe("v1 host: notifications and connection", () => {
  it("sends list_changed and updated, knows the connection, and reports its close", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    const host = toHost(server);
    host.declareCapabilities({ resources: { subscribe: true, listChanged: true } });
    host.handle("resources/list", async () => ({ resources: [] }));
    let closed = 0;
    const stop = host.onClose(() => closed++);
    let closedToo = 0;
    host.onClose(() => closedToo++);
    expect(host.isConnected()).toBe(false);
    const client = await connect(server);
    expect(host.isConnected()).toBe(true);
    expect(host.connectionSessionId()).toBeUndefined();

    const received: string[] = [];
    const done = new Promise<void>((resolve) => {
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        received.push("list_changed");
      });
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        received.push(`updated ${n.params.uri}`);
        resolve();
      });
    });
    await host.notifyResourceListChanged();
    await host.notifyResourceUpdated("test://files/a");
    await done;
    expect(received).toEqual(["list_changed", "updated test://files/a"]);

    stop();
    await client.close();
    await server.close();
    expect(host.isConnected()).toBe(false);
    expect(closed).toBe(0);
    expect(closedToo).toBe(1);
  });
});

describe("v1 host: completion shared with an McpServer's prompts", () => {
  it("answers its own references and leaves prompts to an McpServer set up first", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    greetPrompt(server);
    toHost(server).addCompletion(provider());
    const client = await connect(server);
    const prompt = await client.complete({
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "who", value: "a" },
    });
    expect(prompt.completion.values).toEqual(["alice"]);
    const file = await client.complete({
      ref: { type: "ref/resource", uri: TEMPLATE },
      argument: { name: "name", value: "x" },
    });
    expect(file.completion.values).toEqual(["x-local"]);
  });

  it("works the same when the prompt is registered after the provider", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    toHost(server).addCompletion(provider());
    greetPrompt(server);
    const client = await connect(server);
    const prompt = await client.complete({
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "who", value: "b" },
    });
    expect(prompt.completion.values).toEqual(["bob"]);
    const file = await client.complete({
      ref: { type: "ref/resource", uri: TEMPLATE },
      argument: { name: "name", value: "y" },
    });
    expect(file.completion.values).toEqual(["y-local"]);
    // A template the McpServer does not know fails as it always did.
    const unknown = await rpcError(
      client.complete({
        ref: { type: "ref/resource", uri: "other://{x}" },
        argument: { name: "x", value: "" },
      }),
    );
    expect(unknown.code).toBe(-32602);
  });

  it("answers references nobody claims with an empty completion on a low-level Server", async () => {
    const low = new Server({ name: "low", version: "1.0.0" }, { capabilities: {} });
    toHost(low).addCompletion(provider());
    const client = await connect(low);
    expect(client.getServerCapabilities()?.completions).toEqual({});
    const other = await client.complete({
      ref: { type: "ref/prompt", name: "nope" },
      argument: { name: "a", value: "" },
    });
    expect(other.completion).toEqual({ values: [], hasMore: false });
    const mine = await client.complete({
      ref: { type: "ref/resource", uri: TEMPLATE },
      argument: { name: "name", value: "z" },
    });
    expect(mine.completion.values).toEqual(["z-local"]);
    // Methods nobody handles still answer "method not found".
    const unknown = await rpcError(client.request({ method: "prompts/list" }, z.object({}).passthrough()));
    expect(unknown.code).toBe(-32601);
  });

  it("keeps an McpServer's completion for an McpServer with no completable argument", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    toHost(server).addCompletion(provider());
    const client = await connect(server);
    const unknown = await rpcError(
      client.complete({
        ref: { type: "ref/resource", uri: "other://{x}" },
        argument: { name: "x", value: "" },
      }),
    );
    expect(unknown.code).toBe(-32602);
    const mine = await client.complete({
      ref: { type: "ref/resource", uri: TEMPLATE },
      argument: { name: "name", value: "q" },
    });
    expect(mine.completion.values).toEqual(["q-local"]);
  });
});

describe("v1 host: request context over Streamable HTTP", () => {
  it("says http, carries the session id and headers", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    const host = toHost(server);
    const seen: HostRequestContext[] = [];
    host.registerTool({
      name: "who",
      handler: async (_args, ctx) => {
        seen.push(ctx);
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const completions: HostRequestContext[] = [];
    host.addCompletion(provider(completions));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => "session-1" });
    await server.connect(transport);
    const http = createServer((req, res) => {
      transport.handleRequest(req, res).catch(() => res.writeHead(500).end());
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const client = new Client({ name: "http-client", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
        requestInit: { headers: { "x-chat-id": "chat-7" } },
      }),
    );
    cleanups.push(async () => {
      await client.close();
      await server.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    });

    await client.callTool({ name: "who", arguments: {} });
    expect(seen[0]).toMatchObject({ transport: "http", sessionId: "session-1" });
    expect(seen[0]?.headers?.["x-chat-id"]).toBe("chat-7");
    expect(host.connectionSessionId()).toBe("session-1");
    const file = await client.complete({
      ref: { type: "ref/resource", uri: TEMPLATE },
      argument: { name: "name", value: "h" },
    });
    expect(file.completion.values).toEqual(["h-http"]);
    expect(completions[0]?.sessionId).toBe("session-1");
  });

  it("normalizes verified auth info, subject included", async () => {
    const server = new McpServer({ name: "s", version: "1.0.0" });
    const seen: HostRequestContext[] = [];
    toHost(server).registerTool({
      name: "me",
      handler: async (_args, ctx) => {
        seen.push(ctx);
        return { content: [] };
      },
    });
    const client = new Client({ name: "c", version: "1.0.0" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    // InMemoryTransport carries authInfo given to send(); a real client cannot set it, so send directly.
    const reply = new Promise<unknown>((resolve) => {
      const previous = a.onmessage;
      a.onmessage = (message) => {
        if ("id" in message && message.id === 900) resolve(message);
        else previous?.(message);
      };
    });
    await a.send(
      { jsonrpc: "2.0", id: 900, method: "tools/call", params: { name: "me", arguments: {} } },
      { authInfo: { token: "t", clientId: "app", scopes: ["files"], extra: { sub: "user-7" } } },
    );
    await reply;
    expect(seen[0]?.authInfo).toEqual({
      token: "t",
      clientId: "app",
      scopes: ["files"],
      subject: "user-7",
      extra: { sub: "user-7" },
    });
    expect(seen[0]?.transport).toBe("local");
  });
});
