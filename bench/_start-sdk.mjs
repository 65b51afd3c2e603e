// bench/process-start.ts: an SDK v1 stdio server's start, alone. Prints its peak RSS (KiB) and busy
// CPU (µs, user + system) as it exits.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "start", version: "1.0.0" });
void server;
void StdioServerTransport;
// At exit: what still runs after the last line (timers, I/O a piece started) counts too.
process.on("exit", () => {
  const usage = process.resourceUsage();
  console.log(JSON.stringify({ maxRSS: usage.maxRSS, cpu: usage.userCPUTime + usage.systemCPUTime }));
});
