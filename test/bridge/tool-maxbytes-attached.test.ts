/**
 * Review finding: `withFiles({ maxBytes })` ("Size cap for each file of this tool, replacing the
 * bridge's") on a field written `bridge.fileInput()` (no `maxBytes` of its own) was silently capped
 * at the bridge's default once any piece was attached to the server (`bridge.attach`,
 * `registry.attach`, `uploads.attach`): the default `maxSize` the bridge publishes was enforced as
 * if the field had asked for it. The same tool on a server with nothing attached took the file.
 * A field's own `fileInput({ maxBytes })` still lowers the tool's cap.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { connectInMemory } from "../support/in-memory-client.js";

type Result = { isError?: boolean; content: Array<{ text?: string }> };

async function call(attach: boolean, fieldMaxBytes: number | undefined, size: number): Promise<Result> {
  const bridge = new FileBridge({ disk: false, maxBytes: 1000 } as never);
  const server = new McpServer({ name: "caps", version: "1.0.0" });
  if (attach) bridge.attach(server);
  const file = bridge.fileInput(fieldMaxBytes === undefined ? {} : { maxBytes: fieldMaxBytes });
  server.registerTool(
    "take",
    { inputSchema: { file } },
    bridge.withFiles(async () => ({ content: [{ type: "text" as const, text: "ran" }] }), {
      fields: ["file"],
      pass: "file",
      maxBytes: 5000,
      scope: () => "s",
    }),
  );
  const { client, close } = await connectInMemory(server, { name: "c", version: "1.0.0" });
  try {
    const bytes = Buffer.alloc(size, 97).toString("base64");
    return (await client.callTool({
      name: "take",
      arguments: { file: `data:text/plain;base64,${bytes}` },
    })) as Result;
  } finally {
    await close();
    await bridge.close();
  }
}

describe("withFiles({ maxBytes: 5000 }) on a bridge of maxBytes 1000", () => {
  it.each([false, true])(
    "attached: %s — a 2,000-byte file on bridge.fileInput() runs the handler",
    async (attach) => {
      const result = await call(attach, undefined, 2000);
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.content[0]?.text).toBe("ran");
    },
  );

  it("a field's own fileInput({ maxBytes: 1500 }) still lowers it (maxSizeExceeded)", async () => {
    const result = await call(true, 1500, 2000);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("maxSizeExceeded");
  });

  it("past the tool's own cap it is refused", async () => {
    const result = await call(true, undefined, 6000);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("FILE_TOO_LARGE");
  });
});
