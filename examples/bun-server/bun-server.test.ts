/**
 * The bun-server example as written (`bun run examples/bun-server/server.ts`, Bun from its npm
 * package): a v2 MCP client over Streamable HTTP on 127.0.0.1 gets an upload URL, uploads a file,
 * has a tool read its exact bytes, gets an artifact back and downloads it, whole and by range.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binaryOf, RUNTIME_ENV } from "../../test/runtimes/runtimes.js";

interface Started {
  url: string;
  mcpUrl: string;
  token: string;
}

let child: ChildProcess;
let server: Started;
let client: Client;

beforeAll(async () => {
  child = spawn(binaryOf("bun"), ["run", "examples/bun-server/server.ts"], {
    env: { ...RUNTIME_ENV, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  server = await new Promise<Started>((resolve, reject) => {
    lines.once("line", (line) => resolve(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`bun exited with ${code} before listening`)));
  });
  client = new Client({ name: "bun-example-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  child?.kill();
});

type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  _meta?: Record<string, unknown>;
  structuredContent?: Record<string, unknown>;
};

describe("examples/bun-server on Bun", () => {
  it("refuses /mcp without the token", async () => {
    const response = await fetch(server.mcpUrl, { method: "POST", body: "{}" });
    expect(response.status).toBe(401);
  });

  it("takes a file through an upload ticket and returns an artifact with a ranged download", async () => {
    const ticketResult = (await client.callTool({ name: "get_upload_url", arguments: {} })) as ToolResult;
    expect(ticketResult.isError).toBeFalsy();
    const ticket = ticketResult.structuredContent as { upload_url: string; handle: string; field: string };
    expect(ticket.handle).toMatch(/^upload:\/\//);

    const text = "hello bun world from a file";
    const form = new FormData();
    form.append(ticket.field, new Blob([text], { type: "text/plain" }), "note.txt");
    const uploaded = await fetch(ticket.upload_url, { method: "POST", body: form });
    expect(uploaded.status).toBeLessThan(300);

    const counted = (await client.callTool({
      name: "count_words",
      arguments: { document: ticket.handle },
    })) as ToolResult;
    expect(counted.isError).toBeFalsy();
    expect(counted.content[0]?.text).toContain("note.txt: 6 words");

    const shouted = (await client.callTool({
      name: "shout",
      arguments: { document: ticket.handle },
    })) as ToolResult;
    expect(shouted.isError).toBeFalsy();
    expect(shouted.content.some((block) => block.type === "resource_link")).toBe(true);
    const downloadUrl = shouted._meta?.download_url as string;
    expect(downloadUrl.startsWith(`${server.url}/files/download/`)).toBe(true);
    const whole = await fetch(downloadUrl);
    expect(await whole.text()).toBe(text.toUpperCase());
    const ranged = await fetch(downloadUrl, { headers: { range: "bytes=6-8" } });
    expect(ranged.status).toBe(206);
    expect(await ranged.text()).toBe("BUN");
  });

  it("reads an inline data: URL without a disk, and refuses an unknown handle", async () => {
    const data = `data:text/plain;name=inline.txt;base64,${Buffer.from("one two three").toString("base64")}`;
    const counted = (await client.callTool({
      name: "count_words",
      arguments: { document: data },
    })) as ToolResult;
    expect(counted.content[0]?.text).toContain("inline.txt: 3 words");
    const unknown = (await client.callTool({
      name: "count_words",
      arguments: { document: "upload://sessions/AAAAAAAAAAAAAAAAAAAAAA/zzzzzzzzzzzzzzzzzzzzzz" },
    })) as ToolResult;
    expect(unknown.isError).toBe(true);
  });
});
