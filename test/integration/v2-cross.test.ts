/**
 * Cross-generation: SDK v2 clients against our SDK v1 server (stateful Streamable HTTP, one
 * `McpServer` per session). The v1 client against our v2 server is in `v2-http.test.ts`.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningHttpServer, serveHttp } from "../../examples/shared/serve-http.js";
import {
  type AnyClient,
  type ClientKind,
  connectHttp,
  type FilesApp,
  filesApp,
  newV1Server,
  rpcError,
  type ToolResult,
  upload,
} from "../mcp/v2/harness.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let app: FilesApp;
let http: RunningHttpServer;
const clients: AnyClient[] = [];

beforeEach(async () => {
  app = await filesApp();
  http = await serveHttp({ createServer: () => app.mount(newV1Server()), routes: app.routes });
  app.setOrigin(http.url);
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await http.close();
  await app.close();
});

describe.each<ClientKind>(["v2-legacy", "v2-auto"])("SDK v1 server (sessions), %s client", (kind) => {
  it("runs the whole flow, and two sessions do not see each other's files", async () => {
    const client = await connectHttp(kind, http.mcpUrl);
    const other = await connectHttp(kind, http.mcpUrl);
    clients.push(client, other);
    if (kind === "v2-auto") {
      // A 2025-only server: the probe falls back to the initialize handshake.
      expect((client as unknown as { getProtocolEra(): string }).getProtocolEra()).toBe("legacy");
    }
    const bytes = randomBytes(200_000);
    const uploaded = await upload(client, "data.bin", bytes);
    const result = (await client.callTool({
      name: "concat",
      arguments: { files: [uploaded.handle] },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    const download = await fetch(result._meta?.download_url as string);
    expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(sha256(bytes));
    const artifact = result.content.find((block) => block.type === "resource_link")?.uri as string;
    expect((await client.listResources()).resources.map((r) => r.uri).sort()).toEqual(
      [artifact, uploaded.uri].sort(),
    );

    expect((await other.listResources()).resources).toEqual([]);
    expect((await rpcError(other.readResource({ uri: uploaded.uri }))).code).toBe(-32602);
    const stolen = (await other.callTool({
      name: "concat",
      arguments: { files: [uploaded.handle] },
    })) as ToolResult;
    expect(stolen.isError).toBe(true);
  });
});
