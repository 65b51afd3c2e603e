/**
 * chat-uploads: files uploaded per chat, surfaced as MCP resources.
 *
 * - `POST /api/uploads/{chat_id}/{rel_path}` with `Authorization: Bearer <key>` stores a file (the
 *   library's direct upload route, `authorize` hook) when the key may access that chat; nested
 *   folders in `rel_path` are kept.
 * - `resources/list` shows the files of the chat named by the `X-Chat-Id` header. The header is
 *   accepted only together with an API key that may access that chat: the scope is the access
 *   boundary, so it comes from verified credentials, never from a bare header.
 * - `notifications/resources/list_changed` fires right after an upload.
 * - `resources/read file://uploads/{chat_id}/{rel_path}` works without `X-Chat-Id`: the URI names
 *   its chat (chat ids are not secrets, so the template keeps them raw), and `authorize` lets a
 *   caller read it when its API key may access that chat.
 *
 * - On SDK v2 (`--sdk v2`, or `start({ sdk: "v2" })`) the same pieces on a stateless v2 `McpServer`
 *   (protocol 2026-07-28, 2025 clients served statelessly): there is no session, so the scope comes
 *   from the same verified credentials. `X-Chat-Id` is accepted under exactly the same rule; without
 *   it, a caller with a known API key gets that key's own (empty) scope, where v1 gives the session's,
 *   and a caller without one is refused (`FORBIDDEN`) — never a shared default. `list_changed` reaches
 *   2026-07-28 clients through `subscriptions/listen` (`registry.publishTo`).
 *
 *   npx tsx examples/chat-uploads/server.ts            # prints the URL and the API key
 *   npx tsx examples/chat-uploads/server.ts --sdk v2   # the same on @modelcontextprotocol/server 2.x
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type AuthInfo, McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import {
  createFileRoutes,
  type Duration,
  defaultScope,
  FileBridgeError,
  type FileStore,
  fsStore,
  ResourceRegistry,
  type ScopeSource,
  SignedUrlMinter,
} from "../../src/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import { type NodeRoute, type RunningHttpServer, serveHttp } from "../shared/serve-http.js";
import { type RunningV2Server, serveHttpV2 } from "../shared/serve-http-v2.js";

/** An API key and the chats it may access. */
export interface ChatGrant {
  key: string;
  /** Chat ids this key may upload to, list and read. */
  chats: string[];
}

/** Options of {@link start}. */
export interface ChatUploadsOptions {
  /**
   * API keys of a trusted backend, allowed to upload to and read every chat.
   * @default env CHAT_UPLOADS_API_KEY, else one random key (none when `grants` is given)
   */
  apiKeys?: string[];
  /** API keys limited to some chats. @default [] */
  grants?: ChatGrant[];
  /** Folder the files are kept in. @default join(os.tmpdir(), "mcp-chat-uploads") */
  dataDir?: string;
  /** How long an uploaded file is kept. @default "24h" */
  uploadTtl?: Duration;
  /** Largest upload, in bytes. @default 104857600 (100 MiB) */
  maxBytes?: number;
  /** @default 0 (a free port) */
  port?: number;
  /**
   * Which MCP SDK generation serves `/mcp`: v1 (`@modelcontextprotocol/sdk`, one session per client)
   * or v2 (`@modelcontextprotocol/server`, stateless, 2026-07-28 and 2025 clients). @default "v1"
   */
  sdk?: "v1" | "v2";
}

/** A running chat-uploads server. */
export interface ChatUploadsServer {
  /** Base URL, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** The MCP endpoint. */
  mcpUrl: URL;
  apiKeys: string[];
  grants: ChatGrant[];
  store: FileStore;
  registry: ResourceRegistry;
  /** Which SDK generation serves `/mcp`. */
  sdk: "v1" | "v2";
  http: RunningHttpServer | RunningV2Server;
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
  const grants = options.grants ?? [];
  const apiKeys =
    options.apiKeys ??
    (grants.length > 0 ? [] : [process.env.CHAT_UPLOADS_API_KEY ?? randomBytes(18).toString("base64url")]);
  // Keys are compared by digest, in constant time, so a key's length and bytes do not leak.
  const digest = (key: string) => createHash("sha256").update(key).digest();
  const known: Array<{ digest: Buffer; chats: ReadonlySet<string> | "all" }> = [
    ...apiKeys.map((key) => ({ digest: digest(key), chats: "all" as const })),
    ...grants.map((grant) => ({ digest: digest(grant.key), chats: new Set(grant.chats) })),
  ];
  /** The known key an `Authorization: Bearer <key>` value names, if any. */
  const keyOf = (authorization: string | null | undefined) => {
    const match = /^Bearer (.+)$/.exec(authorization ?? "");
    if (!match) return undefined;
    const given = digest(match[1] as string);
    const entry = known.find((candidate) => timingSafeEqual(candidate.digest, given));
    return entry === undefined ? undefined : { ...entry, given };
  };
  /** Whether the `Authorization: Bearer <key>` value names a key that may access `chat`. */
  const mayAccess = (authorization: string | null | undefined, chat: string): boolean => {
    const entry = keyOf(authorization);
    return entry !== undefined && (entry.chats === "all" || entry.chats.has(chat));
  };

