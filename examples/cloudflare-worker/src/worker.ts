/**
 * An MCP server on Cloudflare Workers that takes and returns files, with no disk:
 *
 * - `/mcp`: MCP over Streamable HTTP, one `McpAgent` (the `agents` package) per session, with the
 *   tools `get_upload_url`, `describe_file` (reads a file's bytes) and `reverse_file` (returns an
 *   artifact with a signed download URL);
 * - `/files/…`: mcp-file-bridge's file routes in the same Worker: single-request uploads (form
 *   `POST`, raw `PUT`), tus 1.0 (`/files/tus/…`), ranged downloads of signed URLs;
 * - files in R2 (`r2Store`), tickets, nonces and handles in a Durable Object (`durableObjectState`).
 *
 * Who is calling is decided here, from the bearer token; the user id reaches the session's agent
 * as its props, and every file, ticket and handle is scoped to it.
 */
import { FileBridgeStateObject } from "mcp-file-bridge/cloudflare";
import { verifiedUser } from "./auth.js";
import type { Env, Props } from "./env.js";
import { FilesAgent } from "./files-agent.js";
import { originOf, piecesFor } from "./pieces.js";

export { FileBridgeStateObject, FilesAgent };

const mcp = FilesAgent.serve("/mcp");

function unauthorized(): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code: -32001, message: "Unauthorized" }, id: null },
    { status: 401, headers: { "www-authenticate": 'Bearer realm="mcp"' } },
  );
}

/** What an unknown session gets, and a session of another user gets the same. */
function sessionNotFound(): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null },
    { status: 404 },
  );
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const origin = originOf(request, env);
    // The file routes carry their own authority (signed, scope-bound, single-use tickets and URLs).
    const files = await piecesFor(env, origin).routes(request);
    if (files) return files;

    const path = new URL(request.url).pathname;
    if (path !== "/mcp" && !path.startsWith("/mcp/")) return new Response("Not found", { status: 404 });
    const userId = await verifiedUser(request, env);
    if (!userId) return unauthorized();

    // A session belongs to the user who started it: a session id is not a credential.
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId) {
      const stub = env.MCP_OBJECT.get(
        env.MCP_OBJECT.idFromName(`streamable-http:${sessionId}`),
      ) as unknown as {
        ownerOf(): Promise<string | undefined>;
      };
      if ((await stub.ownerOf()) !== userId) return sessionNotFound();
    }

    const props: Props = { userId, origin };
    (ctx as ExecutionContext & { props: Props }).props = props;
    return mcp.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
