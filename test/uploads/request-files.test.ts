import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HostElicitationAnswer, HostRequestContext } from "../../src/mcp/host.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { uploadPageRenderer } from "../../src/ui/upload-page.js";
import { uploadWidgetResource } from "../../src/ui/upload-widget.js";
import type { FileRequestOutcome, RequestFilesCallOptions } from "../../src/uploads/request-files-flow.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { sha256 } from "../support/helpers.js";
import { connectInMemory } from "../support/in-memory-client.js";

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

/** What a person's browser does with the link: POST the files to it. */
async function upload(url: string, files: Record<string, string>): Promise<number> {
  const form = new FormData();
  for (const [name, text] of Object.entries(files)) form.append("file", new Blob([text]), name);
  return ((await routes(new Request(url, { method: "POST", body: form }))) as Response).status;
}

async function connect(
  server: McpServer,
  capabilities: ConstructorParameters<typeof Client>[1],
): Promise<Client> {
  const { client, close } = await connectInMemory(server, { name: "t", version: "1.0.0" }, capabilities);
  cleanups.push(close);
  return client;
}

/** A server whose tool asks for files; the outcomes land in `seen`. */
function asking(options: RequestFilesCallOptions, seen: FileRequestOutcome[]): McpServer {
  const server = new McpServer({ name: "t", version: "1.0.0" });
  server.registerTool("needs_files", { description: "needs files" }, async (extra) => {
    const outcome = await uploads.requestFiles(server, extra, options);
    seen.push(outcome);
    return outcome.result;
  });
  return server;
}

describe("UploadHandleResolver.attach(server, { widget })", () => {
  it("registers the ui:// resource and links the tool with both _meta keys; remove() drops both", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    const widget = uploadWidgetResource({ uploadOrigin: "http://127.0.0.1:9" });
    const tool = uploads.attach(server, { widget });
    const client = await connect(server, {});
    const [listed] = (await client.listTools()).tools;
    expect(listed?._meta).toEqual({
      ui: { resourceUri: "ui://mcp-file-bridge/upload.html" },
      "ui/resourceUri": "ui://mcp-file-bridge/upload.html",
    });
    const { resources } = await client.listResources();
    expect(resources).toEqual([
      expect.objectContaining({ uri: widget.uri, mimeType: "text/html;profile=mcp-app" }),
    ]);
    expect(resources[0]?._meta).toEqual(widget._meta);
    const read = await client.readResource({ uri: widget.uri });
    expect(read.contents[0]).toEqual(widget.contents);
    // The tool's result is the ticket the widget uploads to.
    const result = (await client.callTool({ name: "get_upload_url", arguments: {} })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ max_files: 3, method: "POST" });
    tool.remove();
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listTools()).tools).toEqual([]);
  });

  it("refuses a widget built for another tool, or something that is not a widget", () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    const other = uploadWidgetResource({ uploadOrigin: "http://127.0.0.1:9", toolName: "upload_files" });
    expect(() => uploads.attach(server, { widget: other })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", data: { option: "widget" } }),
    );
    expect(() => uploads.attach(server, { widget: { uri: "ui://x" } as never })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
    // Nothing half-registered: a correct attach still works.
    expect(() =>
      uploads.attach(server, { widget: uploadWidgetResource({ uploadOrigin: "http://127.0.0.1:9" }) }),
    ).not.toThrow();
  });
});

