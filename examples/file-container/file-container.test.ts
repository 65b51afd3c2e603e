import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type FileContainerServer, start } from "./server.js";
import type { LedgerEntry } from "./usage-ledger.js";

const ACME_1 = "acme-key-one-000000000";
const ACME_2 = "acme-key-two-000000000";
const GLOBEX = "globex-key-00000000000";
const GUIDE = "# Guide\n\nThe holiday policy is generous.\n\nSecond paragraph about expenses.\n";
const BINARY = randomBytes(5000);

// The same example on each SDK generation: v1 (sessions) with the v1 client, v2 (stateless) with the
// v2 client speaking 2026-07-28.
describe.each(["v1", "v2"] as const)("file-container example on SDK %s", (sdk) => {
  let dir: string;
  let app: FileContainerServer;
  let now: number;
  const clients: Client[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "file-container-test-"));
    now = Date.UTC(2030, 0, 1);
    app = await start({
      keys: [
        { key: ACME_1, container: "acme" },
        { key: ACME_2, container: "acme" },
        { key: GLOBEX, container: "globex" },
      ],
      files: [
        { container: "acme", name: "guide.md", content: GUIDE },
        { container: "acme", name: "data.bin", content: BINARY },
        { container: "globex", name: "secret.txt", content: "globex holiday plans\n" },
      ],
      dataDir: join(dir, "data"),
      ledgerPath: join(dir, "usage.jsonl"),
      chunkChars: 40,
      now: () => now,
      sdk,
    });
  });

  afterEach(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    clients.length = 0;
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function connect(key: string): Promise<Client> {
    const requestInit = { headers: { authorization: `Bearer ${key}` } };
    if (sdk === "v2") {
      const client = new ClientV2(
        { name: "wire", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new StreamableHTTPClientTransportV2(app.mcpUrl, { requestInit }));
      clients.push(client as unknown as Client);
      return client as unknown as Client;
    }
    const client = new Client({ name: "wire", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(app.mcpUrl, { requestInit }));
    clients.push(client);
    return client;
  }

  const uriOf = (name: string) => {
    const file = app.files.find((f) => f.name === name);
    if (!file) throw new Error(name);
    return app.registry.uriFor(file);
  };

  async function signedUrl(client: Client, uri: string): Promise<string> {
    const read = await client.readResource({ uri });
    const content = read.contents[0] as { mimeType?: string; text?: string };
    expect(content.mimeType).toBe("text/uri-list");
    return (content.text ?? "").trim();
  }

  const usageRows = async () =>
    (await app.ledger.entries()).filter(
      (e): e is Extract<LedgerEntry, { type: "usage" }> => e.type === "usage",
    );

  it("uses wire:// URIs and keeps resources/list empty", async () => {
    expect(uriOf("guide.md")).toMatch(/^wire:\/\/container\/acme\/file\/[0-9a-z]{26}$/);
    const client = await connect(ACME_1);
    expect((await client.listResources()).resources).toEqual([]);
    const templates = (await client.listResourceTemplates()).resourceTemplates;
    expect(templates.map((t) => t.uriTemplate)).toEqual(["wire://container/{containerId}/file/{fileId}"]);
  });

  it("refuses /mcp without a known key", async () => {
    const response = await fetch(app.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: "Bearer nope",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(401);
  });

  it("reads answer text/uri-list with a 5-minute signed URL that streams the file with the right headers", async () => {
    const client = await connect(ACME_1);
    const url = await signedUrl(client, uriOf("guide.md"));
    expect(url.startsWith(`${app.url}/files/download/`)).toBe(true);

    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/markdown");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="guide.md"; filename*=UTF-8''guide.md`,
    );
    expect(await response.text()).toBe(GUIDE);

    const binary = await fetch(await signedUrl(client, uriOf("data.bin")));
    expect(binary.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.from(await binary.arrayBuffer()).equals(BINARY)).toBe(true);

    // Five minutes later the same URL is dead.
    const later = await signedUrl(client, uriOf("guide.md"));
    now += 5 * 60_000;
    const expired = await fetch(later);
    expect(expired.status).toBe(410);
    expect(((await expired.json()) as { error: { code: string } }).error.code).toBe("TOKEN_EXPIRED");
  });

  it("another container's URI is not found", async () => {
    const client = await connect(GLOBEX);
    const uri = uriOf("guide.md");
    let error: unknown;
    try {
      await client.readResource({ uri });
    } catch (caught) {
      error = caught;
    }
    if (sdk === "v1") expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).data).toMatchObject({ code: "NOT_FOUND", uri });

    const navigate = (await client.callTool({ name: "navigate", arguments: { uri } })) as CallToolResult;
    expect(navigate.isError).toBe(true);
    expect((navigate.content[0] as { text: string }).text).toContain("NOT_FOUND");
  });

  it("charges 2 credits per completed download, to the key that was shown the link, not per link shown", async () => {
    const one = await connect(ACME_1);
    const two = await connect(ACME_2);
    const urlForOne = await signedUrl(one, uriOf("guide.md"));
    const urlForTwo = await signedUrl(two, uriOf("guide.md"));
    await signedUrl(one, uriOf("data.bin")); // shown, never downloaded
    const search = (await one.callTool({
      name: "search",
      arguments: { query: "holiday" },
    })) as CallToolResult;
    expect(search.isError).toBeFalsy();

    // Not charged: a HEAD, a tampered token, a range that is only part of the file.
    expect((await fetch(urlForOne, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(`${urlForOne.slice(0, -2)}xx`)).status).toBe(401);
    const partial = await fetch(urlForOne, { headers: { range: "bytes=0-3" } });
    expect(partial.status).toBe(206);
    expect(await partial.text()).toBe("# Gu");

    // Charged: two whole downloads by key one, one by key two.
    expect(await (await fetch(urlForOne)).text()).toBe(GUIDE);
    expect(await (await fetch(urlForOne)).text()).toBe(GUIDE);
    expect(await (await fetch(urlForTwo)).text()).toBe(GUIDE);

    await vi.waitFor(async () => expect(await usageRows()).toHaveLength(3));
    const rows = await usageRows();
    const fileId = app.files.find((f) => f.name === "guide.md")?.id;
    expect(rows.map((r) => [r.keyId, r.credits, r.container, r.fileId])).toEqual([
      [app.keyIdOf(ACME_1), 2, "acme", fileId],
      [app.keyIdOf(ACME_1), 2, "acme", fileId],
      [app.keyIdOf(ACME_2), 2, "acme", fileId],
    ]);
    const entries = await app.ledger.entries();
    const activity = entries.filter((e) => e.type === "activity");
    expect(activity.map((a) => (a.type === "activity" ? a.event : ""))).toEqual([
      "download.partial",
      "download",
      "download",
      "download",
    ]);
    // The ledger is a real file: every line is one JSON record, the raw key is never written.
    const text = await readFile(join(dir, "usage.jsonl"), "utf8");
    expect(text.trim().split("\n")).toHaveLength(entries.length);
    expect(text.includes(ACME_1)).toBe(false);

    const usage = await fetch(`${app.url}/api/usage`, { headers: { authorization: `Bearer ${ACME_1}` } });
    expect(await usage.json()).toEqual({ keyId: app.keyIdOf(ACME_1), credits: 4, downloads: 2 });
  });

  it("search returns matches with resource_links to their files, only from the caller's container", async () => {
    const client = await connect(ACME_1);
    const result = (await client.callTool({
      name: "search",
      arguments: { query: "HOLIDAY" },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as {
      matches: Array<{ uri: string; line: number; text: string }>;
    };
    expect(structured.matches).toEqual([
      { uri: uriOf("guide.md"), name: "guide.md", line: 3, text: "The holiday policy is generous." },
    ]);
    const links = result.content.filter((block) => block.type === "resource_link");
    expect(links).toEqual([
      expect.objectContaining({ type: "resource_link", uri: uriOf("guide.md"), mimeType: "text/markdown" }),
    ]);
    // The text fallback carries the URI and a download URL for clients that drop resource_link.
    const fallback = result.content.find((b) => b.type === "text" && b.text.includes("Download URL"));
    expect(fallback).toBeDefined();
    // The output contract: the file is in structuredContent.files too (Claude Code and Codex CLI
    // show only structuredContent when a result has it).
    const files = (result.structuredContent as { files: Array<Record<string, unknown>> }).files;
    expect(files).toEqual([
      expect.objectContaining({ uri: uriOf("guide.md"), name: "guide.md", mimeType: "text/markdown" }),
    ]);
    expect(String(files[0]?.downloadUrl)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/download\//);

    const none = (await client.callTool({
      name: "search",
      arguments: { query: "globex" },
    })) as CallToolResult;
    expect((none.structuredContent as { matches: unknown[] }).matches).toEqual([]);
  });

  it("navigate returns the file in chunks plus its link; binary files are refused", async () => {
    const client = await connect(ACME_1);
    const uri = uriOf("guide.md");
    const result = (await client.callTool({ name: "navigate", arguments: { uri } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as {
      chunks: Array<{ index: number; startLine: number; endLine: number; text: string }>;
      link: { uri: string };
    };
    expect(structured.chunks.length).toBeGreaterThan(1);
    expect(structured.chunks.every((c) => c.text.length <= 40)).toBe(true);
    expect(`${structured.chunks.map((c) => c.text).join("\n")}\n`).toBe(GUIDE);
    expect(structured.chunks[0]?.startLine).toBe(1);
    expect(structured.link.uri).toBe(uri);
    expect((result.structuredContent as { files: Array<{ uri: string }> }).files).toEqual([
      expect.objectContaining({ uri, name: "guide.md" }),
    ]);
    expect(result.content.some((b) => b.type === "resource_link" && b.uri === uri)).toBe(true);

    const binary = (await client.callTool({
      name: "navigate",
      arguments: { uri: uriOf("data.bin") },
    })) as CallToolResult;
    expect(binary.isError).toBe(true);
    expect((binary.content[0] as { text: string }).text).toContain("UNSUPPORTED_MEDIA_TYPE");
  });
});
