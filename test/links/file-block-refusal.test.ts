/**
 * Why the files extension's `{type: "file", file: FileValue}` content block is not sent (see
 * `fileValueOutput` in src/links/file-link.ts and docs/files-extension.md): the servers of both SDK
 * generations validate a tool's result against a closed union of content block types and refuse
 * the whole result, in every protocol era, on the high-level `McpServer` and the low-level `Server`
 * alike. These tests pin that refusal; when one fails, the SDK learned the block and the package
 * can send it to clients that declared `files`.
 */
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpTransport,
  InMemoryTransport as V2Memory,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1Memory } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server as V1Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createMcpHandler, McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";

const FILE_BLOCK = {
  type: "file",
  file: {
    uri: "upload://sessions/ref/id",
    name: "report.txt",
    mimeType: "text/plain",
    size: 11,
    digest: { algorithm: "sha-256", value: "0".repeat(64) },
  },
};
const RESULT = { content: [{ type: "text", text: "the report" }, FILE_BLOCK] };
/** The client reads the raw result loosely: a refusal must come from the server, not the client. */
const LOOSE = z.looseObject({ content: z.array(z.looseObject({ type: z.string() })) });
const DECLARED = { capabilities: { files: { upload: true, download: true, transports: ["https"] } } };

interface Requesting {
  request(request: { method: string; params: Record<string, unknown> }, schema: never): Promise<unknown>;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

function registerFileTool<S extends V1McpServer | V2McpServer>(server: S): S {
  (server as V1McpServer).registerTool(
    "report",
    { description: "Returns a file block" },
    async () => RESULT as never,
  );
  return server;
}

async function pair(
  server: { connect(transport: never): Promise<void> },
  client: Requesting & { connect(t: never): Promise<void> },
  memory: typeof V1Memory | typeof V2Memory,
): Promise<Requesting> {
  const [a, b] = memory.createLinkedPair();
  await Promise.all([server.connect(b as never), client.connect(a as never)]);
  cleanups.push(() => client.close());
  return client;
}

/** The refusal as the client sees it: JSON-RPC `-32602` naming the invalid result. */
async function callRefused(client: Requesting): Promise<void> {
  const call = client.request(
    { method: "tools/call", params: { name: "report", arguments: {} } },
    LOOSE as never,
  );
  await expect(call).rejects.toMatchObject({
    code: -32602,
    message: expect.stringContaining("Invalid tools/call result"),
  });
}

describe('the {type: "file"} content block is refused by the SDK servers', () => {
  it("SDK v1 McpServer (2025 era)", async () => {
    const server = registerFileTool(new V1McpServer({ name: "s", version: "1.0.0" }));
    const client = new V1Client({ name: "c", version: "1.0.0" }, DECLARED as never);
    await callRefused(await pair(server, client as never, V1Memory));
  });

  it("SDK v1 low-level Server: its tools/call handler is wrapped by the same validation", async () => {
    const server = new V1Server({ name: "s", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(CallToolRequestSchema, async () => RESULT as never);
    const client = new V1Client({ name: "c", version: "1.0.0" }, DECLARED as never);
    await callRefused(await pair(server, client as never, V1Memory));
  });

  it("SDK v2 McpServer, 2025 era", async () => {
    const server = registerFileTool(new V2McpServer({ name: "s", version: "1.0.0" }));
    const client = new V2Client({ name: "c", version: "1.0.0" }, DECLARED as never);
    await callRefused(await pair(server as never, client as never, V2Memory));
  });

  it("SDK v2 McpServer, 2026-07-28 (the client capability in _meta changes nothing)", async () => {
    const handler = createMcpHandler(() =>
      registerFileTool(new V2McpServer({ name: "s", version: "1.0.0" })),
    );
    const client = new V2Client({ name: "c", version: "1.0.0" }, {
      ...DECLARED,
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    } as never);
    await client.connect(
      new V2HttpTransport(new URL("http://in-process.test/mcp"), {
        fetch: (url, init) => handler.fetch(new Request(url, init), {}),
      }),
    );
    cleanups.push(async () => {
      await client.close();
      await handler.close();
    });
    expect(client.getProtocolEra()).toBe("modern");
    await callRefused(client as unknown as Requesting);
  });

  it("the same result without the file block passes, so the block alone is what is refused", async () => {
    const server = new V1McpServer({ name: "s", version: "1.0.0" });
    server.registerTool("report", {}, async () => ({
      content: [RESULT.content[0] as { type: "text"; text: string }],
    }));
    const client = new V1Client({ name: "c", version: "1.0.0" });
    const connected = await pair(server, client as never, V1Memory);
    const result = (await connected.request(
      { method: "tools/call", params: { name: "report", arguments: {} } },
      LOOSE as never,
    )) as z.infer<typeof LOOSE>;
    expect(result.content.map((block) => block.type)).toEqual(["text"]);
  });
});
