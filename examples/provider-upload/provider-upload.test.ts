import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../test/support/helpers.js";
import { type ProviderUploadExample, start } from "./server.js";

describe("provider-upload example", () => {
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
    example = await start({ roots: [roots], tmpDir: tmp, ...options });
    const server = example.createServer();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "test", version: "1.0.0" });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
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
    // The bridge's per-call temp folders are gone; the original stays.
    expect(await readdir(tmp).catch(() => [])).toEqual([]);
    expect(await readdir(roots)).toEqual(["data.bin"]);
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
    expect(await readdir(tmp).catch(() => [])).toEqual([]);
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
    expect(await readdir(tmp).catch(() => [])).toEqual([]);
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
    });
    const server = bad.createServer();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const badClient = new Client({ name: "test", version: "1.0.0" });
    await Promise.all([server.connect(serverSide), badClient.connect(clientSide)]);
    const result = (await badClient.callTool({
      name: "chat_with_files",
      arguments: { prompt: "x", files: [join(roots, "a.txt")] },
    })) as CallToolResult;
    await badClient.close();
    await bad.close();
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toContain("FETCH_FAILED");
    expect(provider?.received).toEqual([]);
    expect(await readdir(tmp).catch(() => [])).toEqual([]);
    expect(c).toBeDefined();
  });
});
