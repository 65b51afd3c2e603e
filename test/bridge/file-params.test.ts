/**
 * `fileInput({ fileParams: true })` and `bridge.fileParamsMeta()`: the tool's `_meta["openai/fileParams"]`
 * (top-level fields only), a JSON Schema unchanged by the option, and a host attachment
 * (`{download_url, file_id, mime_type?, file_name?}`) sent by real SDK v1 and v2 clients reaching the
 * tool as the exact bytes of a local https origin allowed in `https.downloadOrigins`.
 */
import { readFile } from "node:fs/promises";
import { Client as V2Client, InMemoryTransport as V2Memory } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1Memory } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { Ajv } from "ajv";
import formats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { fileInput, MCP_FILE_KEYWORD } from "../../src/bridge/file-input.js";
import { OPENAI_FILE_PARAMS } from "../../src/bridge/file-params.js";
import { codeOfSync, sha256 } from "../support/helpers.js";
import { type HttpsOrigin, hasOpenssl, startHttpsOrigin } from "../support/https-origin.js";

const bridge = new FileBridge({ https: { downloadOrigins: ["https://files.example.com"] } });

describe("fileInput({ fileParams: true })", () => {
  it("adds nothing to the JSON Schema: the same schema as without it, strict-validator clean once x-mcp-file is declared", () => {
    const marked = z.toJSONSchema(fileInput({ fileParams: true, accept: ["image/*"] }), {
      target: "draft-7",
    });
    expect(marked).toEqual(z.toJSONSchema(fileInput({ accept: ["image/*"] }), { target: "draft-7" }));
    expect(JSON.stringify(marked)).not.toContain("fileParams");
    const ajv = new Ajv({ strict: true, allErrors: true });
    ajv.addKeyword(MCP_FILE_KEYWORD);
    (
      (formats as unknown as { default?: (a: Ajv) => void }).default ?? (formats as never as (a: Ajv) => void)
    )(ajv);
    const validate = ajv.compile(
      z.toJSONSchema(z.object({ attachment: fileInput({ fileParams: true }) }), { target: "draft-7" }),
    );
    expect(validate({ attachment: { download_url: "https://files.example.com/f", file_id: "file_1" } })).toBe(
      true,
    );
    expect(validate({ attachment: { download_url: 3 } })).toBe(false);
  });

  it("refuses a non-boolean fileParams", () => {
    expect(codeOfSync(() => fileInput({ fileParams: "yes" as never }))).toBe("INVALID_OPTION");
  });
});

describe("bridge.fileParamsMeta", () => {
  it("names the marked top-level fields, also under optional/nullable/default/describe, from a raw shape or a z.object", () => {
    const shape = {
      attachment: bridge.fileInput({ fileParams: true }),
      second: fileInput({ fileParams: true }).optional().describe("Another one"),
      third: fileInput({ fileParams: true }).nullable().default(null),
      inline: fileInput(),
      note: z.string(),
    };
    const expected = { [OPENAI_FILE_PARAMS]: ["attachment", "second", "third"] };
    expect(bridge.fileParamsMeta(shape)).toEqual(expected);
    expect(bridge.fileParamsMeta(z.object(shape))).toEqual(expected);
    expect(bridge.fileParamsMeta({ inline: fileInput(), note: z.string() })).toEqual({});
  });

  it("names a top-level list of marked files (each element a host attachment of its own)", () => {
    const shape = {
      files: z.array(fileInput({ fileParams: true })),
      more: z
        .array(fileInput({ fileParams: true }).optional())
        .max(3)
        .optional(),
      inline: z.array(fileInput()),
    };
    expect(bridge.fileParamsMeta(shape)).toEqual({ [OPENAI_FILE_PARAMS]: ["files", "more"] });
  });

  it.each([
    ["inside a list of lists", { files: z.array(z.array(fileInput({ fileParams: true }))) }],
    ["inside a list of objects", { jobs: z.array(z.object({ file: fileInput({ fileParams: true }) })) }],
    ["inside a nested object", { wrapper: z.object({ file: fileInput({ fileParams: true }) }) }],
    ["inside a union", { either: z.union([z.number(), fileInput({ fileParams: true })]) }],
  ])("refuses a marked field %s with INVALID_OPTION (top-level fields only)", (_label, shape) => {
    expect(codeOfSync(() => bridge.fileParamsMeta(shape))).toBe("INVALID_OPTION");
  });

  it("refuses an input schema that is no object", () => {
    expect(codeOfSync(() => bridge.fileParamsMeta(null as never))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => bridge.fileParamsMeta(z.string()))).toBe("INVALID_OPTION");
  });
});

