/**
 * `fileInput()`'s JSON Schema as clients see it: the files extension's `{type: "string", format:
 * "uri"}` branch with `x-mcp-file`, what strict JSON Schema validators make of it, SDK v1 and v2
 * clients listing it, and the Codex variant's capability probe run on a recorded tool list
 * (test/fixtures/variant-tool-list.json).
 */
import { readFile, writeFile } from "node:fs/promises";
import { Client as V2Client, InMemoryTransport as V2Memory } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1Memory } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { Ajv } from "ajv";
import formats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { fileInput, MCP_FILE_KEYWORD } from "../../src/bridge/file-input.js";

const FIXTURE = new URL("../fixtures/variant-tool-list.json", import.meta.url);
const LISTS_FIXTURE = new URL("../fixtures/file-input-tool-lists.json", import.meta.url);

/**
 * The variant client's probe, from its description (not from our code): without a server capability,
 * a tool supports uploads when a top-level property has `x-mcp-file` whose `transferModes` includes
 * "upload"; `_meta["openai/fileParams"]` names file fields too.
 */
function variantFileFields(tool: { inputSchema: { properties?: Record<string, unknown> }; _meta?: unknown }) {
  const fields = new Set<string>();
  for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
    const marker = (property as Record<string, unknown>)[MCP_FILE_KEYWORD] as
      | { transferModes?: string[] }
      | undefined;
    if (marker?.transferModes?.includes("upload")) fields.add(name);
  }
  const params = (tool._meta as Record<string, unknown> | undefined)?.["openai/fileParams"];
  if (Array.isArray(params)) for (const name of params) fields.add(String(name));
  return [...fields];
}

function register(server: V1McpServer | V2McpServer) {
  (server as V1McpServer).registerTool(
    "summarize",
    {
      description: "Summarizes a PDF",
      inputSchema: {
        document: fileInput({ accept: ["application/pdf"], maxBytes: 1_000_000, upload: true }),
        note: z.string().optional(),
      },
    },
    async () => ({ content: [{ type: "text" as const, text: "ok" }] }),
  );
  return server;
}

/** The recorded list's other two tools: an inline-only file, and a host attachment field (openai/fileParams). */
function registerOthers(server: V1McpServer) {
  const ok = async () => ({ content: [{ type: "text" as const, text: "ok" }] });
  server.registerTool(
    "inline_only",
    { description: "Takes a file inline only", inputSchema: { file: fileInput() } },
    ok,
  );
  const bridge = new FileBridge({ sweepOnStart: false });
  const inputSchema = { attachment: fileInput({ fileParams: true }) };
  server.registerTool(
    "host_params",
    { description: "Takes a host attachment", inputSchema, _meta: bridge.fileParamsMeta(inputSchema) },
    ok,
  );
  return server;
}

