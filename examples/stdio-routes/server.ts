/**
 * A stdio MCP server with upload and download routes: the model talks over stdin/stdout, the bytes
 * go over HTTP on 127.0.0.1. When the client goes away (stdin closes) the process closes the HTTP
 * listener and its connections and exits — it neither lingers nor keeps the port.
 *
 *   FILES_SECRET=$(openssl rand -hex 32) PORT=3100 npx tsx examples/stdio-routes/server.ts
 *
 * In your own project the imports are `mcp-file-bridge` and `mcp-file-bridge/node`.
 */

import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  createFileRoutes,
  FileBridge,
  fsStore,
  memoryState,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";
import { toNodeHandler } from "../../src/node/index.js";

const port = Number(process.env.PORT ?? 3100);
let origin = `http://127.0.0.1:${port}`;
const store = fsStore(process.env.FILES_DIR ?? "./files");
const state = memoryState();
const minter = new SignedUrlMinter({ secret: process.env.FILES_SECRET ?? "", baseUrl: () => origin, state });
const bridge = new FileBridge();
const uploads = new UploadHandleResolver({ store, minter, state, bridge });

const server = new McpServer({ name: "csv-lines", version: "1.0.0" });
uploads.attach(server); // get_upload_url and check_upload
server.registerTool(
  "count_lines",
  { description: "Counts the lines of a text file.", inputSchema: { file: bridge.fileInput() } },
  bridge.withFiles(
    async ({ file }) => {
      const lines = (await readFile(file, "utf8")).split("\n").filter(Boolean).length;
      return { content: [{ type: "text", text: `${lines} lines` }] };
    },
    { fields: ["file"] },
  ),
);

const http = createServer(toNodeHandler(createFileRoutes({ store, minter, state })));
await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
console.error(`files on ${origin}`); // stdout belongs to the MCP messages

// The client went away: stop listening, drop open connections, close the store, exit.
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await store.close?.();
  process.exit(0);
}
process.stdin.once("end", () => void stop());
process.stdin.once("close", () => void stop());
const transport = new StdioServerTransport();
transport.onclose = () => void stop();
await server.connect(transport);
