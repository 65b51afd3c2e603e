import { Client, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  type CallToolResult,
  createMcpHandler,
  McpServer,
  ProtocolError,
} from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HostRequestContext, HostResource } from "../../../src/mcp/host.js";
import { toHost } from "../../../src/mcp/to-host.js";
import { ResourceRegistry } from "../../../src/registry/resource-registry.js";
import { createFileRoutes, type FileRoutes } from "../../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../../src/signing/signed-url-minter.js";
import { memoryState } from "../../../src/storage/memory-state.js";
import { memoryStore } from "../../../src/storage/memory-store.js";
import type { FileStore, StateStore } from "../../../src/storage/types.js";
import { uploadPageRenderer } from "../../../src/ui/upload-page.js";
import { uploadWidgetResource } from "../../../src/ui/upload-widget.js";
import type { FileRequestOutcome } from "../../../src/uploads/request-files-flow.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { sha256 } from "../../support/helpers.js";

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
  routes = createFileRoutes({ store, minter, state, uploadPage: uploadPageRenderer() });
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

/** What a person's browser does with the link: POST the files to it. */
async function upload(url: string, files: Record<string, string>): Promise<number> {
  const form = new FormData();
  for (const [name, text] of Object.entries(files)) form.append("file", new Blob([text]), name);
  return ((await routes(new Request(url, { method: "POST", body: form }))) as Response).status;
}

/** The same tool code as on v1: ask for files, return the outcome's result or the file. */
function askingServer(seen: FileRequestOutcome[]): McpServer {
  const server = new McpServer({ name: "t", version: "1.0.0" });
  server.registerTool("needs_files", { description: "needs files" }, async (ctx) => {
    const outcome = await uploads.requestFiles(server, ctx, { message: "Send the CSV", maxFiles: 1 });
    seen.push(outcome);
    if (outcome.status !== "uploaded") return outcome.result;
    const [file] = outcome.files;
    return { content: [{ type: "text", text: `got ${file?.name} ${file?.sha256}` }] };
  });
  return server;
}

/** A client's elicitation handler that accepts and has the "person" upload shortly after. */
function person(client: Client, asked: unknown[], uploads: Array<Promise<number>>): void {
  client.setRequestHandler("elicitation/create", async (request) => {
    const params = request.params as { mode?: string; url: string };
    asked.push(params);
    if (params.mode !== "url") throw new Error("expected url mode");
    uploads.push(
      new Promise((resolve) => setTimeout(resolve, 60)).then(() =>
        upload(params.url, { "a.csv": "a,b\n1,2\n" }),
      ),
    );
    return { action: "accept" };
  });
}

/** A 2026-07-28 client served in process by `createMcpHandler`. */
async function modern(
  factory: () => McpServer,
  capabilities: Record<string, unknown>,
  user?: string,
): Promise<Client> {
  const handler = createMcpHandler(factory);
  const authInfo = user ? { token: `t-${user}`, clientId: "c", scopes: [], extra: { sub: user } } : undefined;
  const client = new Client(
    { name: "modern", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://in-process.test/mcp"), {
      fetch: (url, init) => handler.fetch(new Request(url, init), authInfo ? { authInfo } : {}),
    }),
  );
  cleanups.push(async () => {
    await client.close();
    await handler.close();
  });
  return client;
}

function text(result: unknown): string {
  return ((result as CallToolResult).content[0] as { text: string }).text;
}

