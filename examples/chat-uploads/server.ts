/**
 * chat-uploads: files uploaded per chat, surfaced as MCP resources.
 *
 * - `POST /api/uploads/{chat_id}/{rel_path}` with `Authorization: Bearer <key>` stores a file (the
 *   library's direct upload route, `authorize` hook); nested folders in `rel_path` are kept.
 * - `resources/list` shows the files of the chat named by the `X-Chat-Id` header, and
 *   `notifications/resources/list_changed` fires right after an upload.
 * - `resources/read file://uploads/{chat_id}/{rel_path}` works without `X-Chat-Id`: the URI names
 *   its chat, and a caller holding the API key is authorized for every chat.
 *
 *   npx tsx examples/chat-uploads/server.ts   # prints the URL and the API key
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  createFileRoutes,
  type Duration,
  defaultScope,
  type FileStore,
  fsStore,
  ResourceRegistry,
  type ScopeSource,
  SignedUrlMinter,
} from "../../src/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import { type RunningHttpServer, serveHttp } from "../shared/serve-http.js";

/** Options of {@link start}. */
export interface ChatUploadsOptions {
  /** API keys allowed to upload and to read any chat. @default env CHAT_UPLOADS_API_KEY, else one random key */
  apiKeys?: string[];
  /** Folder the files are kept in. @default join(os.tmpdir(), "mcp-chat-uploads") */
  dataDir?: string;
  /** How long an uploaded file is kept. @default "24h" */
  uploadTtl?: Duration;
  /** Largest upload, in bytes. @default 104857600 (100 MiB) */
  maxBytes?: number;
  /** @default 0 (a free port) */
  port?: number;
}

/** A running chat-uploads server. */
export interface ChatUploadsServer {
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** The MCP endpoint. */
  mcpUrl: URL;
  apiKeys: string[];
  store: FileStore;
  registry: ResourceRegistry;
  http: RunningHttpServer;
  close(): Promise<void>;
}

function header(extra: ScopeSource | undefined, name: string): string | undefined {
  const value = extra?.requestInfo?.headers?.[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Starts the server on 127.0.0.1.
 *
 * @example
 * ```ts
 * const app = await start({ apiKeys: ["k1"] });
 * await fetch(`${app.url}/api/uploads/chat-1/notes/todo.txt`, {
 *   method: "POST", headers: { authorization: "Bearer k1", "content-type": "text/plain" }, body: "milk",
 * });
 * ```
 */
export async function start(options: ChatUploadsOptions = {}): Promise<ChatUploadsServer> {
  const apiKeys = options.apiKeys ?? [
    process.env.CHAT_UPLOADS_API_KEY ?? randomBytes(18).toString("base64url"),
  ];
  const keyDigests = apiKeys.map((key) => createHash("sha256").update(key).digest());
  const hasKey = (authorization: string | null | undefined): boolean => {
    const match = /^Bearer (.+)$/.exec(authorization ?? "");
    if (!match) return false;
    const digest = createHash("sha256")
      .update(match[1] as string)
      .digest();
    return keyDigests.some((known) => timingSafeEqual(known, digest));
  };

  const store = fsStore(options.dataDir ?? join(tmpdir(), "mcp-chat-uploads"));
  const registry = new ResourceRegistry({
    store,
    // The chat a session looks at comes from X-Chat-Id; without it, the session's own (empty) scope.
    scope: (extra) => header(extra, "x-chat-id") ?? defaultScope(extra),
    // URIs are self-contained: a caller with the API key may read any chat named in a URI.
    authorize: (_scope, { extra }) => hasKey(header(extra, "authorization")),
  });

  // The minter's URL is only known once the port is; the routes are built right after listening.
  let files: ReturnType<typeof toNodeHandler> | undefined;
  const http = await serveHttp({
    port: options.port ?? 0,
    createServer: () => {
      const server = new McpServer({ name: "chat-uploads", version: "1.0.0" });
      registry.attach(server);
      return server;
    },
    routes: (req, res, next) => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const upload = /^\/api\/uploads\/([^/]+)\/(.+)$/.exec(path);
      if (!upload || !files) return next();
      // Map the public shape onto the library's direct route: {base}/scopes/{scope}/files/{name}.
      req.url = `/files/scopes/${upload[1]}/files/${upload[2]}`;
      files(req, res);
    },
  });
  const minter = new SignedUrlMinter({ secret: randomBytes(32), baseUrl: http.url });
  files = toNodeHandler(
    createFileRoutes({
      store,
      minter,
      maxBytes: options.maxBytes ?? 100 * 1024 * 1024,
      uploadTtl: options.uploadTtl ?? "24h",
      authorize: (request) => hasKey(request.headers.get("authorization")),
      onStored: async (file) => {
        await registry.register(file); // listed at once; list_changed goes to the chat's sessions
      },
      resourceUri: (file) => registry.uriFor(file),
    }),
  );

  return {
    url: http.url,
    mcpUrl: http.mcpUrl,
    apiKeys,
    store,
    registry,
    http,
    async close() {
      await http.close();
      await registry.close();
      await store.close?.();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const app = await start({ port: Number(process.env.PORT ?? 3000) });
  console.log(`chat-uploads listening on ${app.url}`);
  console.log(`  MCP endpoint: ${app.mcpUrl}`);
  console.log(`  upload:       POST ${app.url}/api/uploads/{chat_id}/{rel_path}`);
  console.log(`  API key:      ${app.apiKeys[0]}`);
}
