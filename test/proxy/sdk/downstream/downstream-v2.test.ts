/**
 * The proxy served by SDK v2 (`sdk: "v2"`) in front of the fixture upstream: 2026-07-28 clients
 * (stateless, identity from a bearer token), 2025-era clients (sessions) on the same path, both
 * client generations, and what an anonymous stateless caller may and may not do.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../../../src/proxy/index.js";
import {
  type AnyClient,
  type ClientKind,
  connectHttp,
  rpcError,
  type ToolResult,
  upload,
} from "../../../mcp/v2/harness.js";
import { FILE_TOOLS, fixtureCommand, removeDirs, tempDir, textOf } from "../../support.js";

const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789ab";
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let handoff: string;
let out: string;
let marker: string;
let proxy: FileProxy;
let mcpUrl: URL;
const clients: AnyClient[] = [];

beforeAll(async () => {
  handoff = await tempDir("proxy-v2-handoff-");
  out = await tempDir("proxy-v2-out-");
  marker = await tempDir("proxy-v2-marker-");
  proxy = await createFileProxy({
    sdk: "v2",
    authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")),
    config: {
      mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: marker }) },
      servers: {
        up: {
          handoffDir: handoff,
          outputDirs: [out],
          tools: FILE_TOOLS,
        },
      },
    },
    upstreamStderr: "ignore",
  });
  mcpUrl = new URL((await proxy.listen()).mcpUrl);
});

afterAll(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await proxy?.close();
  await removeDirs(handoff, out, marker);
});

async function connect(kind: ClientKind, token?: string): Promise<AnyClient> {
  const client = await connectHttp(kind, mcpUrl, token);
  clients.push(client);
  return client;
}

it("says which SDK serves it", () => {
  expect(proxy.sdk).toBe("v2");
});

describe.each<ClientKind>(["v2-modern", "v2-legacy", "v1"])("proxy on SDK v2, %s client", (kind) => {
  it("passes tools through and runs the file flow: upload handle in, artifact out, resources", async () => {
    const client = await connect(kind, ALICE);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "read_file", "write_file", "get_upload_url"]));
    const echo = (await client.callTool({ name: "echo", arguments: { text: "hi ü" } })) as ToolResult;
    expect(textOf(echo)).toBe("echo: hi ü");

    const bytes = Buffer.from(Array.from({ length: 200_000 }, (_, i) => i % 253));
    const uploaded = await upload(client, "data.bin", bytes);
    const read = (await client.callTool({
      name: "read_file",
      arguments: { path: uploaded.handle },
    })) as ToolResult;
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ sha256: sha256(bytes), size: bytes.length });
    expect(await readdir(handoff)).toEqual([]);

    const body = `report for ${kind}`;
    const written = (await client.callTool({
      name: "write_file",
      arguments: { name: "report.txt", text: body },
    })) as ToolResult;
    const meta = written._meta as { artifact_uri: string; download_url: string };
    expect(await (await fetch(meta.download_url)).text()).toBe(body);
    const resource = await client.readResource({ uri: meta.artifact_uri });
    expect(resource.contents[0]?.text).toBe(body);
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain(meta.artifact_uri);
  });

  it("keeps users apart: Bob can neither list nor read Alice's files, nor use her handle", async () => {
    const alice = await connect(kind, ALICE);
    const bob = await connect(kind, BOB);
    const written = (await alice.callTool({
      name: "write_file",
      arguments: { name: "private.txt", text: "alice only" },
    })) as ToolResult;
    const uri = (written._meta as { artifact_uri: string }).artifact_uri;
    expect((await bob.listResources()).resources.map((r) => r.uri)).not.toContain(uri);
    const refused = await rpcError(bob.readResource({ uri }));
    expect(refused.code).toBe(-32602);
    expect(JSON.stringify(refused)).not.toContain("alice only");

    const uploaded = await upload(alice, "mine.txt", Buffer.from("mine"));
    const stolen = (await bob.callTool({
      name: "read_file",
      arguments: { path: uploaded.handle },
    })) as ToolResult;
    expect(stolen.isError).toBe(true);
    expect(textOf(stolen)).toMatch(/^Error NOT_FOUND/);
  });
});

describe("proxy on SDK v2: callers without an identity", () => {
  it("a stateless (2026-07-28) caller without a token uses plain tools; file features are refused", async () => {
    const anonymous = await connect("v2-modern");
    expect(textOf(await anonymous.callTool({ name: "echo", arguments: { text: "plain" } }))).toBe(
      "echo: plain",
    );
    const ticket = (await anonymous.callTool({ name: "get_upload_url", arguments: {} })) as ToolResult;
    expect(ticket.isError).toBe(true);
    expect(textOf(ticket)).toMatch(/^Error FORBIDDEN/);
    expect(textOf(ticket)).toMatch(/sign in/i);
    const dataUrl = `data:text/plain;base64,${Buffer.from("inline").toString("base64")}`;
    const read = (await anonymous.callTool({
      name: "read_file",
      arguments: { path: dataUrl },
    })) as ToolResult;
    expect(read.isError).toBe(true);
    expect(textOf(read)).toMatch(/^Error FORBIDDEN/);
    // Lists leave the proxy's own files out instead of failing.
    expect((await anonymous.listResources()).resources.every((r) => !r.uri.startsWith("artifact:"))).toBe(
      true,
    );
  });

  // Issue 21 part 3: with auth configured, an anonymous 2025-era caller opens no session (401), as on
  // SDK v1; without auth its session is its scope (test/security/proxy-v2-exhaustion.test.ts).
  it("a 2025-era caller without a token is refused with 401 when auth is configured, as on SDK v1", async () => {
    await expect(connect("v1")).rejects.toThrow(/sessions need a bearer token/);
  });

  it("answers 401 to an unknown token, and 403 to a foreign Host or Origin", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const post = (headers: Record<string, string>) =>
      fetch(mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body,
      });
    const unknown = await post({ authorization: "Bearer not-a-real-token-000000" });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await post({ origin: "https://evil.example" })).status).toBe(403);
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(mcpUrl, {
        method: "POST",
        headers: { host: "evil.example", "content-type": "application/json" },
      });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(body);
    });
    expect(status).toBe(403);
  });
});
