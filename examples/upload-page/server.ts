/**
 * upload-page: people hand a tool their files — three ways, one set of signed upload tickets.
 *
 * - `request_document` asks the client to open the upload page (URL-mode elicitation, MCP
 *   2025-11-25) through `uploads.requestFiles`, waits for the upload and returns the file; a client
 *   without URL elicitation gets the link as text.
 * - `upload_files` returns an upload ticket and is linked to the MCP App upload widget
 *   (`ui://mcp-file-bridge/upload.html`): hosts with MCP Apps show a file picker in the chat.
 * - every upload link opens the upload page in a browser (`GET /files/upload/{token}`).
 *
 *   npx tsx examples/upload-page/server.ts     # prints the MCP URL
 */
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  createFileRoutes,
  fsStore,
  memoryState,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import { type FileRequests, uploadWidgetResource } from "../../src/ui/index.js";
import { type RunningHttpServer, serveHttp } from "../shared/serve-http.js";

/** One scope for this single-user demo; a real server derives it from the session or the user. */
const SCOPE = "demo";

export interface UploadPageServer extends RunningHttpServer {
  requests: FileRequests;
  uploads: UploadHandleResolver;
}

export async function start(options: { port?: number; dataDir?: string } = {}): Promise<UploadPageServer> {
  const store = fsStore(options.dataDir ?? (await mkdtemp(join(tmpdir(), "mcp-upload-page-"))));
  const state = memoryState();
  let baseUrl = "http://127.0.0.1";
  const minter = new SignedUrlMinter({
    secret: process.env.FILE_URL_SECRET ?? randomBytes(32).toString("hex"),
    baseUrl: () => baseUrl,
    state,
  });
  const uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    maxFiles: 5,
    toolName: "upload_files",
    scope: () => SCOPE,
  });
  // The page for browsers at every upload link, and any-origin CORS so the widget (on the host's
  // sandbox origin) can read its upload reply: the links are capabilities, no cookie is involved.
  const routes = createFileRoutes({ store, minter, state, uploadPage: true, allowedOrigins: "*" });

  const createServer = () => {
    const server = new McpServer({ name: "upload-page-example", version: "1.0.0" });
    // upload_files: an upload ticket, linked to the MCP App upload widget.
    const widget = uploadWidgetResource({ uploadOrigin: new URL(baseUrl).origin, toolName: "upload_files" });
    uploads.attach(server, { widget });
    server.registerTool(
      "request_document",
      { description: "Asks the user for a document and returns it once uploaded." },
      async (extra) => {
        const outcome = await uploads.requestFiles(server, extra, {
          message: "Please upload the document to work on.",
          maxFiles: 1,
        });
        if (outcome.status !== "uploaded") return outcome.result; // the link as text, declined, timeout
        return outcome.result; // a real tool would work on outcome.files[0] here
      },
    );
    return server;
  };

  const running = await serveHttp({ createServer, routes: toNodeHandler(routes), port: options.port ?? 0 });
  baseUrl = running.url;
  return { ...running, requests: uploads.fileRequests, uploads };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const running = await start({ port: Number(process.env.PORT ?? 3000) });
  console.log(`upload-page example: MCP at ${running.mcpUrl}`);
}
