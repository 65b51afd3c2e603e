import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer, ProtocolError } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileRoutes, type FileRoutes } from "../../../src/http/create-file-routes.js";
import type { HostRequestContext, HostResource } from "../../../src/mcp/host.js";
import { toHost } from "../../../src/mcp/to-host.js";
import { ResourceRegistry } from "../../../src/registry/resource-registry.js";
import { SignedUrlMinter } from "../../../src/signing/signed-url-minter.js";
import { memoryState } from "../../../src/storage/memory-state.js";
import { memoryStore } from "../../../src/storage/memory-store.js";
import type { FileStore, StateStore } from "../../../src/storage/types.js";
import { uploadWidgetResource } from "../../../src/ui/upload-widget.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";

const SCOPE = "chat-1";
const SECRET = "a-test-secret-that-is-long-enough-0123456789";

let store: FileStore;
let state: StateStore;
let minter: SignedUrlMinter;
let routes: FileRoutes;
let uploads: UploadHandleResolver;
const cleanups: Array<() => Promise<void>> = [];

beforeEach(() => {
  store = memoryStore();
  state = memoryState();
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:9", state });
  routes = createFileRoutes({ store, minter, state, uploadPage: true });
  uploads = new UploadHandleResolver({
    store,
    state,
    minter,
    maxFiles: 3,
    scope: () => SCOPE,
    fileRequests: { pollInterval: "20ms" },
  });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(
  server: McpServer,
  options: ConstructorParameters<typeof Client>[1] = {},
): Promise<Client> {
  const client = new Client({ name: "v2-test", version: "1.0.0" }, options);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
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
    if (error instanceof ProtocolError) return { code: error.code, data: error.data };
    throw error;
  }
  throw new Error("expected a JSON-RPC error");
}

describe("v2 host: registerResource", () => {
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
      const files = memoryStore();
      const registry = new ResourceRegistry({ store: files, scope: () => "s" });
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
    toHost(server).registerResource?.(widget());
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
  });

  it("uploads.attach(server, { widget }) on a v2 McpServer, next to a registry in both orders", async () => {
    for (const order of ["registry-first", "uploads-first"] as const) {
      const registry = new ResourceRegistry({ store: memoryStore(), scope: () => SCOPE });
      await registry.add(new TextEncoder().encode("b"), { scope: SCOPE, name: "b.txt" });
      const server = new McpServer({ name: "t", version: "1.0.0" });
      const w = uploadWidgetResource({ uploadOrigin: "http://127.0.0.1:9" });
      if (order === "registry-first") registry.attach(server);
      const tool = uploads.attach(server, { widget: w });
      if (order === "uploads-first") registry.attach(server);
      const client = await connect(server);
      const [listed] = (await client.listTools()).tools;
      expect(listed?._meta).toEqual({
        ui: { resourceUri: w.uri },
        "ui/resourceUri": w.uri,
      });
      const { resources } = await client.listResources();
      expect(resources[0]).toEqual(
        expect.objectContaining({ uri: w.uri, mimeType: "text/html;profile=mcp-app" }),
      );
      expect(resources[0]?._meta).toEqual(w._meta);
      expect(resources).toHaveLength(2);
      expect((await client.readResource({ uri: w.uri })).contents[0]).toEqual(w.contents);
      const result = await client.callTool({ name: "get_upload_url", arguments: {} });
      expect(result.structuredContent).toMatchObject({ max_files: 3, method: "POST" });
      tool.remove();
      expect((await client.listResources()).resources.map((r) => r.name)).toEqual(["b.txt"]);
    }
  });
});
