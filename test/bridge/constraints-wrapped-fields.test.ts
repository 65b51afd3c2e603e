/**
 * Review finding: a `fileInput({ accept, maxBytes })` field written with a common zod wrapper the
 * constraint reader did not look through (`.refine()`, a union with `null`, `z.preprocess`) still
 * publishes `x-mcp-file { accept, maxSize }` in tools/list, but `withFiles` on an attached server
 * did not enforce it: the handler ran on a text file for an `image/png`-only field (fail open).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { connectInMemory } from "../support/in-memory-client.js";

const TEXT = Buffer.from("plain text, not an image.\n".repeat(4));
const bridge = new FileBridge({ disk: false } as never);
afterAll(() => bridge.close());

const png = () => bridge.fileInput({ accept: ["image/png"], maxBytes: 1024 });
const variants: Record<string, () => z.ZodType> = {
  ".refine()": () => png().refine(() => true),
  "union with null": () => z.union([png(), z.null()]),
  "z.preprocess": () => z.preprocess((value) => value, png()),
};

describe.each(Object.entries(variants))("field written as %s", (_name, field) => {
  it("publishes x-mcp-file accept and refuses a text file (the handler never runs)", async () => {
    const server = new McpServer({ name: "wrapped", version: "1.0.0" });
    bridge.attach(server);
    let runs = 0;
    server.registerTool(
      "take_png",
      { inputSchema: { file: field() } },
      bridge.withFiles(
        async () => {
          runs++;
          return { content: [{ type: "text" as const, text: "ran" }] };
        },
        { fields: ["file"], pass: "file", scope: () => "s" },
      ),
    );
    const { client, close } = await connectInMemory(server, { name: "c", version: "1.0.0" });
    try {
      const listed = await client.listTools();
      expect(JSON.stringify(listed.tools[0]?.inputSchema)).toContain("image/png");
      const result = (await client.callTool({
        name: "take_png",
        arguments: { file: `data:image/png;name=a.png;base64,${TEXT.toString("base64")}` },
      })) as { isError?: boolean; content: Array<{ text?: string }> };
      expect(result.isError, JSON.stringify(result.content)).toBe(true);
      expect(JSON.stringify(result.content)).toContain("mimeTypeNotAccepted");
      expect(runs).toBe(0);
    } finally {
      await close();
    }
  });
});

describe("a tool schema written as an intersection (z.object(...).and(...))", () => {
  it("refuses a text file for the image/png field", async () => {
    let runs = 0;
    const inputSchema = z.object({ file: png() }).and(z.object({ note: z.string().optional() }));
    const handler = bridge.withFiles(
      async () => {
        runs++;
        return { content: [{ type: "text" as const, text: "ran" }] };
      },
      { fields: ["file"], pass: "file", scope: () => "s", inputSchema },
    );
    const result = (await handler({ file: `data:image/png;name=a.png;base64,${TEXT.toString("base64")}` }, {
      signal: new AbortController().signal,
    } as never)) as { isError?: boolean; content: Array<{ text?: string }> };
    expect(result.isError, JSON.stringify(result.content)).toBe(true);
    expect(JSON.stringify(result.content)).toContain("mimeTypeNotAccepted");
    expect(runs).toBe(0);
  });
});

describe("a union of two fileInput() fields", () => {
  it("takes what either branch takes (anyOf), not nothing and not anything", async () => {
    const { constraintsAt } = await import("../../src/bridge/file-constraints.js");
    const { parseFieldPath } = await import("../../src/internal/field-paths.js");
    const field = z.union([
      bridge.fileInput({ accept: ["image/*"], maxBytes: 100 }),
      bridge.fileInput({ accept: ["application/pdf"], maxBytes: 200 }),
    ]);
    expect(constraintsAt({ file: field }, parseFieldPath("file", "fields"))).toEqual({
      accept: ["image/*", "application/pdf"],
      maxSize: 200,
    });
  });
});
