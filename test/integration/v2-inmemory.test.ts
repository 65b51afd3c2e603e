/**
 * The same pieces, mounted with the same lines, on an SDK v1 and an SDK v2 `McpServer`, each driven
 * in process by its own generation's `Client` over `InMemoryTransport` (2025 era: one client per
 * connection, so the scope is the single-connection default).
 */
import { createServer, type Server } from "node:http";
import { Client as V2Client, InMemoryTransport as V2InMemory } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemory } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { close, listen } from "../http/server-helpers.js";
import {
  type AnyClient,
  type FilesApp,
  filesApp,
  newV1Server,
  newV2Server,
  rpcError,
  type ToolResult,
  upload,
} from "../mcp/v2/harness.js";

type Generation = "v1" | "v2";

let app: FilesApp;
let files: Server;
let client: AnyClient & {
  setNotificationHandler: (method: string, handler: (n: { params?: { uri?: string } }) => void) => void;
  subscribeResource(params: { uri: string }): Promise<unknown>;
  complete(params: unknown): Promise<{ completion: { values: string[] } }>;
  listResourceTemplates(): Promise<{ resourceTemplates: Array<{ uriTemplate: string }> }>;
};
let server: { close(): Promise<void> };

async function connect(generation: Generation): Promise<void> {
  if (generation === "v1") {
    const mcp = app.mount(newV1Server());
    const [clientSide, serverSide] = V1InMemory.createLinkedPair();
    await mcp.connect(serverSide);
    const v1 = new V1Client({ name: "mem", version: "1.0.0" });
    await v1.connect(clientSide);
    client = v1 as never;
    server = mcp;
  } else {
    const mcp = app.mount(newV2Server());
    const [clientSide, serverSide] = V2InMemory.createLinkedPair();
    await mcp.connect(serverSide);
    const v2 = new V2Client({ name: "mem", version: "1.0.0" });
    await v2.connect(clientSide);
    client = v2 as never;
    server = mcp;
  }
}

beforeEach(async () => {
  app = await filesApp();
  files = createServer((req, res) => app.routes(req, res));
  app.setOrigin(await listen(files));
});

afterEach(async () => {
  await client.close().catch(() => undefined);
  await server.close().catch(() => undefined);
  await close(files);
  await app.close();
});

describe.each<Generation>(["v1", "v2"])("SDK %s McpServer in memory", (generation) => {
  it("serves the same tools, uploads, artifacts and resources", async () => {
    await connect(generation);
    const upd: string[] = [];
    // v1 takes the notification's schema, v2 its method name.
    const v1 = generation === "v1";
    client.setNotificationHandler(
      (v1 ? ResourceListChangedNotificationSchema : "notifications/resources/list_changed") as string,
      () => upd.push("list_changed"),
    );
    client.setNotificationHandler(
      (v1 ? ResourceUpdatedNotificationSchema : "notifications/resources/updated") as string,
      (n) => upd.push(`updated ${n.params?.uri}`),
    );

    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(["check_upload", "concat", "get_upload_url"]);
    const uploaded = await upload(client, "a.txt", Buffer.from("alpha\n"));
    expect(uploaded.uri).toMatch(/^file:\/\/uploads\//);
    const result = (await client.callTool({
      name: "concat",
      arguments: {
        files: [uploaded.handle, `data:text/plain;base64,${Buffer.from("beta\n").toString("base64")}`],
      },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    const artifact = result.content.find((block) => block.type === "resource_link")?.uri as string;
    const read = await client.readResource({ uri: artifact });
    expect(read.contents[0]?.uri).toBe(artifact);
    expect(Buffer.from(read.contents[0]?.blob as string, "base64").toString()).toBe("alpha\nbeta\n");

    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri).sort()).toEqual([artifact, uploaded.uri].sort());
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.length).toBeGreaterThanOrEqual(2);

    const missing = `${uploaded.uri}-missing`;
    const error = await rpcError(client.readResource({ uri: missing }));
    expect(error).toMatchObject({ code: -32602, data: { uri: missing } });
    // The server sends the bare text; a v1 client adds its `MCP error <code>: ` prefix once, v2 none.
    expect(error.message).toBe(`${v1 ? "MCP error -32602: " : ""}resource ${missing} not found`);

    // 2025 era: per-resource subscribe and list_changed on the connection itself.
    await client.subscribeResource({ uri: uploaded.uri });
    await app.registry.remove("default", uploaded.handle.split("/").pop() as string);
    const until = Date.now() + 3000;
    while (!upd.includes(`updated ${uploaded.uri}`) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(upd).toContain(`updated ${uploaded.uri}`);
    expect(upd).toContain("list_changed");
  });

  it("completes template variables next to the server's own completions", async () => {
    await connect(generation);
    await upload(client, "report.csv", Buffer.from("a,b\n"));
    const templates = await client.listResourceTemplates();
    const uploads = templates.resourceTemplates.find((t) => t.uriTemplate.startsWith("file://uploads/"));
    const variable = /\{\+?(\w+)\}$/.exec(uploads?.uriTemplate ?? "")?.[1] as string;
    const completed = await client.complete({
      ref: { type: "ref/resource", uri: uploads?.uriTemplate },
      argument: { name: variable, value: "rep" },
    });
    expect(completed.completion.values).toEqual(["report.csv"]);
    const unknown = await rpcError(
      client.complete({ ref: { type: "ref/resource", uri: "x://{y}" }, argument: { name: "y", value: "" } }),
    );
    expect(unknown.code).toBe(-32602);
    const prefix = generation === "v1" ? "MCP error -32602: " : "";
    expect(unknown.message).toBe(`${prefix}Resource template x://{y} not found`);
  });
});