describe.skipIf(!hasOpenssl())("a host attachment from SDK v1 and v2 clients", () => {
  const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7) % 256));
  let origin: HttpsOrigin;
  let hostBridge: FileBridge;

  beforeAll(async () => {
    origin = await startHttpsOrigin((req, res) => {
      res.writeHead(req.url === "/download/file_9" ? 200 : 404, {
        "content-type": "application/octet-stream",
      });
      res.end(req.url === "/download/file_9" ? bytes : undefined);
    });
    hostBridge = new FileBridge({
      https: { downloadOrigins: [origin.origin], allowPrivateAddresses: true, ca: origin.ca },
    });
  });
  afterAll(() => origin.close());

  function register<S extends V1McpServer | V2McpServer>(server: S): S {
    // This file also makes fileInput()s with `accept`: withFiles must see each call's schema.
    hostBridge.attach(server);
    const inputSchema = {
      attachment: hostBridge.fileInput({ fileParams: true }),
      attachments: z.array(hostBridge.fileInput({ fileParams: true })).optional(),
      note: z.string().optional(),
    };
    (server as V1McpServer).registerTool(
      "host_params",
      { description: "Takes a host attachment", inputSchema, _meta: hostBridge.fileParamsMeta(inputSchema) },
      hostBridge.withFiles(
        async ({ attachment, attachments }) => {
          const lines = [];
          for (const path of [attachment, ...(attachments ?? [])]) {
            const read = await readFile(path);
            lines.push({ type: "text" as const, text: `${read.length} ${sha256(read)}` });
          }
          return { content: lines };
        },
        { fields: ["attachment", "attachments[]"] },
      ),
    );
    return server;
  }

  it.each(["v1", "v2"] as const)(
    "SDK %s: the tool list carries openai/fileParams and the tool gets the exact bytes",
    async (sdk) => {
      let client: V1Client;
      if (sdk === "v1") {
        client = new V1Client({ name: "c", version: "1.0.0" });
        const [a, b] = V1Memory.createLinkedPair();
        await Promise.all([
          register(new V1McpServer({ name: "s", version: "1.0.0" })).connect(b),
          client.connect(a),
        ]);
      } else {
        const v2 = new V2Client({ name: "c", version: "1.0.0" });
        const [a, b] = V2Memory.createLinkedPair();
        await Promise.all([
          register(new V2McpServer({ name: "s", version: "1.0.0" })).connect(b),
          v2.connect(a),
        ]);
        client = v2 as unknown as V1Client;
      }
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => [tool.name, tool._meta])).toEqual([
          ["host_params", { [OPENAI_FILE_PARAMS]: ["attachment", "attachments"] }],
        ]);
        const result = (await client.callTool({
          name: "host_params",
          arguments: {
            attachment: {
              download_url: `${origin.origin}/download/file_9`,
              file_id: "file_9",
              file_name: "data.bin",
              mime_type: "application/octet-stream",
            },
          },
        })) as { isError?: boolean; content: Array<{ text?: string }> };
        expect(result.isError).toBeFalsy();
        expect(result.content[0]?.text).toBe(`${bytes.length} ${sha256(bytes)}`);
        // A list field: each element is a host attachment resolved like a single one.
        const attachment = { download_url: `${origin.origin}/download/file_9`, file_id: "file_9" };
        const listed = (await client.callTool({
          name: "host_params",
          arguments: { attachment, attachments: [attachment, { ...attachment, file_name: "again.bin" }] },
        })) as { isError?: boolean; content: Array<{ text?: string }> };
        expect(listed.isError).toBeFalsy();
        expect(listed.content.map((block) => block.text)).toEqual(
          Array(3).fill(`${bytes.length} ${sha256(bytes)}`),
        );
        const refused = (await client.callTool({
          name: "host_params",
          arguments: {
            attachment: { download_url: "https://files.elsewhere.example/download/file_9", file_id: "f" },
          },
        })) as { isError?: boolean; content: Array<{ text?: string }> };
        expect(refused.isError).toBe(true);
        expect(refused.content[0]?.text).toContain("HOST_NOT_ALLOWED");
        expect(refused.content[0]?.text).toContain("https.downloadOrigins");
      } finally {
        await client.close();
      }
    },
  );
});
