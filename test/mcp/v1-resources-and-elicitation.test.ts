import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { HostRequestContext, HostResource } from "../../src/mcp/host.js";
import { toHost } from "../../src/mcp/to-host.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { connectInMemory } from "../support/in-memory-client.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(
  server: McpServer | Server,
  capabilities: ConstructorParameters<typeof Client>[1] = {},
): Promise<Client> {
  const { client, close } = await connectInMemory(
    server,
    { name: "host-test", version: "1.0.0" },
    capabilities,
  );
  cleanups.push(close);
  return client;
}

function widget(uri = "ui://test/widget.html", seen: HostRequestContext[] = []): HostResource {
  return {
    uri,
    name: "widget",
    title: "Widget",
    mimeType: "text/html;profile=mcp-app",
    _meta: { ui: { prefersBorder: true } },
    read: async (ctx) => {
      seen.push(ctx);
      return { contents: [{ uri, mimeType: "text/html;profile=mcp-app", text: "<p>hi</p>" }] };
    },
  };
}

async function rpcError(run: Promise<unknown>): Promise<{ code: number; data: unknown }> {
  try {
    await run;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, data: error.data };
    throw error;
  }
  throw new Error("expected a JSON-RPC error");
}

describe("v1 host: registerResource", () => {
  it("serves a fixed resource alone: listed, read (with the port context), unknown URIs -32602", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    const seen: HostRequestContext[] = [];
    toHost(server).registerResource?.(widget(undefined, seen));
    const client = await connect(server);
    expect(client.getServerCapabilities()?.resources).toBeDefined();
    const { resources } = await client.listResources();
    expect(resources).toEqual([
      {
        uri: "ui://test/widget.html",
        name: "widget",
        title: "Widget",
        mimeType: "text/html;profile=mcp-app",
        _meta: { ui: { prefersBorder: true } },
      },
    ]);
    const read = await client.readResource({ uri: "ui://test/widget.html" });
    expect(read.contents).toEqual([
      { uri: "ui://test/widget.html", mimeType: "text/html;profile=mcp-app", text: "<p>hi</p>" },
    ]);
    expect(seen[0]?.transport).toBe("local");
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect(await rpcError(client.readResource({ uri: "ui://test/other.html" }))).toMatchObject({
      code: -32602,
      data: { uri: "ui://test/other.html", code: "NOT_FOUND" },
    });
  });

  it("composes with a ResourceRegistry attached before or after: both list, both read", async () => {
    for (const order of ["registry-first", "widget-first"] as const) {
      const store = memoryStore();
      const registry = new ResourceRegistry({ store, scope: () => "s" });
      await registry.add(new TextEncoder().encode("a"), { scope: "s", name: "a.txt" });
      const server = new McpServer({ name: "t", version: "1.0.0" });
      const host = toHost(server);
      if (order === "registry-first") registry.attach(server);
      const handle = host.registerResource?.(widget());
      if (order === "widget-first") registry.attach(server);
      const client = await connect(server);
      const uris = (await client.listResources()).resources.map((resource) => resource.uri);
      expect(uris[0]).toBe("ui://test/widget.html");
      expect(uris).toHaveLength(2);
      expect(
        ((await client.readResource({ uri: "ui://test/widget.html" })).contents[0] as { text: string }).text,
      ).toBe("<p>hi</p>");
      expect(
        ((await client.readResource({ uri: uris[1] as string })).contents[0] as { text: string }).text,
      ).toBe("a");
      handle?.remove();
      expect((await client.listResources()).resources.map((resource) => resource.uri)).toEqual([uris[1]]);
    }
  });

  it("joins an McpServer's own resources registered before; refuses a taken URI", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.registerResource("own", "test://own", { mimeType: "text/plain" }, async () => ({
      contents: [{ uri: "test://own", text: "own" }],
    }));
    const host = toHost(server);
    host.registerResource?.(widget());
    const client = await connect(server);
    expect((await client.listResources()).resources.map((resource) => resource.uri).sort()).toEqual([
      "test://own",
      "ui://test/widget.html",
    ]);
    expect(
      ((await client.readResource({ uri: "ui://test/widget.html" })).contents[0] as { text: string }).text,
    ).toBe("<p>hi</p>");
    const other = new McpServer({ name: "t", version: "1.0.0" });
    toHost(other).registerResource?.(widget());
    expect(() => toHost(other).registerResource?.(widget())).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    expect(() => toHost(other).registerResource?.({ ...widget("not a uri") })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });
});

describe("v1 host: request contexts and URL elicitation", () => {
  function askingServer(onContext: (ctx: HostRequestContext) => Promise<string>): McpServer {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.registerTool("ask", { description: "asks" }, async (extra) => {
      const ctx = toHost(server).requestContext?.(extra) as HostRequestContext;
      return { content: [{ type: "text", text: await onContext(ctx) }] };
    });
    return server;
  }

  it("gives a tool's extra the port context: capabilities, elicitUrl related to the call, the completion notification", async () => {
    const server = askingServer(async (ctx) => {
      expect(ctx.clientCapabilities?.elicitation?.url).toEqual({});
      const answer = await ctx.elicitUrl?.({
        mode: "url",
        message: "Open this",
        url: "https://files.example.com/upload/x",
        elicitationId: "e-1",
      });
      await ctx.notifyElicitationComplete?.("e-1");
      return String(answer?.action);
    });
    const client = await connect(server, { capabilities: { elicitation: { url: {} } } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept" };
    });
    const completed: string[] = [];
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params.elicitationId);
    });
    const result = await client.callTool({ name: "ask", arguments: {} });
    expect((result.content as Array<{ text: string }>)[0]?.text).toBe("accept");
    expect(asked).toEqual([
      { mode: "url", message: "Open this", url: "https://files.example.com/upload/x", elicitationId: "e-1" },
    ]);
    await expect.poll(() => completed).toEqual(["e-1"]);
  });

  it("refuses to elicit a URL from a client without the capability, and bounds the wait", async () => {
    const noUrl = askingServer(async (ctx) => {
      try {
        await ctx.elicitUrl?.({ mode: "url", message: "m", url: "https://x.example/u", elicitationId: "e" });
        return "sent";
      } catch (error) {
        return (error as { code?: string }).code ?? "error";
      }
    });
    const client = await connect(noUrl, { capabilities: { elicitation: { form: {} } } });
    expect(
      ((await client.callTool({ name: "ask", arguments: {} })).content as Array<{ text: string }>)[0]?.text,
    ).toBe("INVALID_INPUT");

    const slow = askingServer(async (ctx) => {
      try {
        await ctx.elicitUrl?.(
          { mode: "url", message: "m", url: "https://x.example/u", elicitationId: "e" },
          { timeoutMs: 50 },
        );
        return "answered";
      } catch (error) {
        return `code ${(error as { code?: number }).code}`;
      }
    });
    const patient = await connect(slow, { capabilities: { elicitation: { url: {} } } });
    patient.setRequestHandler(ElicitRequestSchema, () => new Promise(() => {}));
    expect(
      ((await patient.callTool({ name: "ask", arguments: {} })).content as Array<{ text: string }>)[0]?.text,
    ).toBe("code -32001");
  });

  it("requestContext refuses what is not an SDK request context", () => {
    const host = toHost(new McpServer({ name: "t", version: "1.0.0" }));
    expect(() => host.requestContext?.({ sessionId: "x" })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
  });
});
