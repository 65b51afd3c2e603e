/**
 * Review finding: a tool registered with an `outputSchema` and wrapped in `withArtifacts` without
 * `outputSchema: true` failed for Codex CLI only: its shaped-image result went without
 * `structuredContent`, which the SDK refuses for a tool with an output schema ("Output validation
 * error"). On a server a piece is attached to, the called tool's registration tells it.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { Artifacts, fileOutputFields, memoryStore, SignedUrlMinter } from "../../src/index.js";
import { clientNameOf } from "../../src/mcp/index.js";
import type { CallToolResult } from "../../src/mcp/types.js";
import { screenshotPng } from "../support/images.js";
import { connectInMemory } from "../support/in-memory-client.js";

const minter = new SignedUrlMinter({ secret: "s".repeat(32), baseUrl: "http://127.0.0.1:9" });
let dir: string;
let screenshot: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-review-codex-"));
  screenshot = await screenshotPng(1200, 900);
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

it("Codex: an attached tool with an outputSchema keeps valid structuredContent without outputSchema: true", async () => {
  const artifacts = new Artifacts({ store: memoryStore(), minter, tmpDir: join(dir, "calls") });
  const server = new McpServer({ name: "shots", version: "1.0.0" });
  new FileBridge({ tmpDir: join(dir, "bridge") }).attach(server);
  server.registerTool(
    "render",
    {
      inputSchema: { output: z.string().optional() },
      outputSchema: { width: z.number(), ...fileOutputFields },
    },
    artifacts.withArtifacts(
      async ({ output }: { output?: string }) => {
        await writeFile(output as string, screenshot);
        return { content: [{ type: "text", text: "Rendered." }], structuredContent: { width: 1200 } };
      },
      { outputPathArg: "output", outputName: "page.png", client: () => clientNameOf(server) },
    ),
  );
  const { client: mcp, close } = await connectInMemory(server, {
    name: "codex-mcp-client",
    version: "1.0.0",
  });
  try {
    const result = (await mcp.callTool({ name: "render", arguments: {} })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content).slice(0, 300)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ width: 1200 });
  } finally {
    await close();
  }
});
