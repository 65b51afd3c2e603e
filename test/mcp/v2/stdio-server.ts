/**
 * A files server on SDK v2 over stdio with `serveStdio` (both eras on one process: the opening
 * exchange pins the connection's era). The `add_note` tool stores a file, so the registry notifies.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import { memoryStore, ResourceRegistry } from "../../../src/index.js";

const registry = new ResourceRegistry({ store: memoryStore(), notifyDelayMs: 5 });
serveStdio(() => {
  const server = new McpServer({ name: "stdio-files", version: "1.0.0" });
  registry.attach(server);
  server.registerTool("add_note", { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => {
    const file = await registry.add(Buffer.from(text), { scope: "default", name: "note.txt" });
    return { content: [{ type: "text", text: registry.uriFor(file) }] };
  });
  return server;
});
