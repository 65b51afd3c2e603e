/** SDK v1 Streamable HTTP with one transport per 2025 session, for the tests that serve MCP by hand. */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

/** Sessions served by SDK v1 transports. */
export interface V1Sessions {
  /** Hands a request to its session's transport; a request without a known session gets a new server. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Closes every session's transport (ignoring failures when `quiet`). */
  close(options?: { quiet?: boolean }): Promise<void>;
}

/** One SDK v1 transport per session, each connected to a new server from `newServer()`. */
export function v1Sessions(newServer: () => McpServer | Promise<McpServer>): V1Sessions {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return {
    async handle(req, res) {
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      if (!transport) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        await (await newServer()).connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    },
    async close({ quiet = false } = {}) {
      for (const transport of transports.values()) {
        if (quiet) await transport.close().catch(() => undefined);
        else await transport.close();
      }
    },
  };
}