describe("v2 host: uploads.requestFiles through URL elicitation", () => {
  it("2025 era: elicitation/create in URL mode, the upload, the completion notification, the file", async () => {
    const seen: FileRequestOutcome[] = [];
    const client = await connect(askingServer(seen), { capabilities: { elicitation: { url: {} } } });
    const asked: unknown[] = [];
    const sent: Array<Promise<number>> = [];
    person(client, asked, sent);
    const completed: string[] = [];
    client.setNotificationHandler("notifications/elicitation/complete", (notification) => {
      completed.push(notification.params.elicitationId);
    });
    const result = await client.callTool({ name: "needs_files", arguments: {} });
    expect(await Promise.all(sent)).toEqual([201]);
    expect(text(result)).toBe(`got a.csv ${sha256("a,b\n1,2\n")}`);
    const outcome = seen[0] as Extract<FileRequestOutcome, { status: "uploaded" }>;
    expect(outcome.status).toBe("uploaded");
    expect(asked).toEqual([expect.objectContaining({ mode: "url", elicitationId: outcome.requestId })]);
    await expect.poll(() => completed).toEqual([outcome.requestId]);
  });

  it("2025 era: a client without elicitation.url gets the fallback link, never elicitation/create", async () => {
    const seen: FileRequestOutcome[] = [];
    const client = await connect(askingServer(seen), { capabilities: { elicitation: { form: {} } } });
    const asked: unknown[] = [];
    person(client, asked, []);
    const result = (await client.callTool({ name: "needs_files", arguments: {} })) as CallToolResult;
    expect(asked).toEqual([]);
    expect(seen[0]?.status).toBe("upload_required");
    const fallback = result.structuredContent as { url: string; handle: string };
    expect(text(result)).toContain(fallback.url);
    expect(await upload(fallback.url, { "c.pdf": "%PDF" })).toBe(201);
    expect((await uploads.fileFor(fallback.handle, { scope: SCOPE }))?.name).toBe("c.pdf");
  });

  it("2026-07-28: input_required with the URL, the retry with verified state waits for the upload", async () => {
    const seen: FileRequestOutcome[] = [];
    const client = await modern(() => askingServer(seen), { elicitation: { url: {} } });
    const asked: unknown[] = [];
    const sent: Array<Promise<number>> = [];
    person(client, asked, sent);
    const result = await client.callTool({ name: "needs_files", arguments: {} });
    expect(await Promise.all(sent)).toEqual([201]);
    expect(text(result)).toBe(`got a.csv ${sha256("a,b\n1,2\n")}`);
    expect(seen.map((outcome) => outcome.status)).toEqual(["input_required", "uploaded"]);
    expect(seen[1]?.requestId).toBe(seen[0]?.requestId);
    expect(asked).toEqual([
      expect.objectContaining({ mode: "url", message: expect.stringContaining("Send the CSV") }),
    ]);
    expect((seen[1]?.files ?? [])[0]?.scope).toBe(SCOPE);
  });

  it("2026-07-28: a client without elicitation.url gets the fallback; declined is isError", async () => {
    const seen: FileRequestOutcome[] = [];
    const plain = await modern(() => askingServer(seen), {});
    const result = (await plain.callTool({ name: "needs_files", arguments: {} })) as CallToolResult;
    expect(seen.map((outcome) => outcome.status)).toEqual(["upload_required"]);
    expect(text(result)).toContain((result.structuredContent as { url: string }).url);

    const declining = await modern(() => askingServer(seen), { elicitation: { url: {} } });
    declining.setRequestHandler("elicitation/create", async () => ({ action: "decline" }));
    const declined = (await declining.callTool({ name: "needs_files", arguments: {} })) as CallToolResult;
    expect(declined.isError).toBe(true);
    expect(seen.slice(1).map((outcome) => outcome.status)).toEqual(["input_required", "declined"]);
  });
});

describe("v2 host: the 2026-07-28 request state is verified", () => {
  it("a tampered or foreign state is not a retry: the tool asks again with a new link", async () => {
    const seen: FileRequestOutcome[] = [];
    const client = await modern(() => askingServer(seen), { elicitation: { url: {} } });
    const call = (params: Record<string, unknown>) =>
      client.callTool({ name: "needs_files", arguments: {}, ...params } as never, {
        allowInputRequired: true,
      });
    const first = (await call({})) as unknown as {
      resultType?: string;
      requestState: string;
      inputRequests: object;
    };
    expect(first.resultType).toBe("input_required");
    const [id] = Object.keys(first.inputRequests);
    expect(id).toBe(seen[0]?.requestId);
    const [prefix, , tag] = first.requestState.split(".");
    const forged = [
      `${prefix}.${Buffer.from("someone-elses-request").toString("base64url")}.${tag}`,
      `${first.requestState}x`,
      // The asked state passed off as the accepted one (which the later rounds carry): not sealed so.
      `${first.requestState}.a`,
      "not-our-state",
    ];
    for (const requestState of forged) {
      const again = (await call({
        requestState,
        inputResponses: { [id as string]: { action: "accept" } },
      })) as unknown as {
        resultType?: string;
      };
      expect(again.resultType).toBe("input_required");
    }
    expect(seen.map((outcome) => outcome.status)).toEqual(Array(5).fill("input_required"));
    expect(new Set(seen.map((outcome) => outcome.requestId)).size).toBe(5);
  });

  it("a state is bound to its user: replayed by another user, it is a new request, not a wait", async () => {
    const seen: FileRequestOutcome[] = [];
    const alice = await modern(() => askingServer(seen), { elicitation: { url: {} } }, "alice");
    const bob = await modern(() => askingServer(seen), { elicitation: { url: {} } }, "bob");
    const first = (await alice.callTool(
      { name: "needs_files", arguments: {} },
      { allowInputRequired: true },
    )) as unknown as {
      requestState: string;
      inputRequests: object;
    };
    const [id] = Object.keys(first.inputRequests);
    const replayed = (await bob.callTool(
      {
        name: "needs_files",
        arguments: {},
        requestState: first.requestState,
        inputResponses: { [id as string]: { action: "accept" } },
      } as never,
      { allowInputRequired: true },
    )) as unknown as { resultType?: string; inputRequests: object };
    expect(replayed.resultType).toBe("input_required");
    expect(Object.keys(replayed.inputRequests)).not.toContain(id);
    expect(seen.map((outcome) => outcome.status)).toEqual(["input_required", "input_required"]);
  });
});
