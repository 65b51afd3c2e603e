import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { Artifacts } from "../../src/artifacts/artifacts.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { toNodeHandler } from "../../src/node/index.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore } from "../../src/storage/types.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { close, listen } from "../http/server-helpers.js";

// The server the scope attacks run against: every piece with its defaults (defaultScope, default
// templates), on a real Streamable HTTP server on 127.0.0.1, port 0. `stateless: true` gives the
// SDK's stateless mode (no session id, no auth): the case where a shared "default" scope used to
// put every client in one scope.

export const SECRET = "scope-attack-secret-scope-attack-secret-0123";

export interface ScopeServer {
  origin: string;
  mcpUrl: URL;
  store: FileStore;
  registry: ResourceRegistry;
  /** Session ids the server handed out. */
  sessionIds: string[];
  close(): Promise<void>;
}

/** Starts the server. Tools: `get_upload_url` and `copy` (a file argument in, an artifact out). */
export async function startScopeServer(options: { stateless?: boolean } = {}): Promise<ScopeServer> {
  const dir = await mkdtemp(join(tmpdir(), "scope-attack-"));
  const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = memoryState();
  let origin = "";
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: () => origin, state });
  const registry = new ResourceRegistry({ store, minter });
  const bridge = new FileBridge({ tmpDir: join(dir, "bridge") });
  const uploads = new UploadHandleResolver({ store, minter, state, bridge });
  bridge.addResolver(registry.resolver());
  const artifacts = new Artifacts({ store, minter, registry, tmpDir: join(dir, "artifacts") });
  const files = toNodeHandler(createFileRoutes({ store, minter, state, registry }));

  const buildServer = () => {
    const server = new McpServer({ name: "scope-attack", version: "1.0.0" });
    uploads.attach(server);
    registry.attach(server);
    server.registerTool(
      "copy",
      {
        description: "Copies a file into a new artifact.",
        inputSchema: { file: z.string(), output: z.string().optional() },
      },
      artifacts.withArtifacts(
        bridge.withFiles(
          async (args: { file: string; output?: string }) => {
            await writeFile(args.output as string, await readFile(args.file));
            return { content: [{ type: "text" as const, text: "Copied." }] };
          },
          { fields: ["file"] },
        ),
        { outputPathArg: "output", outputName: "copy.bin" },
      ),
    );
    return server;
  };

  const sessionIds: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((req, res) => {
    files(req, res, async () => {
      if (!req.url?.startsWith("/mcp")) {
        res.writeHead(404).end();
        return;
      }
      if (options.stateless) {
        // The SDK's stateless pattern: a fresh server and transport per request.
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const server = buildServer();
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res);
        return;
      }
      const id = req.headers["mcp-session-id"];
      const existing = typeof id === "string" ? sessions.get(id) : undefined;
      if (existing) {
        await existing.handleRequest(req, res);
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, transport);
          sessionIds.push(sessionId);
        },
      });
      await buildServer().connect(transport);
      await transport.handleRequest(req, res);
    });
  });
  origin = await listen(http);
  return {
    origin,
    mcpUrl: new URL(`${origin}/mcp`),
    store,
    registry,
    sessionIds,
    async close() {
      await close(http);
      await registry.close();
      await store.close?.();
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

/** A client whose every HTTP response body is recorded, byte for byte. */
export interface RecordingClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** All response bodies received so far (awaits the ones still streaming). */
  received(): Promise<string>;
}

export async function connectRecording(url: URL): Promise<RecordingClient> {
  const bodies: Array<Promise<string>> = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    // POST answers (JSON or an SSE stream that ends with the answer) are recorded; the long-lived
    // GET stream would never end, and carries only notifications.
    if ((init?.method ?? "GET") === "POST" && response.body) {
      bodies.push(
        response
          .clone()
          .arrayBuffer()
          .then((buffer) => Buffer.from(buffer).toString("latin1")),
      );
    }
    return response;
  };
  const client = new Client({ name: "scope-attack-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, { fetch: recordingFetch });
  await client.connect(transport);
  return { client, transport, received: async () => (await Promise.all(bodies)).join("\n") };
}

/** Every form a secret could take in a byte stream: as is, base64, base64url, hex, percent-encoded. */
export function encodingsOf(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  return [
    secret,
    encodeURIComponent(secret),
    bytes.toString("base64").replace(/=+$/, ""),
    bytes.toString("base64url"),
    bytes.toString("hex"),
  ];
}

/** The signed-URL tokens (JWTs) in a text, and their decoded header and payload. */
export function tokensIn(text: string): Array<{ token: string; decoded: string }> {
  const found =
    text.match(/\/files\/(?:download|upload)\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/g) ?? [];
  return [...new Set(found)].map((match) => {
    const token = match.slice(match.lastIndexOf("/") + 1);
    const [header, payload] = token.split(".");
    const decoded = [header, payload]
      .map((part) => Buffer.from(part as string, "base64url").toString("latin1"))
      .join("\n");
    return { token, decoded };
  });
}
