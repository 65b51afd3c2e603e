// bench/process-start.ts: the same start as _start-bridge.mjs, with FileBridge imported from the
// installed package's `/bridge` entry. Prints its peak RSS (KiB) and busy CPU (µs, user + system)
// as it exits.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { FileBridge } from "mcp-file-bridge/bridge";

const server = new McpServer({ name: "start", version: "1.0.0" });
const bridge = new FileBridge({ roots: [process.cwd()] });
server.registerTool(
  "count_words",
  { inputSchema: { file: bridge.fileInput() } },
  bridge.withFiles(async () => ({ content: [] }), { fields: ["file"] }),
);
void StdioServerTransport;
// At exit: what still runs after the last line (timers, I/O a piece started) counts too.
process.on("exit", () => {
  const usage = process.resourceUsage();
  console.log(JSON.stringify({ maxRSS: usage.maxRSS, cpu: usage.userCPUTime + usage.systemCPUTime }));
});