describe("UploadHandleResolver.requestFiles (SDK v1)", () => {
  it("elicits the upload page URL, waits for the upload, notifies completion, and returns files and handles", async () => {
    const seen: FileRequestOutcome[] = [];
    const client = await connect(
      asking({ message: "Send the two CSVs", maxFiles: 2, accept: [".csv"] }, seen),
      {
        capabilities: { elicitation: { url: {} } },
      },
    );
    const completed: string[] = [];
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      completed.push(n.params.elicitationId);
    });
    let person: Promise<number> | undefined;
    let elicited: { url: string; elicitationId: string; message: string } | undefined;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      if (request.params.mode !== "url") throw new Error("expected url mode");
      elicited = request.params;
      const { url } = request.params;
      // The link is the upload page for a browser…
      const page = (await routes(new Request(url, { headers: { accept: "text/html" } }))) as Response;
      expect(await page.text()).toContain("Send the two CSVs");
      // …and the person's upload goes to the same URL, after the client answered.
      person = new Promise((resolve) => setTimeout(resolve, 60)).then(() =>
        upload(url, { "a.csv": "a,b\n1,2\n", "b.csv": "c\n3\n" }),
      );
      return { action: "accept" };
    });
    const result = (await client.callTool({ name: "needs_files", arguments: {} })) as CallToolResult;
    expect(await person).toBe(201);
    const outcome = seen[0] as Extract<FileRequestOutcome, { status: "uploaded" }>;
    expect(outcome.status).toBe("uploaded");
    expect(outcome.requestId).toBe(elicited?.elicitationId);
    expect(outcome.files.map((file) => [file.name, file.sha256, file.scope])).toEqual([
      ["a.csv", sha256("a,b\n1,2\n"), SCOPE],
      ["b.csv", sha256("c\n3\n"), SCOPE],
    ]);
    expect(outcome.handles).toEqual(
      outcome.files.map((file) => `upload://sessions/${scopeRef(SCOPE, minter)}/${file.id}`),
    );
    expect(result.structuredContent).toMatchObject({ status: "uploaded", request_id: outcome.requestId });
    await expect.poll(() => completed).toEqual([outcome.requestId]);
  });

  it("falls back to the link as text when the client cannot open URLs (never sending elicitation/create)", async () => {
    const seen: FileRequestOutcome[] = [];
    const client = await connect(asking({ message: "Send the contract" }, seen), {
      capabilities: { elicitation: { form: {} } },
    });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked += 1;
      return { action: "decline" };
    });
    const result = (await client.callTool({ name: "needs_files", arguments: {} })) as CallToolResult;
    expect(asked).toBe(0);
    expect(seen[0]?.status).toBe("upload_required");
    expect(result.isError).toBeFalsy();
    const fallback = result.structuredContent as { url: string; handle: string; request_id: string };
    expect((result.content[0] as { text: string }).text).toContain(fallback.url);
    expect(await upload(fallback.url, { "contract.pdf": "%PDF-1.7" })).toBe(201);
    expect((await uploads.fileFor(fallback.handle, { scope: SCOPE }))?.name).toBe("contract.pdf");
    expect((await uploads.fileRequests.filesOf(SCOPE, fallback.request_id))?.length).toBe(1);
  });

  it("falls back when the client answers elicitation/create with an error; declined and cancelled are isError", async () => {
    const seen: FileRequestOutcome[] = [];
    const failing = await connect(asking({ message: "m" }, seen), {
      capabilities: { elicitation: { url: {} } },
    });
    failing.setRequestHandler(ElicitRequestSchema, async () => {
      throw new Error("cannot open links here");
    });
    await failing.callTool({ name: "needs_files", arguments: {} });
    expect(seen.at(-1)?.status).toBe("upload_required");
    for (const action of ["decline", "cancel"] as const) {
      const client = await connect(asking({ message: "m" }, seen), {
        capabilities: { elicitation: { url: {} } },
      });
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action }));
      const result = (await client.callTool({ name: "needs_files", arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(seen.at(-1)?.status).toBe(action === "decline" ? "declined" : "cancelled");
    }
  });

  it("ends with a TIMEOUT result when the person agreed but never uploaded", async () => {
    const seen: FileRequestOutcome[] = [];
    const client = await connect(asking({ message: "m", timeout: "150ms" }, seen), {
      capabilities: { elicitation: { url: {} } },
    });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept" }));
    const result = (await client.callTool({ name: "needs_files", arguments: {} })) as CallToolResult;
    expect(seen[0]?.status).toBe("timeout");
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/TIMEOUT/);
  });

  it("refuses limits above the resolver's, before anything is sent", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    let code = "";
    server.registerTool("needs_files", { description: "d" }, async (extra) => {
      code = await uploads
        .requestFiles(server, extra, { message: "m", maxFiles: 4 })
        .then(() => "OK")
        .catch((error: { code: string }) => error.code);
      return { content: [] };
    });
    const client = await connect(server, { capabilities: { elicitation: { url: {} } } });
    await client.callTool({ name: "needs_files", arguments: {} });
    expect(code).toBe("INVALID_INPUT");
  });
});

describe("UploadHandleResolver.requestFiles against the port contract of a 2026-07-28 adapter", () => {
  /** A request context as a v2 adapter would build it. */
  function context(extra: Partial<HostRequestContext>): HostRequestContext {
    return {
      transport: "local",
      signal: new AbortController().signal,
      extra: {},
      clientCapabilities: { elicitation: { url: {} } },
      ...extra,
    };
  }

  it("first round: whatever the adapter throws to end the round (input_required) propagates", async () => {
    const endRound = Object.assign(new Error("input required"), { name: "InputRequired" });
    let asked: unknown;
    const ctx = context({
      elicitUrl: async (request) => {
        asked = request;
        throw endRound;
      },
    });
    await expect(
      uploads.requestFiles(new McpServer({ name: "t", version: "1" }), ctx, { message: "m" }),
    ).rejects.toBe(endRound);
    expect(asked).toMatchObject({ mode: "url", message: "m" });
  });

  it("retry: the answered elicitation's upload is awaited without minting another link", async () => {
    const first = await uploads.fileRequests.create(SCOPE, { message: "m" });
    expect(await upload(first.uploadUrl, { "x.txt": "x" })).toBe(201);
    let minted = 0;
    const ctx = context({
      elicitationAnswers: new Map<string, HostElicitationAnswer>([[first.id, { action: "accept" }]]),
      elicitUrl: async () => {
        minted += 1;
        return { action: "accept" };
      },
    });
    const outcome = await uploads.requestFiles(new McpServer({ name: "t", version: "1" }), ctx, {
      message: "m",
    });
    expect(minted).toBe(0);
    expect(outcome.status).toBe("uploaded");
    expect(outcome.files?.map((file) => file.name)).toEqual(["x.txt"]);
    const declined = await uploads.requestFiles(
      new McpServer({ name: "t", version: "1" }),
      context({ elicitationAnswers: new Map([[first.id, { action: "decline" as const }]]) }),
      { message: "m" },
    );
    expect(declined.status).toBe("declined");
    expect(declined.result.isError).toBe(true);
  });
});
