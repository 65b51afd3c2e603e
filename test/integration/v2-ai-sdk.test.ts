/**
 * An independent client with its own JSON-RPC stack, `@ai-sdk/mcp`, against the stateless v2
 * server: tools (as AI SDK tools and as plain calls), the upload flow, resources, and two users.
 */
import { createHash, randomBytes } from "node:crypto";
import { createMCPClient, type MCPClient } from "@ai-sdk/mcp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningV2Server, serveHttpV2, staticTokens } from "../../examples/shared/serve-http-v2.js";
import {
  type AnyClient,
  type FilesApp,
  filesApp,
  newV2Server,
  TOKENS,
  type ToolResult,
  upload,
} from "../mcp/v2/harness.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let app: FilesApp;
let http: RunningV2Server;
const eras: string[] = [];
const clients: MCPClient[] = [];

beforeEach(async () => {
  app = await filesApp();
  eras.length = 0;
  http = await serveHttpV2({
    createServer: (context) => {
      eras.push(context.era);
      return app.mount(newV2Server());
    },
    routes: app.routes,
    authenticate: staticTokens(TOKENS),
  });
  app.setOrigin(http.url);
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await http.close();
  await app.close();
});

async function aiClient(token: string, discovery: boolean): Promise<MCPClient> {
  const client = await createMCPClient({
    transport: { type: "http", url: http.mcpUrl.href, headers: { authorization: `Bearer ${token}` } },
    protocolVersionDiscovery: discovery,
  });
  clients.push(client);
  return client;
}

describe.each([true, false])(
  "@ai-sdk/mcp against the stateless v2 server (protocolVersionDiscovery: %s)",
  (discovery) => {
    it("uses the tools, uploads, reads resources, and keeps two users apart", async () => {
      const alice = await aiClient("token-alice", discovery);
      const bob = await aiClient("token-bob", discovery);

      const tools = await alice.tools();
      expect(Object.keys(tools).sort()).toEqual(["check_upload", "concat", "get_upload_url"]);

      const bytes = randomBytes(100_000);
      const uploaded = await upload(alice as unknown as AnyClient, "blob.bin", bytes);
      // The AI SDK's own tool wrapper, as a model's tool call would run it.
      const concat = tools.concat as unknown as {
        execute(args: unknown, options: unknown): Promise<ToolResult>;
      };
      const result = await concat.execute(
        { files: [uploaded.handle, { name: "tail.txt", content: Buffer.from("!").toString("base64") }] },
        { toolCallId: "call-1", messages: [] },
      );
      expect(result.isError).toBeFalsy();
      const download = await fetch(result._meta?.download_url as string);
      expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(
        sha256(Buffer.concat([bytes, Buffer.from("!")])),
      );

      const listed = await alice.listResources();
      expect(listed.resources.map((resource) => resource.name).sort()).toEqual(["blob.bin", "joined.bin"]);
      const read = await alice.readResource({ uri: uploaded.uri });
      expect(read.contents[0]?.uri).toBe(uploaded.uri);

      expect((await bob.listResources()).resources).toEqual([]);
      await expect(bob.readResource({ uri: uploaded.uri })).rejects.toThrow();
      const stolen = await bob.callTool({ name: "concat", arguments: { files: [uploaded.handle] } });
      expect(stolen.isError).toBe(true);
      // With discovery it speaks 2026-07-28 (server/discover), without it the 2025 handshake, served statelessly.
      expect(new Set(eras)).toEqual(new Set([discovery ? "modern" : "legacy"]));
    });
  },
);
