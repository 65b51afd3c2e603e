/**
 * `requestFiles` picks one rung per call from what the client declared: the files extension → URL
 * elicitation → the MCP App widget → the upload link in the text. The same tool code for all four.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { uploadWidgetResource } from "../../src/ui/upload-widget.js";
import type { FileRequestOutcome } from "../../src/uploads/request-files-flow.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { DRAFT_CLIENT_CAPABILITY } from "../support/draft-files-client.js";

const SCOPE = "chat-1";
const SECRET = "a-test-secret-that-is-long-enough-0123456789";
let routes: FileRoutes;
let uploads: UploadHandleResolver;
const cleanups: Array<() => Promise<void>> = [];

beforeEach(() => {
  const store = memoryStore();
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:9", state });
  routes = createFileRoutes({ store, minter, state });
  uploads = new UploadHandleResolver({
    store,
    state,
    minter,
    scope: () => SCOPE,
    fileRequests: { pollInterval: "20ms" },
  });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One server whose `needs_file` tool asks for a file; `widget` attaches the upload tool with the MCP App widget. */
async function ask(capabilities: Record<string, unknown>, options: { widget?: boolean } = {}) {
  const server = new McpServer({ name: "t", version: "1.0.0" });
  const widget = options.widget
    ? { widget: uploadWidgetResource({ uploadOrigin: "http://127.0.0.1:9" }) }
    : {};
  uploads.attach(server, { ...widget, files: true });
  const seen: FileRequestOutcome[] = [];
  server.registerTool("needs_file", { description: "needs a file" }, async (extra) => {
    const outcome = await uploads.requestFiles(server, extra, {
      message: "Upload the invoice",
      maxFiles: 1,
      timeout: "5s",
    });
    seen.push(outcome);
    return outcome.result;
  });
  const client = new Client({ name: "c", version: "1.0.0" }, { capabilities });
  if ("elicitation" in capabilities)
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept" }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return { client, seen };
}

describe("requestFiles: one rung per call", () => {
  it("files extension first: the result is the draft's {file, upload}; the upload lands under file.uri", async () => {
    const { client, seen } = await ask(
      { ...DRAFT_CLIENT_CAPABILITY, elicitation: { url: {} } },
      { widget: true },
    );
    const result = await client.callTool({ name: "needs_file", arguments: {} });
    const outcome = seen[0];
    expect(outcome?.status, JSON.stringify(result)).toBe("upload_required");
    expect(outcome?.status === "upload_required" && outcome.via).toBe("files");
    const { file, upload } = result.structuredContent as {
      file: { uri: string };
      upload: { method: "PUT"; url: string; transport: "https" };
    };
    expect(upload).toMatchObject({ transport: "https", method: "PUT" });
    const response = await routes(new Request(upload.url, { method: "PUT", body: "invoice bytes" }));
    expect(response?.status).toBe(201);
    const [stored] = (await uploads.filesFor(file.uri, { scope: SCOPE })) ?? [];
    expect(stored?.size).toBe("invoice bytes".length);
    // Single-use: a second PUT with the same descriptor is refused.
    const again = await routes(new Request(upload.url, { method: "PUT", body: "other" }));
    expect(again?.status).toBe(410);
  });

  it("URL elicitation second, when the client did not declare files", async () => {
    const { client, seen } = await ask({ elicitation: { url: {} } }, { widget: true });
    const call = client.callTool({ name: "needs_file", arguments: {} });
    // The elicitation was accepted; the tool now waits for the upload, which nobody makes: it times out.
    await call;
    expect(seen[0]?.status).toBe("timeout");
  });

  it("the MCP App widget third, for a client that renders MCP Apps when the upload tool has the widget", async () => {
    const { client, seen } = await ask(
      { extensions: { "io.modelcontextprotocol/ui": {} } },
      { widget: true },
    );
    const result = await client.callTool({ name: "needs_file", arguments: {} });
    const outcome = seen[0];
    expect(outcome?.status === "upload_required" && outcome.via).toBe("widget");
    expect(result.structuredContent).toMatchObject({
      status: "upload_required",
      via: "widget",
      tool: "get_upload_url",
    });
  });

  it("the link in the text last: a client with none of them gets exactly today's fallback", async () => {
    const { client, seen } = await ask({ extensions: { "io.modelcontextprotocol/ui": {} } });
    const result = await client.callTool({ name: "needs_file", arguments: {} });
    const outcome = seen[0];
    expect(outcome?.status === "upload_required" && outcome.via).toBe("link");
    expect(result.structuredContent).toMatchObject({ status: "upload_required" });
    expect(result.structuredContent).not.toHaveProperty("via");
  });
});
