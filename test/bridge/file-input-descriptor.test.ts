/**
 * The file-descriptor branch of `fileInput()` (the files extension revision Claude Code ships):
 * where the `x-mcp-file` marker goes with `marks`, what strict validators make of it, that zod keeps
 * the descriptor's `id`, and that a server without 2026-07-28 (SDK v1) refuses descriptors plainly.
 */
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1Memory } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Ajv } from "ajv";
import formats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fileInput, MCP_FILE_KEYWORD } from "../../src/bridge/file-input.js";
import {
  FileBridge,
  memoryState,
  memoryStore,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";

type Node = Record<string, unknown>;
const DESCRIPTOR = {
  id: "file-1",
  name: "a.pdf",
  mimeType: "application/pdf",
  size: 3,
  digest: { algorithm: "sha-256", value: "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0" },
};

function strictAjv(): Ajv {
  const ajv = new Ajv({ strict: true, allErrors: true });
  ajv.addKeyword(MCP_FILE_KEYWORD);
  (((formats as unknown as { default?: unknown }).default ?? formats) as (ajv: Ajv) => void)(ajv);
  return ajv;
}

const markedBranches = (json: Node) => (json.anyOf as Node[]).filter((branch) => MCP_FILE_KEYWORD in branch);

describe("fileInput's file-descriptor branch", () => {
  it("default marks: today's marks stay (property, uri branch) and the descriptor object is marked too", () => {
    const json = z.toJSONSchema(fileInput({ maxBytes: 10 })) as Node;
    expect(json[MCP_FILE_KEYWORD]).toEqual({ maxSize: 10 });
    const marked = markedBranches(json);
    expect(marked.map((branch) => branch.type)).toEqual(["string", "object"]);
    const object = marked[1] as Node;
    expect(object.required).toEqual(["id", "mimeType", "size"]);
    expect(Object.keys(object.properties as Node).sort()).toEqual([
      "digest",
      "id",
      "mimeType",
      "name",
      "size",
    ]);
    expect(object[MCP_FILE_KEYWORD]).toEqual({ maxSize: 10 });
  });

  it('marks: "object" puts the marker on the descriptor object only, with no uri branch', () => {
    const json = z.toJSONSchema(fileInput({ marks: "object", accept: ["application/pdf"] })) as Node;
    expect(json[MCP_FILE_KEYWORD]).toBeUndefined();
    const marked = markedBranches(json);
    expect(marked).toHaveLength(1);
    expect(marked[0]?.type).toBe("object");
    expect(marked[0]?.[MCP_FILE_KEYWORD]).toEqual({ accept: ["application/pdf"] });
    expect((json.anyOf as Node[]).some((branch) => branch.format === "uri")).toBe(false);
    expect(() => fileInput({ marks: "some" as never })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
  });

  it("compiles under ajv strict mode (x-mcp-file declared, formats loaded) and validates descriptors", () => {
    for (const marks of ["all", "object"] as const) {
      const schema = z.toJSONSchema(z.object({ document: fileInput({ marks }) }), { target: "draft-7" });
      const validate = strictAjv().compile(schema);
      for (const value of [
        DESCRIPTOR,
        { id: "file-2", mimeType: "text/plain", size: 0 },
        "upload://sessions/x/y",
        { name: "a", content: "aGk=" },
      ]) {
        expect(validate({ document: value })).toBe(true);
      }
      expect(validate({ document: { id: "file-1", mimeType: "text/plain" } })).toBe(false);
      expect(validate({ document: { ...DESCRIPTOR, size: -1 } })).toBe(false);
    }
  });

  it("zod keeps the descriptor whole (the object form would drop id)", () => {
    expect(fileInput().parse(DESCRIPTOR)).toEqual(DESCRIPTOR);
    expect(fileInput({ marks: "object" }).parse({ id: "file-1", mimeType: "text/plain", size: 2 })).toEqual({
      id: "file-1",
      mimeType: "text/plain",
      size: 2,
    });
  });

  it("an SDK v1 server (no 2026-07-28) answers a descriptor with UNSUPPORTED_INPUT, even when the request declares the revision", async () => {
    const state = memoryState();
    const store = memoryStore();
    const minter = new SignedUrlMinter({
      secret: "descriptor-v1-secret-descriptor-v1-0123",
      baseUrl: "http://127.0.0.1:1",
      state,
    });
    const bridge = new FileBridge({ sweepOnStart: false });
    const uploads = new UploadHandleResolver({ store, minter, state, bridge });
    const server = new V1McpServer({ name: "s", version: "1.0.0" });
    uploads.attach(server, { files: true });
    let runs = 0;
    server.registerTool(
      "ingest",
      { inputSchema: { document: fileInput({ marks: "object" }) } },
      bridge.withFiles(
        async () => {
          runs += 1;
          return { content: [{ type: "text" as const, text: "ran" }] };
        },
        { fields: ["document"] },
      ),
    );
    const client = new V1Client({ name: "c", version: "1.0.0" });
    const [a, b] = V1Memory.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    try {
      const result = (await client.callTool({
        name: "ingest",
        arguments: { document: DESCRIPTOR },
        _meta: {
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/files": { upload: {} } },
          },
        },
      })) as { isError?: boolean; content: Array<{ text: string }>; resultType?: unknown };
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toMatch(/^Error UNSUPPORTED_INPUT:/);
      expect(result.resultType).toBeUndefined();
      expect(runs).toBe(0);
    } finally {
      await client.close();
    }
  });
});
