import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningV2Server, serveHttpV2, staticTokens } from "../../examples/shared/serve-http-v2.js";
import {
  type AnyClient,
  type ClientKind,
  connectHttp,
  type FilesApp,
  filesApp,
  newV2Server,
  rpcError,
  TOKENS,
  type ToolResult,
  upload,
} from "../mcp/v2/harness.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let app: FilesApp;
let http: RunningV2Server;
const clients: AnyClient[] = [];

beforeEach(async () => {
  app = await filesApp();
  http = await serveHttpV2({
    createServer: () => app.mount(newV2Server()),
    routes: app.routes,
    authenticate: staticTokens(TOKENS),
  });
  app.setOrigin(http.url);
  app.registry.publishTo(http.handler);
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await http.close();
  await app.close();
});

async function connect(kind: ClientKind, token?: string): Promise<AnyClient> {
  const client = await connectHttp(kind, http.mcpUrl, token);
  clients.push(client);
  return client;
}

describe.each<ClientKind>(["v2-modern", "v2-legacy", "v1"])(
  "stateless SDK v2 server over HTTP, %s client",
  (kind) => {
    it("runs the whole flow: upload, tool call with the handle, artifact download, resources", async () => {
      const client = await connect(kind, "token-alice");
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name).sort()).toEqual([
        "check_upload",
        "concat",
        "get_upload_url",
      ]);

      const big = randomBytes(300_000);
      const uploaded = await upload(client, "big.bin", big);
      expect(uploaded.sha256).toBe(sha256(big));
      const dataUrl = `data:text/plain;name=tail.txt;base64,${Buffer.from("tail\n").toString("base64")}`;
      const result = (await client.callTool({
        name: "concat",
        arguments: { files: [uploaded.handle, dataUrl] },
      })) as ToolResult;
      expect(result.isError).toBeFalsy();
      const link = result.content.find((block) => block.type === "resource_link");
      expect(link?.uri).toMatch(/^artifact:\/\//);
      const download = await fetch(result._meta?.download_url as string);
      expect(download.status).toBe(200);
      expect(sha256(new Uint8Array(await download.arrayBuffer()))).toBe(
        sha256(Buffer.concat([big, Buffer.from("tail\n")])),
      );

      const listed = await client.listResources();
      expect(listed.resources.map((resource) => resource.uri).sort()).toEqual(
        [uploaded.uri, link?.uri as string].sort(),
      );
      const read = await client.readResource({ uri: link?.uri as string });
      expect(read.contents[0]?.uri).toBe(link?.uri);

      // One server per request, each closed after it: none stays attached to the registry.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const attached = (app.registry as unknown as { notifier: { attachments: Map<object, unknown> } })
        .notifier.attachments;
      expect(attached.size).toBe(0);

      const missing = uploaded.uri.replace(/[^/]+$/, "missing.bin");
      const error = await rpcError(client.readResource({ uri: missing }));
      expect(error.code).toBe(-32602);
      expect(error.data).toMatchObject({ uri: missing });
    });

    it("keeps two authenticated subjects apart", async () => {
      const alice = await connect(kind, "token-alice");
      const bob = await connect(kind, "token-bob");
      const secret = await upload(alice, "secret.txt", Buffer.from("alice only\n"));

      expect((await bob.listResources()).resources).toEqual([]);
      const read = await rpcError(bob.readResource({ uri: secret.uri }));
      expect(read.code).toBe(-32602);
      const call = (await bob.callTool({
        name: "concat",
        arguments: { files: [secret.handle] },
      })) as ToolResult;
      expect(call.isError).toBe(true);
      expect(call.content[0]?.text).toMatch(/NOT_FOUND/);
      expect((await alice.listResources()).resources.map((resource) => resource.uri)).toEqual([secret.uri]);
    });

    it("refuses an unauthenticated stateless request: no shared scope", async () => {
      const anonymous = await connect(kind);
      const ticket = (await anonymous.callTool({ name: "get_upload_url", arguments: {} })) as ToolResult;
      expect(ticket.isError).toBe(true);
      expect(ticket.content[0]?.text).toMatch(
        /^Error FORBIDDEN: files on this server belong to a signed-in user or to an MCP session/,
      );
      const dataUrl = `data:text/plain;base64,${Buffer.from("x").toString("base64")}`;
      const call = (await anonymous.callTool({
        name: "concat",
        arguments: { files: [dataUrl] },
      })) as ToolResult;
      expect(call.isError).toBe(true);
      // withArtifacts derives the scope before the call and throws: the SDK's own tool-error text.
      expect(call.content[0]?.text).toMatch(/this request has neither: sign in/);
      const list = await rpcError(anonymous.listResources());
      expect(list.code).toBe(-32602);
      expect(list.data).toMatchObject({ code: "FORBIDDEN" });
    });
  },
);
