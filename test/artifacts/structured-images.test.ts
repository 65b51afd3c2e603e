/**
 * Codex CLI shows its model only a result's `structuredContent` when it has one (issue 44): a result
 * that carries a shaped image goes to it without `structuredContent` (the JSON follows as a text
 * block), through a real SDK server and client that says it is `codex-mcp-client`; other clients,
 * and tools that declare an `outputSchema`, keep `structuredContent` and stay valid.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { imageResultFor } from "../../src/images/index.js";
import { Artifacts, fileOutputFields, memoryStore, SignedUrlMinter } from "../../src/index.js";
import { clientNameOf } from "../../src/mcp/index.js";
import type { CallToolResult, ContentBlock } from "../../src/mcp/types.js";
import { screenshotPng } from "../support/images.js";
import { connectInMemory } from "../support/in-memory-client.js";

const SCOPE = "structured-images";
const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://127.0.0.1:9" });
let dir: string;
let screenshot: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-structured-images-"));
  screenshot = await screenshotPng(2400, 1800);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const types = (content: readonly ContentBlock[]) => content.map((block) => block.type);
const texts = (content: readonly ContentBlock[]) =>
  content.map((block) => (block.type === "text" ? block.text : "")).join("\n");

const imageResult = (): CallToolResult => ({
  content: [
    { type: "text", text: "Screenshot taken." },
    { type: "image", data: screenshot.toString("base64"), mimeType: "image/png" },
  ],
  structuredContent: { taken: true },
});

/** A server with `render` (withArtifacts, writes a PNG), with or without an outputSchema, and a client named `client`. */
async function connect(client: string, outputSchema: boolean) {
  const artifacts = new Artifacts({ store: memoryStore(), minter, tmpDir: join(dir, "calls") });
  const server = new McpServer({ name: "shots", version: "1.0.0" });
  server.registerTool(
    "render",
    {
      inputSchema: { output: z.string().optional() },
      ...(outputSchema ? { outputSchema: { width: z.number(), ...fileOutputFields } } : {}),
    },
    artifacts.withArtifacts(
      async ({ output }: { output?: string }) => {
        await writeFile(output as string, screenshot);
        return { content: [{ type: "text", text: "Rendered." }], structuredContent: { width: 2400 } };
      },
      { outputPathArg: "output", outputName: "page.png", client: () => clientNameOf(server), outputSchema },
    ),
  );
  const { client: mcp, close } = await connectInMemory(server, { name: client, version: "1.0.0" });
  return {
    call: async () => (await mcp.callTool({ name: "render", arguments: {} })) as CallToolResult,
    close,
  };
}

describe("shaped images for a client that shows only structuredContent (Codex CLI)", () => {
  it("withArtifacts over the SDK: Codex gets the image, the links and the JSON as text, no structuredContent", async () => {
    const codex = await connect("codex-mcp-client", false);
    try {
      const result = await codex.call();
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toBeUndefined();
      expect(types(result.content)).toEqual(["text", "image", "resource_link", "text", "text"]);
      const image = result.content.find((block) => block.type === "image") as { data: string };
      const meta = await sharp(Buffer.from(image.data, "base64")).metadata();
      expect([meta.width, meta.height]).toEqual([1568, 1176]);
      const text = texts(result.content);
      expect(text).toMatch(/Download URL \(valid until [^)]+\): http:\/\/127\.0\.0\.1:9\/files\/download\//);
      // Nothing the structured form said is lost: it follows as a text block.
      const json = JSON.parse((result.content.at(-1) as { text: string }).text);
      expect(json).toMatchObject({ width: 2400, files: [{ name: "page.png", mimeType: "image/png" }] });
    } finally {
      await codex.close();
    }
  }, 60_000);

  it("withArtifacts over the SDK: Claude Code and Gemini CLI keep structuredContent beside the image", async () => {
    for (const name of ["claude-code", "gemini-cli-mcp-client"]) {
      const other = await connect(name, false);
      try {
        const result = await other.call();
        expect(result.structuredContent).toMatchObject({ width: 2400, files: [{ name: "page.png" }] });
        expect(types(result.content)).toEqual(["text", "image", "resource_link", "text"]);
      } finally {
        await other.close();
      }
    }
  }, 60_000);

  it("a tool that declares an outputSchema (outputSchema: true) keeps valid structuredContent, for Codex too", async () => {
    const codex = await connect("codex-mcp-client", true);
    try {
      const result = await codex.call();
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ width: 2400, files: [{ name: "page.png" }] });
    } finally {
      await codex.close();
    }
  }, 60_000);

  it("fit(): Codex's result goes without structuredContent when it carries an image; outputSchema: true keeps it", async () => {
    const artifacts = new Artifacts({ store: memoryStore(), minter });
    const codex = await artifacts.fit(imageResult(), { scope: SCOPE, client: "codex-mcp-client" });
    expect(codex.structuredContent).toBeUndefined();
    expect(types(codex.content)).toEqual(["text", "image", "resource_link", "text", "text"]);
    expect(JSON.parse((codex.content.at(-1) as { text: string }).text)).toMatchObject({ taken: true });
    const kept = await artifacts.fit(imageResult(), {
      scope: SCOPE,
      client: "codex-mcp-client",
      outputSchema: true,
    });
    expect(kept.structuredContent).toMatchObject({ taken: true, files: [{ name: "image-2.png" }] });
    const claude = await artifacts.fit(imageResult(), { scope: SCOPE, client: "claude-code" });
    expect(claude.structuredContent).toMatchObject({ taken: true });
    // No image block (shaping off): nothing to show, structuredContent stays for Codex too.
    const off = await artifacts.fit(imageResult(), {
      scope: SCOPE,
      client: "codex-mcp-client",
      images: false,
    });
    expect(off.structuredContent).toMatchObject({ taken: true });
  }, 60_000);

  it("imageResultFor(): the same rule for a tool that builds its result itself; a budget of its own can say so", () => {
    const result = imageResult();
    expect(imageResultFor("codex-mcp-client", result).structuredContent).toBeUndefined();
    expect(imageResultFor("codex-mcp-client", result, { outputSchema: true })).toBe(result);
    expect(imageResultFor("gemini-cli-mcp-client", result)).toBe(result);
    const mine = { images: { clients: { "my-agent": { structuredHidesImages: true } } } };
    expect(imageResultFor("my-agent", result, mine).structuredContent).toBeUndefined();
    const textOnly: CallToolResult = { content: [{ type: "text", text: "x" }], structuredContent: { a: 1 } };
    expect(imageResultFor("codex-mcp-client", textOnly)).toBe(textOnly);
  });

  it("refuses a non-boolean outputSchema and structuredHidesImages with INVALID_OPTION naming them", () => {
    const store = memoryStore();
    expect(() =>
      new Artifacts({ store }).withArtifacts(async () => ({ content: [] }), {
        outputPathArg: "output",
        outputSchema: "yes" as unknown as boolean,
      }),
    ).toThrow(expect.objectContaining({ code: "INVALID_OPTION", data: { option: "outputSchema" } }));
    expect(
      () =>
        new Artifacts({
          store,
          images: { clients: { x: { structuredHidesImages: 1 as unknown as boolean } } },
        }),
    ).toThrow(
      expect.objectContaining({
        code: "INVALID_OPTION",
        data: { option: "images.clients.x.structuredHidesImages" },
      }),
    );
  });
});
