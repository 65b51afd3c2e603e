/**
 * Issue 41 part 6: results the proxy and the shim rewrite validate against the `outputSchema` they
 * list. The upstream is the real `@modelcontextprotocol/server-filesystem` (its tools declare closed
 * output schemas, `additionalProperties: false`); the clients are validating ones: SDK v1
 * `Client.callTool` and SDK v2 `callTool` (both check `structuredContent` against the listed
 * `outputSchema` once they have listed the tools) and the Inspector CLI. Every rule kind: upload
 * consumers, artifact producers (`none`, `regex`, `embedded`).
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client as V2Client, InMemoryTransport as V2InMemory } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemory } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectShim, createConnectShim } from "../../src/proxy/connect-shim.js";
import { createFileProxy, type FileProxy, parseProxyConfig } from "../../src/proxy/index.js";
import { type AnyClient, connectHttp } from "../mcp/v2/harness.js";
import { repoRoot, sha256 } from "../support/helpers.js";
import { inspectJson } from "../support/inspector.js";
import { removeDirs, tempDir } from "./support.js";

type ToolResult = {
  content: Array<{ type: string; text?: string; data?: string }>;
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
};
type Listed = { tools: Array<{ name: string; outputSchema?: Record<string, unknown> }> };

const FS_SERVER = join(repoRoot, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const dataUrl = (type: string, name: string, bytes: Buffer) =>
  `data:${type};name=${name};base64,${bytes.toString("base64")}`;

/** Two server-filesystem upstreams (the second under `rx_`, for the regex locator on `write_file`). */
function config(work: string, data: string) {
  const upstream = { command: process.execPath, args: [FS_SERVER, work] };
  const rules = { handoffDir: join(work, "inbox"), outputDirs: [join(work, "outbox")] };
  return parseProxyConfig({
    mcpServers: { files: upstream, rx: upstream },
    proxy: { storage: { dir: data } },
    servers: {
      files: {
        ...rules,
        tools: {
          read_text_file: { upload: { args: ["path"] } },
          read_media_file: { upload: { args: ["path"] }, artifacts: { locator: "embedded" } },
          write_file: { artifacts: { locator: "none", outputArg: "path", outputName: "output.txt" } },
        },
      },
      rx: {
        ...rules,
        prefix: "rx_",
        tools: { write_file: { artifacts: { locator: "regex", pattern: "Successfully wrote to (.+)" } } },
      },
    },
  });
}

let dir: string;
let work: string;
let proxy: FileProxy;
let mcpUrl: URL;

beforeAll(async () => {
  dir = await tempDir("proxy-output-schema-");
  work = join(dir, "work");
  await mkdir(join(work, "inbox"), { recursive: true });
  await mkdir(join(work, "outbox"), { recursive: true });
  proxy = await createFileProxy({ config: config(work, join(dir, "data")), upstreamStderr: "ignore" });
  mcpUrl = new URL((await proxy.listen({ port: 0 })).mcpUrl);
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await removeDirs(dir);
});

/** The calls of every rule kind, each with what its result must show. */
function ruleCalls() {
  const text = "Quarterly numbers\nrevenue: 12%\n";
  return {
    uploadConsumer: {
      name: "read_text_file",
      arguments: { path: dataUrl("text/plain", "q3.txt", Buffer.from(text)) },
      check: (result: ToolResult) => expect(result.structuredContent).toEqual({ content: text }),
    },
    artifactNone: {
      name: "write_file",
      arguments: { path: "notes.md", content: "# Notes\n" },
      check: async (result: ToolResult) => {
        const files = result.structuredContent?.files as Array<{ uri: string; downloadUrl: string }>;
        expect(files).toHaveLength(1);
        expect(await (await fetch(files[0]?.downloadUrl as string)).text()).toBe("# Notes\n");
      },
    },
    artifactRegex: {
      name: "rx_write_file",
      arguments: { path: join(work, "outbox", `r-${Math.random()}.txt`), content: "regex located\n" },
      check: async (result: ToolResult) => {
        const files = result.structuredContent?.files as Array<{ downloadUrl: string }>;
        expect(files).toHaveLength(1);
        expect(await (await fetch(files[0]?.downloadUrl as string)).text()).toBe("regex located\n");
      },
    },
    artifactEmbedded: {
      name: "read_media_file",
      arguments: { path: dataUrl("image/png", "pixel.png", PNG) },
      check: async (result: ToolResult) => {
        const files = result.structuredContent?.files as Array<{ downloadUrl: string }>;
        expect(files).toHaveLength(1);
        const got = Buffer.from(await (await fetch(files[0]?.downloadUrl as string)).arrayBuffer());
        expect(sha256(got)).toBe(sha256(PNG));
      },
    },
  };
}

