import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scopeRef } from "../../src/index.js";
import { sha256 } from "../../test/support/helpers.js";
import { start, type UploadPageServer } from "./server.js";

describe("upload-page example on SDK v1: the widget and requestFiles", () => {
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

// The ticket tool and the upload page, client-driven, on each SDK generation: the v1 client against
// the v1 server (sessions), the v2 client pinned to 2026-07-28 against the stateless v2 server.
describe.each(["v1", "v2"] as const)("upload-page example on SDK %s: upload_files and the page", (sdk) => {
  const TOKENS = { "token-alice-0123456789": "alice", "token-bob-0123456789": "bob" };
  let app: UploadPageServer;
  const clients: Client[] = [];
  beforeEach(async () => {
    app = await start({ sdk, tokens: TOKENS });
    expect(app.sdk).toBe(sdk);
  });
  afterEach(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    clients.length = 0;
    await app.close();
  });

  async function connect(token?: string): Promise<Client> {
    const requestInit = token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } };
    if (sdk === "v2") {
      const v2 = new ClientV2(
        { name: "example-test", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await v2.connect(new StreamableHTTPClientTransportV2(app.mcpUrl, { requestInit }));
      // listTools, callTool and close have the same shape on both clients.
      const client = v2 as unknown as Client;
      clients.push(client);
      return client;
    }
    const client = new Client({ name: "example-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(app.mcpUrl, { requestInit }));
    clients.push(client);
    return client;
  }

  async function ticket(client: Client): Promise<{ upload_url: string; handle: string }> {
    const result = (await client.callTool({ name: "upload_files", arguments: {} })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    return result.structuredContent as { upload_url: string; handle: string };
  }

  it("upload_files mints a link whose page opens in a browser and takes the file, once", async () => {
    const client = await connect("token-alice-0123456789");
    const { tools } = await client.listTools();
    // The same tools on both generations (the widget and request_document on v2: upload-page-v2.test.ts).
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "check_upload",
      "request_document",
      "upload_files",
    ]);
    const { upload_url, handle } = await ticket(client);

    const page = await fetch(upload_url, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'/);

    const form = new FormData();
    form.append("file", new Blob(["page upload"], { type: "text/plain" }), "note.txt");
    const stored = await fetch(upload_url, { method: "POST", body: form });
    expect(stored.status).toBe(201);
    const reply = (await stored.json()) as {
      files: Array<{ handle: string; name: string; size: number; sha256: string }>;
    };
    expect(reply.files).toEqual([expect.objectContaining({ name: "note.txt", size: 11 })]);
    // Both handles carry the scope's opaque reference: v1's one demo scope, v2's user.
    const scoped = `upload://sessions/${scopeRef(sdk === "v1" ? "demo" : "alice", app.minter)}/`;
    expect(handle.startsWith(scoped)).toBe(true);
    expect(reply.files[0]?.handle.startsWith(scoped)).toBe(true);
    expect(reply.files[0]).toMatchObject({ sha256: sha256("page upload") });

    const again = new FormData();
    again.append("file", new Blob(["twice"], { type: "text/plain" }), "again.txt");
    expect((await fetch(upload_url, { method: "POST", body: again })).status).toBeGreaterThanOrEqual(400);
  });

  it("the routes answer CORS for any origin (the widget's sandbox), without credentials", async () => {
    const { upload_url } = await ticket(await connect("token-bob-0123456789"));
    const preflight = await fetch(upload_url, {
      method: "OPTIONS",
      headers: { origin: "http://127.0.0.1:1", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.has("access-control-allow-credentials")).toBe(false);
  });

  it.runIf(sdk === "v2")(
    "v2: no shared scope — a caller without a token gets no ticket, a wrong token no answer",
    async () => {
      const anonymous = await connect();
      const refused = (await anonymous.callTool({ name: "upload_files", arguments: {} })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain("FORBIDDEN");
      expect(refused.structuredContent?.upload_url).toBeUndefined();
      // Each user gets tickets in its own scope.
      const bob = await ticket(await connect("token-bob-0123456789"));
      expect(bob.handle.startsWith(`upload://sessions/${scopeRef("bob", app.minter)}/`)).toBe(true);

      const response = await fetch(app.mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer nope",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(response.status).toBe(401);
    },
  );
});

describe("upload-page example: its data folder", () => {
  it("close() removes the folder it made for itself, and keeps one it was given", async () => {
    const made = await start();
    const dir = (made.store as { dir?: string }).dir as string;
    const file = await made.store.put(Buffer.from("kept until close"), { scope: "s", name: "a.txt" });
    expect(file.size).toBe(16);
    expect(existsSync(dir)).toBe(true);
    await made.close();
    expect(existsSync(dir)).toBe(false);

    const given = await mkdtemp(join(tmpdir(), "upload-page-given-"));
    try {
      const app = await start({ dataDir: given });
      await app.store.put(Buffer.from("stays"), { scope: "s", name: "b.txt" });
      await app.close();
      expect((await readdir(given)).length).toBeGreaterThan(0);
    } finally {
      await rm(given, { recursive: true, force: true });
    }
  });
});
