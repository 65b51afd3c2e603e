/**
 * `McpHost.rewriteListedTools` on SDK v2: each `tools/list` answer rewritten for the client that
 * asked, whether the `McpServer` mounted its `tools/list` handler before the rewrite was added or
 * after; the rewrite sees that request's client capabilities, and the tools it got stay unchanged.
 */
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { toHost } from "../../../src/mcp/index.js";

const open: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const each of open.splice(0)) await each.close().catch(() => undefined);
});

async function listFor(server: McpServer, capabilities: Record<string, unknown>) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "lister", version: "1.0.0" }, { capabilities } as never);
  await client.connect(clientSide);
  open.push(client, server);
  return (await client.listTools()).tools;
}

const echo = async () => ({ content: [] });

describe("rewriteListedTools (SDK v2)", () => {
  for (const order of ["tools registered first", "rewrite added first"] as const) {
    it(`rewrites every listed tool per request (${order})`, async () => {
      const server = new McpServer({ name: "rewrite", version: "1.0.0" });
      const seen: unknown[] = [];
      const add = () =>
        toHost(server).rewriteListedTools?.((tools, ctx) => {
          seen.push(ctx.clientCapabilities?.experimental);
          return ctx.clientCapabilities?.experimental
            ? tools.map((tool) => ({ ...tool, description: `${String(tool.description)} (tailored)` }))
            : [...tools];
        });
      if (order === "rewrite added first") add();
      server.registerTool("one", { description: "One", inputSchema: { a: z.string() } }, echo);
      if (order === "tools registered first") add();
      server.registerTool("two", { description: "Two" }, echo);
      const tailored = await listFor(server, { experimental: { tailor: {} } });
      expect(tailored.map((tool) => tool.description)).toEqual(["One (tailored)", "Two (tailored)"]);
      expect(seen).toEqual([{ tailor: {} }]);
    });
  }

  it("leaves other clients' listings as registered", async () => {
    const server = new McpServer({ name: "rewrite", version: "1.0.0" });
    toHost(server).rewriteListedTools?.((tools, ctx) =>
      ctx.clientCapabilities?.experimental ? [] : [...tools],
    );
    server.registerTool("one", { description: "One" }, echo);
    expect((await listFor(server, {})).map((tool) => tool.name)).toEqual(["one"]);
  });
});
