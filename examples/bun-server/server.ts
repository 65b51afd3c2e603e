/**
 * bun-server: an MCP server on Bun with SDK v2 (`@modelcontextprotocol/server`) that takes and
 * returns files, with no disk in the picture: files live in a memory store, a resolved file is read
 * as bytes (`FileBridge({ disk: false })`), outputs become artifacts with signed download URLs, and
 * one `Bun.serve` fetch handler serves both the file routes and `/mcp` (all web-standard
 * `Request → Response`, no Node adapter).
 *
 * - `get_upload_url`: an upload ticket (single-use signed URL + an `upload://` handle).
 * - `count_words`: takes a file (handle, resource URI, `data:` URL…), reads its bytes.
 * - `shout`: takes a text file and returns it upper-cased as an artifact: a `resource_link`, and a
 *   signed download URL (ranges supported).
 *
 * The scope of a caller's files is its authenticated user: a bearer token printed at start (or the
 * `MCP_TOKEN` environment variable) stands for the user "demo"; a call without it is refused.
 *
 *   bun run examples/bun-server/server.ts            # PORT=8787 to pick the port (default: a free one)
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import {
  Artifacts,
  createFileRoutes,
  defaultScope,
  FileBridge,
  memoryState,
  memoryStore,
  ResourceRegistry,
  SignedUrlMinter,
  toToolErrorResult,
  UploadHandleResolver,
} from "../../src/index.js";

/** The part of Bun's global this example uses (so it typechecks without `@types/bun`). */
declare const Bun: {
  serve(options: { hostname: string; port: number; fetch(request: Request): Promise<Response> }): {
    port: number;
  };
};

const host = "127.0.0.1";
const token = process.env.MCP_TOKEN ?? crypto.randomUUID();
const secret = process.env.SIGNING_SECRET ?? crypto.randomUUID() + crypto.randomUUID();

// The pieces: all of them work without a disk.
const store = memoryStore({ maxTotalBytes: 256 * 1024 * 1024 });
const state = memoryState();
let baseUrl = "";
const minter = new SignedUrlMinter({ secret, baseUrl: () => baseUrl, state });
const registry = new ResourceRegistry({ store, minter });
const artifacts = new Artifacts({ store, registry, minter });
const bridge = new FileBridge({ disk: false, resolvers: [registry.resolver()] });
const uploads = new UploadHandleResolver({ store, minter, state, bridge });
const routes = createFileRoutes({ store, minter, state, registry });

function mount(server: McpServer): McpServer {
  uploads.attach(server);
  registry.attach(server);
  server.registerTool(
    "count_words",
    {
      description: "Counts the words of a text file (an upload:// handle, a resource URI or a data: URL).",
      inputSchema: z.object({ document: z.string() }),
    },
    bridge.withFiles(
      async ({ document }) => {
        const text = new TextDecoder().decode(await document.bytes());
        const words = text.split(/\s+/).filter(Boolean).length;
        return {
          content: [{ type: "text", text: `${document.name}: ${words} words (sha256 ${document.sha256})` }],
        };
      },
      { fields: ["document"], pass: "file" },
    ),
  );
  server.registerTool(
    "shout",
    {
      description: "Returns a text file upper-cased, as a downloadable artifact.",
      inputSchema: z.object({ document: z.string() }),
    },
    bridge.withFiles(
      async ({ document }, extra) => {
        try {
          const text = new TextDecoder().decode(await document.bytes()).toUpperCase();
          const captured = await artifacts.capture({
            scope: defaultScope(extra as never),
            bytes: new TextEncoder().encode(text),
            name: `shouted-${document.name}`,
            mimeType: "text/plain",
          });
          return { content: captured.content, _meta: captured._meta };
        } catch (error) {
          return toToolErrorResult(error);
        }
      },
      { fields: ["document"], pass: "file" },
    ),
  );
  return server;
}

const mcp = createMcpHandler(() => mount(new McpServer({ name: "bun-server-example", version: "1.0.0" })));

const server = Bun.serve({
  hostname: host,
  port: Number(process.env.PORT ?? 0),
  async fetch(request: Request): Promise<Response> {
    const files = await routes(request);
    if (files) return files;
    if (new URL(request.url).pathname !== "/mcp") return new Response("Not found", { status: 404 });
    const header = request.headers.get("authorization");
    if (header !== `Bearer ${token}`) {
      return Response.json(
        { jsonrpc: "2.0", error: { code: -32001, message: "Unauthorized" }, id: null },
        { status: 401, headers: { "www-authenticate": 'Bearer realm="mcp"' } },
      );
    }
    return mcp.fetch(request, {
      authInfo: { token, clientId: "bun-example", scopes: [], extra: { sub: "demo" } },
    });
  },
});
baseUrl = `http://${host}:${server.port}`;
// One line a script (or the test) can read: where the server is, and the token that opens it.
console.log(JSON.stringify({ url: baseUrl, mcpUrl: `${baseUrl}/mcp`, token }));
