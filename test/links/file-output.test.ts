/**
 * The output contract, through the real SDK clients (v1 and v2, InMemoryTransport): whatever a model
 * needs to act on a file is in the text AND in `structuredContent.files` when the result has
 * `structuredContent`; tools with an `outputSchema` validate with `fileOutputFields`; results over
 * the client's inline budget are stored and previewed.
 */
import { Client as V2Client, InMemoryTransport as V2InMemory } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemory } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer as V1Server } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as V2Server } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Artifacts,
  fileOutputFields,
  memoryStore,
  ResourceRegistry,
  SignedUrlMinter,
  withFileOutputs,
} from "../../src/index.js";
import { clientNameOf } from "../../src/mcp/index.js";

type Generation = "v1" | "v2";
interface Result {
  content: Array<Record<string, unknown> & { type: string; text?: string }>;
  structuredContent?: Record<string, unknown> & { files?: Array<Record<string, unknown>> };
  isError?: boolean;
  _meta?: Record<string, unknown>;
}
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

const SCOPE = "s1";
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => undefined);
});

function pieces() {
  const store = memoryStore();
  const registry = new ResourceRegistry({ store });
  const minter = new SignedUrlMinter({ secret: "x".repeat(32), baseUrl: "https://files.example.com" });
  const artifacts = new Artifacts({ store, registry, minter });
  closers.push(() => registry.close());
  return { store, registry, artifacts };
}

/** A server with the tools under test, connected to a real client of `generation` named `clientName`. */
async function connect(generation: Generation, clientName = "mem"): Promise<AnyClient> {
  const { store, registry, artifacts } = pieces();
  const server =
    generation === "v1"
      ? new V1Server({ name: "t", version: "1" })
      : new V2Server({ name: "t", version: "1" });
  const mcp = server as unknown as V1Server;
  mcp.registerTool(
    "render_with_schema",
    { inputSchema: {}, outputSchema: { pages: z.number(), ...fileOutputFields } },
    artifacts.withArtifacts(
      async (args: { output: string }) => {
        await import("node:fs/promises").then((fs) => fs.writeFile(args.output, "<p>hi</p>"));
        return { content: [{ type: "text" as const, text: "Rendered." }], structuredContent: { pages: 1 } };
      },
      { outputPathArg: "output", outputName: "page.html" },
    ) as never,
  );
  mcp.registerTool("linked", { inputSchema: {} }, async () => {
    const file = await registry.add(Buffer.from("a,b\n"), { scope: SCOPE, name: "t.csv" });
    return withFileOutputs(
      { content: [{ type: "text", text: "One table." }], structuredContent: { rows: 1 } },
      await registry.link(file),
    ) as never;
  });
  mcp.registerTool(
    "big",
    { inputSchema: { chars: z.number() } },
    async ({ chars }) =>
      artifacts.fit(
        { content: [{ type: "text", text: "x".repeat(chars) }], structuredContent: { chars } },
        { scope: SCOPE, client: clientNameOf(server), name: "big.txt" },
      ) as never,
  );
  mcp.registerTool(
    "blob",
    { inputSchema: {} },
    async () =>
      artifacts.fit(
        {
          content: [
            {
              type: "resource",
              resource: {
                uri: "mem://a.bin",
                mimeType: "application/octet-stream",
                blob: Buffer.alloc(300, 7).toString("base64"),
              },
            },
            // A real 1 × 1 PNG: image blocks are decoded (issue 44), so bytes that are no image fail.
            {
              type: "image",
              data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
              mimeType: "image/png",
            },
          ],
        },
        { scope: SCOPE, client: clientNameOf(server) },
      ) as never,
  );
  closers.push(() => store.close?.() ?? Promise.resolve());
  if (generation === "v1") {
    const [c, s] = V1InMemory.createLinkedPair();
    await mcp.connect(s);
    const client = new V1Client({ name: clientName, version: "1" });
    await client.connect(c);
    closers.push(
      () => client.close(),
      () => mcp.close(),
    );
    return client as unknown as AnyClient;
  }
  const [c, s] = V2InMemory.createLinkedPair();
  await (server as V2Server).connect(s);
  const client = new V2Client({ name: clientName, version: "1" });
  await client.connect(c);
  closers.push(
    () => client.close(),
    () => (server as V2Server).close(),
  );
  return client as unknown as AnyClient;
}