describe("fileInput JSON Schema", () => {
  it("has a {type: string, format: uri} branch carrying x-mcp-file, and the marker on the property", () => {
    const json = z.toJSONSchema(fileInput({ accept: ["image/*"], maxBytes: 10, upload: true })) as {
      anyOf: Array<Record<string, unknown>>;
    } & Record<string, unknown>;
    const marker = { accept: ["image/*"], maxSize: 10, transferModes: ["inline", "upload"] };
    expect(json[MCP_FILE_KEYWORD]).toEqual(marker);
    expect(json.anyOf[0]).toEqual({ type: "string", format: "uri", [MCP_FILE_KEYWORD]: marker });
    // Without `upload`, no transferModes: the variant then does not infer upload support.
    const plain = z.toJSONSchema(fileInput()) as Record<string, unknown>;
    expect(plain[MCP_FILE_KEYWORD]).toEqual({});
  });

  it("compiles under ajv strict mode once x-mcp-file is a declared keyword and formats are loaded; plain strict refuses the unknown keyword", () => {
    const schema = z.toJSONSchema(z.object({ document: fileInput({ upload: true }) }), { target: "draft-7" });
    const strict = new Ajv({ strict: true, allErrors: true });
    expect(() => strict.compile(schema)).toThrow(/unknown keyword: "x-mcp-file"/);
    const declared = new Ajv({ strict: true, allErrors: true });
    declared.addKeyword(MCP_FILE_KEYWORD);
    // ajv-formats is CommonJS: its default export is the plugin under Node, `.default` for the types.
    const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (
      ajv: Ajv,
    ) => void;
    addFormats(declared);
    const validate = declared.compile(schema);
    for (const value of [
      "data:text/plain;base64,aGk=",
      "upload://sessions/x/y",
      "/tmp/report.pdf",
      { name: "a", content: "aGk=" },
    ]) {
      expect(validate({ document: value })).toBe(true);
    }
    expect(validate({ document: 3 })).toBe(false);
  });

  it("is listed and called by SDK v1 and SDK v2 clients", async () => {
    const v1 = register(new V1McpServer({ name: "s", version: "1.0.0" })) as V1McpServer;
    const v1Client = new V1Client({ name: "c", version: "1.0.0" });
    const [a, b] = V1Memory.createLinkedPair();
    await Promise.all([v1.connect(b), v1Client.connect(a)]);
    const v2 = register(new V2McpServer({ name: "s", version: "1.0.0" })) as V2McpServer;
    const v2Client = new V2Client({ name: "c", version: "1.0.0" });
    const [c, d] = V2Memory.createLinkedPair();
    await Promise.all([v2.connect(d), v2Client.connect(c)]);
    try {
      for (const client of [v1Client, v2Client] as V1Client[]) {
        const { tools } = await client.listTools();
        expect(variantFileFields(tools[0] as never)).toEqual(["document"]);
        const result = await client.callTool({
          name: "summarize",
          arguments: { document: "data:application/pdf;base64,JVBERg==" },
        });
        expect(result.isError).toBeFalsy();
      }
    } finally {
      await v1Client.close();
      await v2Client.close();
    }
  });

  it("matches the recorded variant tool list (fileInput options and fileParamsMeta), whose probe finds the upload fields", async () => {
    const fixture = JSON.parse(await readFile(FIXTURE, "utf8")) as { tools: Array<Record<string, unknown>> };
    const server = registerOthers(register(new V1McpServer({ name: "s", version: "1.0.0" })) as V1McpServer);
    const client = new V1Client({ name: "c", version: "1.0.0" });
    const [a, b] = V1Memory.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    try {
      const { tools } = await client.listTools();
      expect(tools).toEqual(fixture.tools);
    } finally {
      await client.close();
    }
    expect(fixture.tools.map((tool) => [tool.name, variantFileFields(tool as never)])).toEqual([
      ["summarize", ["document"]],
      ["inline_only", []],
      ["host_params", ["attachment"]],
    ]);
  });

  it('lists the recorded schemas on SDK v1 and v2, marks: "object" and lists of files too', async () => {
    const objectMarks = (server: V1McpServer | V2McpServer) => {
      (server as V1McpServer).registerTool(
        "attach",
        {
          description: "Takes a file the client attaches",
          inputSchema: {
            sheet: fileInput({ marks: "object", accept: ["text/csv"], maxBytes: 5_000, upload: true }),
            extra: z.array(
              fileInput({ marks: "object", description: "More sheets", paths: true, https: true }),
            ),
          },
        },
        async () => ({ content: [{ type: "text" as const, text: "ok" }] }),
      );
      return server;
    };
    const lists: Record<string, unknown> = {};
    for (const sdk of ["v1", "v2"] as const) {
      const server =
        sdk === "v1"
          ? register(objectMarks(new V1McpServer({ name: "s", version: "1.0.0" })))
          : register(objectMarks(new V2McpServer({ name: "s", version: "1.0.0" })));
      const client = (
        sdk === "v1"
          ? new V1Client({ name: "c", version: "1.0.0" })
          : new V2Client({ name: "c", version: "1.0.0" })
      ) as V1Client;
      const [a, b] = sdk === "v1" ? V1Memory.createLinkedPair() : V2Memory.createLinkedPair();
      await Promise.all([(server as V1McpServer).connect(b as never), client.connect(a as never)]);
      try {
        lists[sdk] = JSON.parse(JSON.stringify((await client.listTools()).tools));
      } finally {
        await client.close();
      }
    }
    // Recorded from session 29's code (MFB_RECORD_FIXTURE=1 writes it): a change to what either
    // SDK's clients see, e.g. from how fileInput builds its forms, fails here.
    if (process.env.MFB_RECORD_FIXTURE === "1")
      await writeFile(LISTS_FIXTURE, `${JSON.stringify(lists, null, 2)}\n`);
    expect(lists).toEqual(JSON.parse(await readFile(LISTS_FIXTURE, "utf8")));
  });
});
