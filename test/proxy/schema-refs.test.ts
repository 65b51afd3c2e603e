/**
 * Issue 41 part 7: schemas as real servers write them. A pydantic-style upstream (`$defs` + local
 * `$ref`, the file argument's definition shared by a top-level field, a nested field and list
 * items) behind the proxy: the wiring check finds every configured path, the listing replaces each
 * with the file argument schema (without touching the shared definition for other uses), and files
 * sent inline reach the upstream as local paths with their exact bytes. The shim's `x-mcp-file`
 * search follows the same references.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFileProxy, type FileProxy, parseProxyConfig } from "../../src/proxy/index.js";
import { markedFileArgs, schemaAt } from "../../src/proxy/schema-paths.js";
import { type AnyClient, connectHttp } from "../mcp/v2/harness.js";
import { removeDirs, tempDir, textOf } from "./support.js";

const FIXTURE = join(import.meta.dirname, "fixtures/pydantic-upstream.mjs");
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const dataUrl = (name: string, text: string) =>
  `data:text/plain;name=${name};base64,${Buffer.from(text).toString("base64")}`;

type Schema = Record<string, unknown>;
const PYDANTIC_SCHEMA = JSON.parse(
  readFileSync(join(import.meta.dirname, "fixtures/pydantic-schema.json"), "utf8"),
) as Schema & { $defs: { FileArg: Schema } };

describe("schema paths through local $ref / $defs", () => {
  it("schemaAt and markedFileArgs follow the references (top level, nested object, list items)", () => {
    for (const path of ["f", "job.doc", "many[]"]) expect(schemaAt(PYDANTIC_SCHEMA, path)).toHaveLength(1);
    expect(schemaAt(PYDANTIC_SCHEMA, "job.nothing")).toEqual([]);
    expect(markedFileArgs(PYDANTIC_SCHEMA).sort()).toEqual(["f", "job.doc", "many[]"]);
  });
});

describe("a pydantic-style upstream behind the proxy", () => {
  let dir: string;
  let proxy: FileProxy;
  let client: AnyClient;

  beforeAll(async () => {
    dir = await tempDir("proxy-pydantic-");
    await mkdir(join(dir, "handoff"));
    const config = parseProxyConfig({
      mcpServers: { py: { command: process.execPath, args: [FIXTURE] } },
      servers: {
        py: {
          handoffDir: join(dir, "handoff"),
          tools: { hash_files: { upload: { args: ["f", "job.doc", "many[]"] } } },
        },
      },
      proxy: { storage: { dir: join(dir, "data") } },
    });
    proxy = await createFileProxy({ config, upstreamStderr: "ignore" });
    client = await connectHttp("v1", new URL((await proxy.listen({ port: 0 })).mcpUrl));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await removeDirs(dir);
  });

  it("finds every configured path in the schema (no wiring problem)", async () => {
    expect(await proxy.health()).toMatchObject({ status: "ok", problems: [] });
  });

  it("lists each file path with the file argument schema, the shared definition left for the rest", async () => {
    const { tools } = (await client.listTools()) as unknown as {
      tools: Array<{ name: string; inputSchema: Schema }>;
    };
    const listed = tools.find((tool) => tool.name === "hash_files")?.inputSchema as Schema;
    const accepts = (schema: Schema[]) =>
      schema.length === 1 &&
      JSON.stringify(schema[0]).includes("data URL") &&
      "anyOf" in (schema[0] as Schema);
    for (const path of ["f", "job.doc", "many[]"]) expect(accepts(schemaAt(listed, path))).toBe(true);
    // `job.label` is untouched, and the upstream's definitions are still there for anything else.
    expect(schemaAt(listed, "job.label")).toEqual([{ type: "string", title: "Label" }]);
    expect((listed.$defs as Schema).FileArg).toEqual(PYDANTIC_SCHEMA.$defs.FileArg);
  });

  it("hands every file (top level, nested, list items) to the upstream as a local file with its bytes", async () => {
    const result = (await client.callTool({
      name: "hash_files",
      arguments: {
        f: dataUrl("a.txt", "top level\n"),
        job: { doc: dataUrl("b.txt", "nested\n"), label: "x" },
        many: [dataUrl("c.txt", "item one\n"), dataUrl("d.txt", "item two\n")],
      },
    })) as { isError?: boolean };
    expect(result.isError).toBeFalsy();
    const hashes = textOf(result)
      .split("\n")
      .map((line) => line.split(" ")[0]);
    expect(hashes).toEqual(["top level\n", "nested\n", "item one\n", "item two\n"].map(sha));
  });
});
