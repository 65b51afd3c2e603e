/**
 * upload-page: people hand a tool their files — three ways, one set of signed upload tickets.
 *
 * - `request_document` asks the client to open the upload page (URL-mode elicitation, MCP
 *   2025-11-25), waits for the upload and returns the file; a client without URL elicitation gets
 *   the link as text.
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
import { type CallToolResult, ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  createFileRoutes,
  fsStore,
  memoryState,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import {
  FileRequests,
  uploadPageForToken,
  uploadWidgetResource,
  uploadWidgetToolMeta,
  wantsUploadPage,
} from "../../src/ui/index.js";
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
  const uploads = new UploadHandleResolver({ store, minter, state, maxFiles: 5 });
  const requests = new FileRequests({ store, state, minter, maxFiles: 5 });
  const routes = createFileRoutes({ store, minter, state });

  // The upload page in front of the file routes (createFileRoutes will do this itself).
  const files = toNodeHandler(async (request) => {
    const match = /^\/files\/upload\/([A-Za-z0-9_\-.~]+)$/.exec(new URL(request.url).pathname);
    if (match && wantsUploadPage(request)) {
      return uploadPageForToken(request, { verifier: minter, token: match[1] as string });
    }
    const response = await routes(request);
    // Any-origin CORS so the widget (on the host's sandbox origin) can read its upload reply; the
    // links are capabilities, no cookie is involved. createFileRoutes will have `allowedOrigins`.
    if (response && request.headers.has("origin")) response.headers.set("access-control-allow-origin", "*");
    return response;
  });

  const createServer = () => {
    const server = new McpServer({ name: "upload-page-example", version: "1.0.0" });
    const widget = uploadWidgetResource({ uploadOrigin: new URL(baseUrl).origin, toolName: "upload_files" });
    server.registerResource(
      widget.name,
      widget.uri,
      {
        title: widget.title,
        description: widget.description,
        mimeType: widget.mimeType,
        _meta: widget._meta,
      },
      async () => ({ contents: [widget.contents] }),
    );
    server.registerTool(
      "upload_files",
      {
        description: "Gives the user a place to upload files (a link, or a file picker in the chat).",
        _meta: uploadWidgetToolMeta(widget.uri),
      },
      async () => {
        const ticket = await uploads.createTicket(SCOPE);
        return {
          content: [{ type: "text", text: `Open this link to upload files: ${ticket.upload_url}` }],
          structuredContent: ticket,
        };
      },
    );
    server.registerTool(
      "request_document",
      { description: "Asks the user for a document and returns it once uploaded." },
      async (extra): Promise<CallToolResult> => {
        const request = await requests.create(SCOPE, {
          message: "Please upload the document to work on.",
          maxFiles: 1,
        });
        if (!server.server.getClientCapabilities()?.elicitation?.url)
          return request.fallbackResult() as CallToolResult;
        const answer = await extra.sendRequest(
          { method: "elicitation/create", params: request.elicitation },
          ElicitResultSchema,
          { signal: extra.signal, timeout: request.expiresAt - Date.now() },
        );
        if (answer.action !== "accept") return request.declinedResult(answer.action) as CallToolResult;
        const stored = await request.wait({ signal: extra.signal });
        await extra.sendNotification({
          method: "notifications/elicitation/complete",
          params: { elicitationId: request.id },
        });
        return request.resultFor(stored) as CallToolResult;
      },
    );
    return server;
  };

  const running = await serveHttp({ createServer, routes: files, port: options.port ?? 0 });
  baseUrl = running.url;
  return { ...running, requests, uploads };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const running = await start({ port: Number(process.env.PORT ?? 3000) });
  console.log(`upload-page example: MCP at ${running.mcpUrl}`);
}
