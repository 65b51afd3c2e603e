// bench/process-start.ts: the same server without FileBridge: the same tool, its file argument a
// plain string (a path), as the bundle budget's server without FileBridge has it
// (test/package/weigh.ts). Prints its peak RSS (KiB) and busy CPU (µs, user + system) as it exits.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import * as z from "zod/v4";

const server = new McpServer({ name: "start", version: "1.0.0" });
server.registerTool("count_words", { inputSchema: { file: z.string() } }, async () => ({ content: [] }));
void StdioServerTransport;
// At exit: what still runs after the last line (timers, I/O a piece started) counts too.
process.on("exit", () => {
  const usage = process.resourceUsage();
  console.log(JSON.stringify({ maxRSS: usage.maxRSS, cpu: usage.userCPUTime + usage.systemCPUTime }));
});