  const store = fsStore(options.dataDir ?? join(tmpdir(), "mcp-chat-uploads"));
  const registry = new ResourceRegistry({
    store,
    // Chat ids are not secrets (knowing one grants nothing without a key for it), so URIs carry
    // them as they are and name their chat; a session id would never go into a raw template.
    templates: [
      {
        name: "uploads",
        uriTemplate: "file://uploads/{scope}/{+path}",
        title: "Uploaded files",
        description: "Files uploaded to this chat. Pass the URI to a tool as a file argument.",
        kind: "upload",
        scopeInUri: "raw",
      },
    ],
    // The scope is the access boundary. X-Chat-Id only picks which of the caller's chats this
    // session looks at: it is accepted after the API key is checked against that chat, and refused
    // otherwise. Without it, the caller's own scope (this example never stores files there): on v1
    // the session's; on v2 (no session) the verified key's, and none for a caller without a key.
    scope: (extra) => {
      const chat = header(extra, "x-chat-id");
      if (chat === undefined) return defaultScope(extra);
      if (!mayAccess(header(extra, "authorization"), chat)) {
        throw new FileBridgeError("FORBIDDEN", "X-Chat-Id needs an API key that may access that chat", {
          data: { reason: "chat_not_allowed" },
        });
      }
      return chat;
    },
    // URIs are self-contained: a caller whose key may access the chat named in a URI may read it.
    authorize: (chat, { extra }) => mayAccess(header(extra, "authorization"), chat),
  });

  // The minter's URL is only known once the port is; the routes are built right after listening.
  let files: ReturnType<typeof toNodeHandler> | undefined;
  const routes: NodeRoute = (req, res, next) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const upload = /^\/api\/uploads\/([^/]+)\/(.+)$/.exec(path);
    if (!upload || !files) return next();
    // Map the public shape onto the library's direct route: {base}/scopes/{scope}/files/{name}.
    req.url = `/files/scopes/${upload[1]}/files/${upload[2]}`;
    files(req, res);
  };
  const sdk = options.sdk ?? "v1";
  const http =
    sdk === "v2"
      ? await serveHttpV2({
          port: options.port ?? 0,
          // Built for every request (the v2 endpoint is stateless); mounting is the same line.
          createServer: () => {
            const server = new McpServerV2({ name: "chat-uploads", version: "1.0.0" });
            registry.attach(server);
            return server;
          },
          // No session to fall back on: a known key is the caller's verified identity (its digest
          // as the user id, so defaultScope gives the key its own scope); any other caller is
          // anonymous, and the scope function refuses it wherever a scope is needed.
          authenticate: (request): AuthInfo | undefined => {
            const entry = keyOf(request.headers.get("authorization"));
            if (entry === undefined) return undefined;
            const sub = `api-key:${entry.given.toString("base64url")}`;
            return { token: "(api key)", clientId: "chat-uploads", scopes: [], extra: { sub } };
          },
          routes,
        })
      : await serveHttp({
          port: options.port ?? 0,
          createServer: () => {
            const server = new McpServer({ name: "chat-uploads", version: "1.0.0" });
            registry.attach(server);
            return server;
          },
          routes,
        });
  // 2026-07-28 clients hear of uploads through subscriptions/listen streams, fed by the handler.
  if ("handler" in http) registry.publishTo(http.handler);
  const minter = new SignedUrlMinter({ secret: randomBytes(32), baseUrl: http.url });
  files = toNodeHandler(
    createFileRoutes({
      store,
      minter,
      maxBytes: options.maxBytes ?? 100 * 1024 * 1024,
      uploadTtl: options.uploadTtl ?? "24h",
      authorize: (request, target) => mayAccess(request.headers.get("authorization"), target.scope),
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
    grants,
    store,
    registry,
    sdk,
    http,
    async close() {
      await http.close();
      await registry.close();
      await store.close?.();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sdk = process.argv.includes("--sdk") ? process.argv[process.argv.indexOf("--sdk") + 1] : "v1";
  if (sdk !== "v1" && sdk !== "v2") throw new Error("--sdk takes v1 or v2");
  const app = await start({ port: Number(process.env.PORT ?? 3000), sdk });
  console.log(`chat-uploads listening on ${app.url} (MCP SDK ${sdk})`);
  console.log(`  MCP endpoint: ${app.mcpUrl}`);
  console.log(`  upload:       POST ${app.url}/api/uploads/{chat_id}/{rel_path}`);
  console.log(`  API key:      ${app.apiKeys[0]} (every chat)`);
}