const call = async (client: AnyClient, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as Result;

describe.each<Generation>(["v1", "v2"])("file outputs on SDK %s", (generation) => {
  it("withArtifacts puts the artifact in the text and in structuredContent.files, validated by the outputSchema", async () => {
    const client = await connect(generation);
    const result = await call(client, "render_with_schema");
    expect(result.isError).toBeFalsy();
    const files = result.structuredContent?.files ?? [];
    expect(result.structuredContent?.pages).toBe(1);
    expect(files).toHaveLength(1);
    const [file] = files as [Record<string, string | number>];
    expect(file).toMatchObject({ name: "page.html", mimeType: "text/html", size: 9 });
    expect(String(file.uri)).toMatch(/^file:\/\/|^artifact:\/\//);
    expect(String(file.downloadUrl)).toMatch(/^https:\/\/files\.example\.com\//);
    const link = result.content.find((block) => block.type === "resource_link");
    expect(link?.uri).toBe(file.uri);
    const text = result.content.map((block) => block.text ?? "").join("\n");
    expect(text).toContain(String(file.uri));
    expect(text).toContain(String(file.downloadUrl));
  });

  it("withFileOutputs adds registry.link() to a result that has its own structuredContent", async () => {
    const client = await connect(generation);
    const result = await call(client, "linked");
    expect(result.structuredContent?.rows).toBe(1);
    const [file] = (result.structuredContent?.files ?? []) as [Record<string, unknown>];
    expect(file).toMatchObject({ name: "t.csv", size: 4 });
    expect(typeof file.sha256).toBe("string");
    expect(result.content.map((block) => block.type)).toEqual(["text", "resource_link", "text"]);
    expect(result.content[2]?.text).toContain(String(file.uri));
  });

  it("stores text over the default budget (10,000) and returns a preview, the link and the URL", async () => {
    const client = await connect(generation);
    const small = await call(client, "big", { chars: 9_000 });
    expect(small.content).toEqual([{ type: "text", text: "x".repeat(9_000) }]);
    const result = await call(client, "big", { chars: 25_000 });
    const total = JSON.stringify(result).length;
    expect(total).toBeLessThan(10_000);
    const [file] = (result.structuredContent?.files ?? []) as [Record<string, unknown>];
    expect(file).toMatchObject({ name: "big.txt", size: 25_000, mimeType: "text/plain" });
    expect(String(file.preview)).toMatch(/^x{100,1000}$/);
    expect(result.content[0]?.text).toContain("25000 characters");
    expect(result.content.some((block) => block.type === "resource_link")).toBe(true);
    expect(result.content.map((b) => b.text ?? "").join("\n")).toContain(String(file.downloadUrl));
  });

  it("uses the client's budget: Gemini CLI and Claude Code keep 25,000 chars, Codex stores 12,000", async () => {
    const gemini = await connect(generation, "gemini-cli-mcp-client");
    const kept = await call(gemini, "big", { chars: 25_000 });
    expect(kept.content).toEqual([{ type: "text", text: "x".repeat(25_000) }]);
    const claude = await connect(generation, "claude-code");
    expect((await call(claude, "big", { chars: 25_000 })).content[0]?.text).toHaveLength(25_000);
    // Over Claude Code's 50,000-character cap: stored, never left for the client to persist.
    const stored = await call(claude, "big", { chars: 60_000 });
    expect(stored.structuredContent?.files).toHaveLength(1);
    expect(JSON.stringify(stored).length).toBeLessThan(50_000);
    const codex = await connect(generation, "codex-mcp-client");
    const cut = await call(codex, "big", { chars: 12_000 });
    expect(cut.structuredContent?.files).toHaveLength(1);
  });

  it("never inlines a non-media blob; an image under the media budget stays", async () => {
    const client = await connect(generation);
    const result = await call(client, "blob");
    expect(result.content.some((block) => block.type === "resource")).toBe(false);
    expect(result.content.some((block) => block.type === "image")).toBe(true);
    const link = result.content.find((block) => block.type === "resource_link");
    expect(link).toMatchObject({ name: "a.bin", size: 300 });
  });
});

describe("fileOutputFields", () => {
  it("is what makes a result with files validate: without it the v1 client refuses the result", async () => {
    const { artifacts } = pieces();
    const server = new V1Server({ name: "t", version: "1" });
    server.registerTool("strict", { inputSchema: {}, outputSchema: { pages: z.number() } }, async () => {
      const captured = await artifacts.capture({ scope: SCOPE, bytes: Buffer.from("x"), name: "x.txt" });
      return withFileOutputs({ content: [], structuredContent: { pages: 1 } }, captured) as never;
    });
    const [c, s] = V1InMemory.createLinkedPair();
    await server.connect(s);
    const client = new V1Client({ name: "mem", version: "1" });
    await client.connect(c);
    closers.push(
      () => client.close(),
      () => server.close(),
    );
    await client.listTools(); // the client checks structuredContent against the schemas it listed
    await expect(client.callTool({ name: "strict", arguments: {} })).rejects.toThrow(/additional properties/);
  });
});
