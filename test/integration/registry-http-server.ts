import { randomUUID } from "node:crypto";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import type { ScopeFunction } from "../../src/scope/scope.js";
import { memoryStore } from "../../src/storage/memory-store.js";

/**
 * A real Streamable HTTP MCP server on 127.0.0.1 (port 0): one McpServer + transport per session,
 * all sharing one ResourceRegistry, as the SDK examples do. Each session has a `put_file` tool that
 * stores a file in the session's scope and returns its link.
 */
export interface RegistryHttpServer {
  url: string;
  registry: ResourceRegistry;
  /** Resolves once the session's standalone SSE stream (for notifications) is open. */
  sseReady(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRegistryHttpServer(
  options: {
    scope?: ScopeFunction;
    /** The scope to `attach(server, { scope })` each session with, from its initialize request. */
    attachScope?: (req: IncomingMessage) => string | undefined;
  } = {},
): Promise<RegistryHttpServer> {
  const { attachScope, ...registryOptions } = options;
  const registry = new ResourceRegistry({ store: memoryStore(), ...registryOptions });
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const ready = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const readyFor = (sessionId: string) => {
    let entry = ready.get(sessionId);
    if (!entry) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      entry = { promise, resolve };
      ready.set(sessionId, entry);
    }
    return entry;
  };

  const newSession = async (req: IncomingMessage): Promise<StreamableHTTPServerTransport> => {
    const server = new McpServer({ name: "registry-http", version: "1.0.0" });
    const scope = attachScope?.(req);
    registry.attach(server, scope === undefined ? {} : { scope });
    server.registerTool(
      "put_file",
      { description: "Stores a text file", inputSchema: { name: z.string(), text: z.string() } },
      async ({ name, text }, extra) => {
        const file = await registry.add(new TextEncoder().encode(text), {
          scope: extra.sessionId as string,
          name,
          kind: "upload",
        });
        return registry.link(file);
      },
    );
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    servers.push(server);
    await server.connect(transport);
    return transport;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const header = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(header) ? header[0] : header;
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (req.method !== "POST" || sessionId) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"unknown session"}');
        return;
      }
      transport = await newSession(req);
    }
    if (req.method === "GET" && sessionId) {
      const entry = readyFor(sessionId);
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
      res.writeHead = ((...args: unknown[]) => {
        const result = writeHead(...args);
        if (args[0] === 200) entry.resolve();
        return result;
      }) as typeof res.writeHead;
    }
    await transport.handleRequest(req, res);
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    registry,
    sseReady: (sessionId) => readyFor(sessionId).promise,
    async close() {
      await Promise.all(servers.map((s) => s.close().catch(() => {})));
      await registry.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
