import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { fileInput, MCP_FILE_KEYWORD } from "../../src/bridge/file-input.js";
import type { ResolvedFile } from "../../src/bridge/types.js";
import { connectInMemory } from "../support/in-memory-client.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

interface Seen {
  path: string;
  bytes: string;
  isFile: boolean;
}

let base: string;
let root: string;
let tmp: string;
let client: Client;
let server: McpServer;
let seen: Seen[];
let calls: number;

async function look(path: string): Promise<Seen> {
  return { path, bytes: (await readFile(path)).toString("utf8"), isFile: (await stat(path)).isFile() };
}

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "fb-mcp-")));
  root = join(base, "shared");
  tmp = join(base, "tmp");
  await mkdir(root);
  await writeFile(join(root, "notes.txt"), "notes on disk");
  seen = [];
  calls = 0;
  const bridge = new FileBridge({ roots: [root], tmpDir: tmp });
  server = new McpServer({ name: "files", version: "1.0.0" });
  server.registerTool(
    "inspect",
    {
      description: "Reads the given files",
      inputSchema: {
        file: fileInput({ description: "Main file", paths: true }),
        files: z.array(fileInput()).optional(),
        fail: z.boolean().optional(),
      },
    },
    bridge.withFiles(
      async (args) => {
        calls++;
        for (const path of [args.file, ...(args.files ?? [])]) seen.push(await look(path as string));
        if (args.fail) throw new Error("handler blew up");
        return { content: [{ type: "text" as const, text: `saw ${seen.length} files` }] };
      },
      { fields: ["file", "files[]"] },
    ),
  );
  server.registerTool(
    "describe",
    { inputSchema: { input: z.object({ document: fileInput() }) } },
    bridge.withFiles(
      async (args) => {
        const file = args.input.document as unknown as ResolvedFile;
        return {
          content: [
            {
              type: "text" as const,
              text: `${file.name}|${file.mimeType}|${file.size}|${(await file.bytes()).toString()}`,
            },
          ],
        };
      },
      { fields: ["input.document"], pass: "file" },
    ),
  );
  ({ client } = await connectInMemory(server));
});

afterEach(async () => {
  await client.close();
  await server.close();
  await rm(base, { recursive: true, force: true, maxRetries: 3 });
});

async function tempEntries(): Promise<string[]> {
  return tempLeftovers(tmp);
}

function textOf(result: unknown): string {
  const content = (result as { content: Array<{ text?: string }> }).content;
  return content.map((part) => part.text ?? "").join("");
}

describe("withFiles over a real MCP client and server", () => {
  it("publishes the x-mcp-file marker in tools/list", async () => {
    const { tools } = await client.listTools();
    const inspect = tools.find((tool) => tool.name === "inspect");
    const properties = inspect?.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(properties.file?.[MCP_FILE_KEYWORD]).toEqual({});
    expect(String(properties.file?.description)).toContain("data URL");
    expect((properties.files?.items as Record<string, unknown> | undefined)?.[MCP_FILE_KEYWORD]).toEqual({});
  });

  it("hands the handler real files for a data URL, a base64 object, a path and a mixed list", async () => {
    const result = await client.callTool({
      name: "inspect",
      arguments: {
        file: "data:text/plain;name=from-data-url.txt;base64,ZGF0YSB1cmwgYnl0ZXM=",
        files: [
          {
            name: "obj.txt",
            content: Buffer.from("object bytes").toString("base64"),
            mimeType: "text/plain",
          },
          "notes.txt",
          `file://${join(root, "notes.txt")}`,
        ],
      },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("saw 4 files");
    expect(seen.map((s) => s.bytes)).toEqual([
      "data url bytes",
      "object bytes",
      "notes on disk",
      "notes on disk",
    ]);
    expect(seen.every((s) => s.isFile)).toBe(true);
    expect(seen[0]?.path.startsWith(tmp)).toBe(true);
    expect(seen[0]?.path.endsWith("from-data-url.txt")).toBe(true);
    expect(seen[2]?.path.startsWith(tmp)).toBe(true); // a private copy, read through one descriptor
    expect(await tempEntries()).toEqual([]);
    expect(await readFile(join(root, "notes.txt"), "utf8")).toBe("notes on disk");
  });

  it("removes temp files when the handler throws, too", async () => {
    const result = await client.callTool({
      name: "inspect",
      arguments: { file: "data:,abc", files: [{ name: "x.bin", content: "AAEC" }], fail: true },
    });
    expect(result.isError).toBe(true);
    expect(seen.map((s) => s.bytes)).toEqual(["abc", "\u0000\u0001\u0002"]);
    expect(await tempEntries()).toEqual([]);
  });

  it("returns an isError result with the code and does not call the handler when a file is refused", async () => {
    for (const [file, code] of [
      ["../etc/passwd", "PATH_NOT_ALLOWED"],
      ["ftp://example.com/x", "UNSUPPORTED_INPUT"],
      ["data:text/plain;base64,@@@@", "INVALID_BASE64"],
    ] as const) {
      const result = await client.callTool({ name: "inspect", arguments: { file, files: ["data:,fine"] } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(code);
    }
    expect(calls).toBe(0);
    expect(await tempEntries()).toEqual([]);
  });

  it("passes ResolvedFiles for nested fields with pass: 'file'", async () => {
    const result = await client.callTool({
      name: "describe",
      arguments: {
        input: { document: { filename: "doc.md", content: Buffer.from("# Title").toString("base64") } },
      },
    });
    expect(textOf(result)).toBe("doc.md|text/markdown|7|# Title");
    expect(await tempEntries()).toEqual([]);
  });
});
