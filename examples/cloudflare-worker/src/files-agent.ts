import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpAgent } from "agents/mcp";
import {
  Artifacts,
  FileBridge,
  ResourceRegistry,
  toToolErrorResult,
  UploadHandleResolver,
} from "mcp-file-bridge";
import { z } from "zod";
import type { Env, Props } from "./env.js";
import { MAX_FILE_BYTES, piecesFor } from "./pieces.js";

/** Hex sha256 of bytes, computed here (Web Crypto) from what the tool read. */
async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

const FILE_ARGUMENT =
  "The file: an upload:// handle from get_upload_url, a resource URI of this server, or a data: URL";

/**
 * One MCP session: a Durable Object made by `McpAgent.serve("/mcp")`. Its props are what the Worker
 * verified (the user id); every piece takes its scope from there, never from the request.
 */
export class FilesAgent extends McpAgent<Env, unknown, Props> {
  server = new McpServer({ name: "mcp-file-bridge-cloudflare-example", version: "1.0.0" });

  async init(): Promise<void> {
    const userId = this.props?.userId;
    const origin = this.props?.origin;
    // A session is only ever started by the Worker with a verified user; without one, serve nothing.
    if (!userId || !origin) return;
    const scope = () => userId;
    const { store, state, minter } = piecesFor(this.env, origin);
    const registry = new ResourceRegistry({ store, minter, scope });
    // No disk on Workers: a resolved file is held in memory (bytes(), stream()), capped by maxBytes.
    const bridge = new FileBridge({
      disk: false,
      maxBytes: MAX_FILE_BYTES,
      resolvers: [registry.resolver()],
    });
    const uploads = new UploadHandleResolver({ store, minter, state, bridge, scope });
    const artifacts = new Artifacts({ store, registry, minter, scope, images: false });

    // get_upload_url: a single-use signed URL (form POST, raw PUT, or tus at /files/tus/…) and the
    // upload:// handle the uploaded file answers to, for this user only.
    uploads.attach(this.server);
    registry.attach(this.server);

    this.server.registerTool(
      "describe_file",
      {
        description: "Reads a file's bytes and answers its name, type, size and sha256.",
        inputSchema: { file: z.string().describe(FILE_ARGUMENT) },
      },
      bridge.withFiles(
        async ({ file }) => {
          const bytes = await file.bytes();
          const facts = {
            name: file.name,
            mimeType: file.mimeType,
            size: bytes.byteLength,
            sha256: await sha256Hex(bytes),
          };
          return {
            content: [{ type: "text" as const, text: JSON.stringify(facts) }],
            structuredContent: facts,
          };
        },
        { fields: ["file"], pass: "file", scope },
      ),
    );

    this.server.registerTool(
      "reverse_file",
      {
        description: "Returns the file with its bytes in reverse order, as a downloadable artifact.",
        inputSchema: { file: z.string().describe(FILE_ARGUMENT) },
      },
      bridge.withFiles(
        async ({ file }) => {
          try {
            const reversed = (await file.bytes()).slice().reverse();
            const captured = await artifacts.capture({
              scope: userId,
              bytes: reversed,
              name: `reversed-${file.name}`,
              mimeType: "application/octet-stream",
            });
            return { content: captured.content, _meta: captured._meta };
          } catch (error) {
            return toToolErrorResult(error);
          }
        },
        { fields: ["file"], pass: "file", scope },
      ),
    );
  }

  /**
   * The user this session was started for (read by the Worker before it forwards a request with
   * this session's id, so a session id is of no use to anyone else).
   */
  async ownerOf(): Promise<string | undefined> {
    const props = await this.ctx.storage.get<Props>("props");
    return typeof props?.userId === "string" ? props.userId : undefined;
  }
}
