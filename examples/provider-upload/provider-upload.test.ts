import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ClientV2,
  InMemoryTransport as InMemoryTransportV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot, sha256 } from "../../test/support/helpers.js";
import { tempLeftovers } from "../../test/support/temp-leftovers.js";
import { type ProviderUploadExample, start } from "./server.js";

type Sdk = "v1" | "v2";

/**
 * The v1 and v2 clients share the calls used here; the v2 one is typed as v1's for brevity. `modern`
 * makes the v2 client probe `server/discover` and speak 2026-07-28 when the server can (only an SDK v2
 * server can), so its era tells which generation served it.
 */
function newClient(sdk: Sdk, modern = false): Client {
  if (sdk === "v1") return new Client({ name: "test", version: "1.0.0" });
  const options = modern ? { versionNegotiation: { mode: "auto" as const } } : {};
  return new ClientV2({ name: "test", version: "1.0.0" }, options) as unknown as Client;
}

/** The protocol era a client ended up speaking (v1 clients know only 2025-11-25). */
const eraOf = (client: Client) =>
  "getProtocolEra" in client ? (client as unknown as ClientV2).getProtocolEra() : "legacy";

/** Connects a client of the example's generation in memory (one connection: the single-connection scope). */
async function inMemory(example: ProviderUploadExample, sdk: Sdk): Promise<Client> {
  const client = newClient(sdk);
  if (sdk === "v2") {
    const [clientSide, serverSide] = InMemoryTransportV2.createLinkedPair();
    await example.createServerV2().connect(serverSide);
    await (client as unknown as ClientV2).connect(clientSide);
  } else {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([example.createServer().connect(serverSide), client.connect(clientSide)]);
  }
  return client;
}

