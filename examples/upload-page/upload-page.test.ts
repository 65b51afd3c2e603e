import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../test/support/helpers.js";
import { start, type UploadPageServer } from "./server.js";

describe("upload-page example", () => {
  let app: UploadPageServer;
  const clients: Client[] = [];
  beforeEach(async () => {
    app = await start();
  });
  afterEach(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    clients.length = 0;
    await app.close();
  });

  async function connect(capabilities: ConstructorParameters<typeof Client>[1]): Promise<Client> {
    const client = new Client({ name: "example-test", version: "1.0.0" }, capabilities);
    await client.connect(new StreamableHTTPClientTransport(app.mcpUrl));
    clients.push(client);
    return client;
  }

  it("request_document: the client opens the page, the person uploads, the tool returns the file", async () => {
    const client = await connect({ capabilities: { elicitation: { url: {} } } });
    let page = "";
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      if (request.params.mode !== "url") return { action: "decline" };
      const url = request.params.url;
      page = await (await fetch(url, { headers: { accept: "text/html" } })).text();
      const form = new FormData();
      form.append("file", new Blob(["the document"], { type: "text/plain" }), "doc.txt");
      setTimeout(() => void fetch(url, { method: "POST", body: form }), 20);
      return { action: "accept" };
    });
    const result = (await client.callTool({ name: "request_document", arguments: {} })) as CallToolResult;
    expect(page).toContain("Please upload the document to work on.");
    expect(result.structuredContent).toMatchObject({
      status: "uploaded",
      files: [{ name: "doc.txt", sha256: sha256("the document") }],
    });
  });

  it("upload_files links the widget with both keys; the widget resource is an inline mcp-app page", async () => {
    const client = await connect({ capabilities: {} });
    const { tools } = await client.listTools();
    const tool = tools.find((candidate) => candidate.name === "upload_files");
    expect(tool?._meta).toEqual({
      ui: { resourceUri: "ui://mcp-file-bridge/upload.html" },
      "ui/resourceUri": "ui://mcp-file-bridge/upload.html",
    });
    const read = await client.readResource({ uri: "ui://mcp-file-bridge/upload.html" });
    const content = read.contents[0] as { mimeType: string; text: string; _meta: unknown };
    expect(content.mimeType).toBe("text/html;profile=mcp-app");
    expect(content._meta).toMatchObject({ ui: { csp: { connectDomains: [app.url] } } });
    const ticket = (await client.callTool({ name: "upload_files", arguments: {} })).structuredContent as {
      upload_url: string;
    };
    const html = await fetch(ticket.upload_url, { headers: { accept: "text/html" } });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-security-policy")).toMatch(/^default-src 'none'/);
  });

  it("the routes answer CORS for any origin (the widget's sandbox), without credentials", async () => {
    const client = await connect({ capabilities: {} });
    const ticket = (await client.callTool({ name: "upload_files", arguments: {} })).structuredContent as {
      upload_url: string;
    };
    const preflight = await fetch(ticket.upload_url, {
      method: "OPTIONS",
      // Another origin on loopback: the example's DNS-rebinding guard (examples/shared) refuses
      // foreign host names before the routes see the request.
      headers: { origin: "http://127.0.0.1:1", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.has("access-control-allow-credentials")).toBe(false);
  });

  it("a client without URL elicitation gets the link", async () => {
    const client = await connect({ capabilities: {} });
    const result = (await client.callTool({ name: "request_document", arguments: {} })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ status: "upload_required" });
  });
});
