/**
 * "Which server asks" on the upload page: the tickets `get_upload_url` mints carry the MCP server's
 * title (else its name) on both SDK generations, unless the resolver names it; the page shows it.
 */
import { Client as V2Client, InMemoryTransport as V2Transport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { uploadPageRenderer } from "../../src/ui/upload-page.js";
import type { UploadTicket } from "../../src/uploads/types.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { codeOfSync } from "../support/helpers.js";
import { connectInMemory } from "../support/in-memory-client.js";

function pieces(serverName?: string) {
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://127.0.0.1:1", state });
  const uploads = new UploadHandleResolver({
    store: memoryStore(),
    minter,
    state,
    scope: () => "s",
    ...(serverName === undefined ? {} : { serverName }),
  });
  return { minter, uploads };
}

async function pageFor(ticket: UploadTicket, minter: SignedUrlMinter, serverName?: string): Promise<string> {
  const token = ticket.upload_url.split("/").at(-1) as string;
  const renderer = uploadPageRenderer(serverName === undefined ? {} : { serverName });
  const request = new Request(ticket.upload_url, { headers: { accept: "text/html" } });
  const response = await renderer.render(request, { token, verifier: minter, maxBytes: 1024, maxFiles: 1 });
  return response.text();
}

describe("the upload page says which server asks", () => {
  it("SDK v1: the server's title, escaped", async () => {
    const { minter, uploads } = pieces();
    const server = new McpServer({ name: "acme", title: "Acme & <Sons>", version: "1.0.0" });
    uploads.attach(server);
    const { client } = await connectInMemory(server, { name: "t", version: "1.0.0" });
    const result = await client.callTool({ name: "get_upload_url", arguments: {} });
    await client.close();
    const ticket = result.structuredContent as unknown as UploadTicket;
    expect(await pageFor(ticket, minter)).toContain(
      "<strong>Acme &amp; &lt;Sons&gt;</strong> asks you for files",
    );
    // The tool's text speaks in the limit's units.
    expect((result.content as Array<{ text: string }>)[0]?.text).toContain("file(s) of 100 MiB each");
  });

  it("SDK v2: the server's name when it has no title; a configured name wins over both", async () => {
    for (const [configured, expected] of [
      [undefined, "word-counter"],
      ["Word Counter (staging)", "Word Counter (staging)"],
    ] as const) {
      const { minter, uploads } = pieces(configured);
      const server = new V2McpServer({ name: "word-counter", version: "1.0.0" });
      uploads.attach(server);
      const client = new V2Client({ name: "t", version: "1.0.0" });
      const [a, b] = V2Transport.createLinkedPair();
      await Promise.all([server.connect(b), client.connect(a)]);
      const result = await client.callTool({ name: "get_upload_url", arguments: {} });
      await client.close();
      const ticket = result.structuredContent as unknown as UploadTicket;
      expect(await pageFor(ticket, minter, "fallback")).toContain(
        `<strong>${expected}</strong> asks you for files`,
      );
    }
  });

  it("requestFiles links name the server too (the link a client without elicitation gets as text)", async () => {
    const { minter, uploads } = pieces();
    const server = new McpServer({ name: "contracts", title: "Contract Review", version: "1.0.0" });
    server.registerTool("ask", { description: "asks for a file" }, async (extra) => {
      const outcome = await uploads.requestFiles(server, extra, { message: "The contract", maxFiles: 1 });
      return outcome.result as never;
    });
    const { client } = await connectInMemory(server, { name: "t", version: "1.0.0" });
    const result = await client.callTool({ name: "ask", arguments: {} });
    await client.close();
    const text = (result.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("\n");
    const url = /http:\/\/127\.0\.0\.1:1\S*\/upload\/[A-Za-z0-9_.~-]+/.exec(text)?.[0];
    expect(url, text).toBeDefined();
    const html = await pageFor({ upload_url: url as string } as UploadTicket, minter);
    expect(html).toContain("<strong>Contract Review</strong> asks you for files");
    expect(html).toContain("The contract");
  });

  it("a ticket minted outside a server shows the renderer's name, or none", async () => {
    const { minter, uploads } = pieces();
    const ticket = await uploads.createTicket("s");
    expect(await pageFor(ticket, minter, "Files Desk")).toContain(
      "<strong>Files Desk</strong> asks you for files",
    );
    expect(await pageFor(ticket, minter)).not.toContain('id="asker"');
    expect(codeOfSync(() => uploadPageRenderer({ serverName: " " }))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => pieces("x".repeat(101)))).toBe("INVALID_OPTION");
  });
});