// The same flows on each SDK generation: a v1 client against the v1 server, a v2 client against the
// v2 server (in memory, over HTTP — stateless on v2 — and the CLI over stdio).
describe.each(["v1", "v2"] as const)("provider-upload example on SDK %s", (sdk) => {
  let dir: string;
  let roots: string;
  let tmp: string;
  let example: ProviderUploadExample | undefined;
  let client: Client | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "provider-upload-test-"));
    roots = join(dir, "shared");
    tmp = join(dir, "bridge-tmp");
    await mkdir(roots);
  });

  afterEach(async () => {
    await client?.close();
    await example?.close();
    client = undefined;
    example = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function connect(options: Parameters<typeof start>[0] = {}): Promise<Client> {
    example = await start({ roots: [roots], tmpDir: tmp, sdk, ...options });
    client = await inMemory(example, sdk);
    return client;
  }

  it("uploads a path and an inline object; the provider receives the exact bytes; temp files are gone", async () => {
    const onDisk = randomBytes(300_000);
    await writeFile(join(roots, "data.bin"), onDisk);
    const inline = Buffer.from("name,score\nada,10\n", "utf8");
    const c = await connect();

    const result = (await c.callTool({
      name: "chat_with_files",
      arguments: {
        prompt: "Summarize these",
        files: [join(roots, "data.bin"), { filename: "scores.csv", content: inline.toString("base64") }],
      },
    })) as CallToolResult;

    expect(result.isError).toBeFalsy();
    const provider = example?.localProvider;
    expect(provider).toBeDefined();
    const received = provider?.received ?? [];
    expect(received.map((f) => f.filename)).toEqual(["data.bin", "scores.csv"]);
    expect(received.map((f) => f.sha256)).toEqual([sha256(onDisk), sha256(inline)]);
    expect(received.map((f) => f.bytes)).toEqual([onDisk.length, inline.length]);
    expect(received.every((f) => f.purpose === "user_data")).toBe(true);
    expect(received[1]?.contentType).toBe("text/csv");
    // Uploaded files are deleted at the provider after the answer.
    expect(received.every((f) => f.deleted)).toBe(true);
    // The chat request referenced exactly the uploaded ids.
    const chat = provider?.completions[0] as {
      messages: Array<{ content: Array<{ type: string; file?: { file_id: string } }> }>;
    };
    const ids = chat.messages[0]?.content.filter((p) => p.type === "file").map((p) => p.file?.file_id);
    expect(ids).toEqual(received.map((f) => f.id));
    expect(result.structuredContent).toMatchObject({
      files: [{ filename: "data.bin" }, { filename: "scores.csv" }],
    });
    // The bridge's per-call temp folders are gone (spare pre-made ones may wait); the original stays.
    expect(await tempLeftovers(tmp)).toEqual([]);
    expect(await readdir(roots)).toEqual(["data.bin"]);
  });

  it("close() leaves the bridge's temp folder quiet: removed without retries", async () => {
    const c = await connect();
    const result = (await c.callTool({
      name: "chat_with_files",
      arguments: {
        prompt: "x",
        files: [{ filename: "a.csv", content: Buffer.from("a,b\n").toString("base64") }],
      },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    await example?.close();
    example = undefined;
    // No spare call folder still being made, none kept for the scope's next call.
    expect(await readdir(tmp)).toEqual([]);
    await rm(tmp, { recursive: true });
  });

  it("keeps the upload when asked; the content read back equals the original byte for byte", async () => {
    const original = randomBytes(64 * 1024 + 7);
    const c = await connect({ deleteUploaded: false });
    const result = (await c.callTool({
      name: "chat_with_files",
      arguments: {
        prompt: "x",
        files: [`data:application/octet-stream;name=blob.bin;base64,${original.toString("base64")}`],
      },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const provider = example?.localProvider;
    const id = provider?.received[0]?.id;
    const response = await fetch(`${provider?.baseUrl}/files/${id}/content`, {
      headers: { authorization: `Bearer ${provider?.apiKey}` },
    });
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(original)).toBe(true);
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("refuses a path outside the roots without calling the provider", async () => {
    const outside = join(dir, "secret.txt");
    await writeFile(outside, "secret");
    const c = await connect();
    const result = (await c.callTool({
      name: "chat_with_files",
      arguments: { prompt: "x", files: [outside] },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toContain("PATH_NOT_ALLOWED");
    expect(example?.localProvider?.received).toEqual([]);
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("reports a provider failure as FETCH_FAILED and still cleans up", async () => {
    await writeFile(join(roots, "a.txt"), "hello");
    const c = await connect();
    const provider = example?.localProvider;
    // A second example pointed at the same stand-in with a wrong key: the provider answers 401.
    const bad = await start({
      roots: [roots],
      tmpDir: tmp,
      providerBaseUrl: provider?.baseUrl,
      providerApiKey: "sk-wrong",
      sdk,
    });
    const badClient = await inMemory(bad, sdk);
    const result = (await badClient.callTool({
      name: "chat_with_files",
      arguments: { prompt: "x", files: [join(roots, "a.txt")] },
    })) as CallToolResult;
    await badClient.close();
    await bad.close();
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toContain("FETCH_FAILED");
    expect(provider?.received).toEqual([]);
    expect(await tempLeftovers(tmp)).toEqual([]);
    expect(c).toBeDefined();
  });

  it("over Streamable HTTP: the same call; on v2 the caller's bearer token is its scope", async () => {
    const onDisk = randomBytes(20_000);
    await writeFile(join(roots, "data.bin"), onDisk);
    example = await start({
      roots: [roots],
      tmpDir: tmp,
      sdk,
      transport: "http",
      tokens: { "tok-ada": "ada" },
    });
    client = newClient(sdk, true);
    const requestInit = { headers: { authorization: "Bearer tok-ada" } };
    const url = example.mcpUrl as URL;
    if (sdk === "v2") {
      await (client as unknown as ClientV2).connect(
        new StreamableHTTPClientTransportV2(url, { requestInit }),
      );
    } else {
      await client.connect(new StreamableHTTPClientTransport(url));
    }
    expect(eraOf(client)).toBe(sdk === "v2" ? "modern" : "legacy");
    const result = (await client.callTool({
      name: "chat_with_files",
      arguments: { prompt: "What is it?", files: ["data.bin"] },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect((result.content[0] as { text: string }).text).toContain(
      `data.bin (20000 bytes, sha256 ${sha256(onDisk).slice(0, 12)}`,
    );
    expect(example.localProvider?.received.map((f) => f.sha256)).toEqual([sha256(onDisk)]);
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it.runIf(sdk === "v2")(
    "stateless v2: a call without a token is FORBIDDEN (no shared scope); an unknown token is 401",
    async () => {
      await writeFile(join(roots, "a.txt"), "hello");
      example = await start({
        roots: [roots],
        tmpDir: tmp,
        sdk,
        transport: "http",
        tokens: { "tok-ada": "ada" },
      });
      const anonymous = new ClientV2({ name: "anon", version: "1.0.0" });
      await anonymous.connect(new StreamableHTTPClientTransportV2(example.mcpUrl as URL));
      client = anonymous as unknown as Client;
      const refused = (await anonymous.callTool({
        name: "chat_with_files",
        arguments: { prompt: "x", files: ["a.txt"] },
      })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect((refused.content[0] as { text: string }).text).toContain("FORBIDDEN");
      expect(example.localProvider?.received).toEqual([]);

      const response = await fetch(example.mcpUrl as URL, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer tok-wrong",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(response.status).toBe(401);
    },
  );

  it("the command line runs on stdio (--sdk flag) with the local stand-in", { timeout: 30_000 }, async () => {
    const args = [
      "--import",
      "tsx",
      "examples/provider-upload/server.ts",
      ...(sdk === "v2" ? ["--sdk", "v2"] : []),
    ];
    const params = { command: process.execPath, args, cwd: repoRoot, stderr: "pipe" as const };
    client = newClient(sdk, true);
    if (sdk === "v2") await (client as unknown as ClientV2).connect(new StdioClientTransportV2(params));
    else await client.connect(new StdioClientTransport(params));
    expect(eraOf(client)).toBe(sdk === "v2" ? "modern" : "legacy");
    const readme = await readFile(join(repoRoot, "examples/provider-upload/README.md"));
    const result = (await client.callTool({
      name: "chat_with_files",
      arguments: { prompt: "Summarize", files: ["examples/provider-upload/README.md"] },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect((result.content[0] as { text: string }).text).toContain(
      `README.md (${readme.length} bytes, sha256 ${sha256(readme).slice(0, 12)}`,
    );
  });
});