const RULE_KINDS = ["uploadConsumer", "artifactNone", "artifactRegex", "artifactEmbedded"] as const;

describe.each(["v1", "v2-legacy"] as const)(
  "the proxy in front of server-filesystem, SDK %s client",
  (kind) => {
    let client: AnyClient;
    beforeAll(async () => {
      client = await connectHttp(kind, mcpUrl);
      // Listing is what makes both SDK clients validate `structuredContent` on later calls.
      const { tools } = (await client.listTools()) as unknown as Listed;
      const writeFile = tools.find((tool) => tool.name === "write_file");
      expect(writeFile?.outputSchema).toMatchObject({ additionalProperties: false });
    });
    afterAll(async () => {
      await client?.close();
    });

    it.each(RULE_KINDS)("%s: the result validates against the listed outputSchema", async (rule) => {
      const c = ruleCalls()[rule];
      const result = (await client.callTool({
        name: c.name,
        arguments: c.arguments,
      })) as unknown as ToolResult;
      expect(result.isError).toBeFalsy();
      await c.check(result);
    });
  },
);

describe.each(["v1", "v2"] as const)("the connect shim (SDK %s) in front of the proxy", (sdk) => {
  let shim: ConnectShim;
  let out: string;
  let client: {
    listTools(): Promise<unknown>;
    callTool(params: unknown): Promise<unknown>;
    close(): Promise<void>;
  };
  beforeAll(async () => {
    out = await tempDir("shim-output-schema-");
    shim = await createConnectShim({ sdk, remote: { url: mcpUrl.href }, outputDir: out });
    const Pair = sdk === "v1" ? V1InMemory : V2InMemory;
    const [clientSide, serverSide] = Pair.createLinkedPair();
    await (shim.createServer() as unknown as { connect(t: unknown): Promise<void> }).connect(serverSide);
    const desktop =
      sdk === "v1"
        ? new V1Client({ name: "desktop", version: "1" })
        : new V2Client({ name: "desktop", version: "1" });
    await desktop.connect(clientSide as never);
    client = desktop as unknown as typeof client;
    await client.listTools();
  });
  afterAll(async () => {
    await client?.close();
    await shim?.close();
    await removeDirs(out);
  });

  it("write_file's saved output (localPath in structuredContent.files) validates against what the shim lists", async () => {
    const result = (await client.callTool({
      name: "write_file",
      arguments: { path: "shim.md", content: "through the shim\n" },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    const files = result.structuredContent?.files as Array<{ localPath?: string }>;
    expect(files).toHaveLength(1);
    expect(await readFile(files[0]?.localPath as string, "utf8")).toBe("through the shim\n");
  });

  it("an upload consumer's result passes through and validates", async () => {
    const result = (await client.callTool({
      name: "read_text_file",
      arguments: { path: dataUrl("text/plain", "s.txt", Buffer.from("shim text\n")) },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ content: "shim text\n" });
  });
});

describe("the Inspector CLI in front of the proxy", () => {
  it("calls the write_file artifact producer and gets the result, not a validation error", async () => {
    const home = await tempDir("inspector-home-");
    try {
      const { json } = await inspectJson<{ result?: ToolResult } & ToolResult>(
        [
          mcpUrl.href,
          "--transport",
          "http",
          "--format",
          "json",
          "--method",
          "tools/call",
          "--tool-name",
          "write_file",
          "--tool-arg",
          "path=inspected.md",
          "content=from the inspector",
        ],
        { home, timeout: 90_000 },
      );
      const result = (json.result ?? json) as ToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent?.files).toHaveLength(1);
    } finally {
      await removeDirs(home);
    }
  }, 120_000);
});
