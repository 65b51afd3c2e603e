/**
 * The two example configs, driven by the SDK client. Each config is copied into a temp folder first
 * (its relative folders then land there); only the way the upstream is started is changed, so
 * nothing is fetched from the network: `npx -y <package>` / `npx tsx` become this repository's
 * installed copies.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearerTokens,
  createFileProxy,
  type FileProxy,
  loadProxyConfig,
  parseBearerTokens,
} from "../../src/proxy/index.js";
import { type AnyClient, connectHttp } from "../../test/mcp/v2/harness.js";
import { removeDirs, tempDir, textOf } from "../../test/proxy/support.js";
import { repoRoot, sha256 } from "../../test/support/helpers.js";

const here = import.meta.dirname;
const TOKEN = "example-proxy-token-0123456789";

type ToolResult = { content: unknown[]; isError?: boolean; structuredContent?: unknown; _meta?: unknown };

/**
 * The proxy on one SDK generation, and a client of that generation: SDK v1 with its 2025 client
 * (sessions), SDK v2 with a 2026-07-28 client (stateless, a bearer token names the user).
 */
async function serve(sdk: "v1" | "v2", config: string): Promise<{ proxy: FileProxy; client: AnyClient }> {
  const proxy = await createFileProxy({
    config: await loadProxyConfig(config),
    upstreamStderr: "ignore",
    sdk,
    ...(sdk === "v2" ? { authenticate: bearerTokens(parseBearerTokens(`me:${TOKEN}`, "test")) } : {}),
  });
  const url = new URL((await proxy.listen({ port: 0 })).mcpUrl);
  const client = sdk === "v1" ? await connectHttp("v1", url) : await connectHttp("v2-modern", url, TOKEN);
  return { proxy, client };
}

const call = async (client: AnyClient, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolResult;
const tsxLoader = join(repoRoot, "node_modules/tsx/dist/loader.mjs");

async function copyConfig(name: string, dir: string, replace: Array<[string, string]>): Promise<string> {
  let text = await readFile(join(here, name), "utf8");
  for (const [from, to] of replace) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  const target = join(dir, name);
  await writeFile(target, text);
  return target;
}

describe.each(["v1", "v2"] as const)(
  "examples/proxy on SDK %s: in front of @modelcontextprotocol/server-filesystem",
  (sdk) => {
    let dir: string;
    let proxy: FileProxy;
    let client: AnyClient;

    beforeAll(async () => {
      dir = await tempDir("example-proxy-fs-");
      const file = await copyConfig("filesystem.yaml", dir, [
        [
          'command: npx\n    args: ["-y", "@modelcontextprotocol/server-filesystem", "./work"]',
          `command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(join(repoRoot, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"))}, "./work"]`,
        ],
      ]);
      ({ proxy, client } = await serve(sdk, file));
    });

    afterAll(async () => {
      await client?.close();
      await proxy?.close();
      await removeDirs(dir);
    });

    it("is healthy: every configured tool and argument exists in the real server", async () => {
      expect(proxy.sdk).toBe(sdk);
      expect(await proxy.health()).toMatchObject({ status: "ok", problems: [] });
    });

    it("reads a file the client sends inline, and a file uploaded out of band", async () => {
      const text = "Quarterly numbers\nrevenue: 12%\n";
      const inline = await call(client, "read_text_file", {
        path: `data:text/plain;name=q3.txt;base64,${Buffer.from(text).toString("base64")}`,
      });
      expect(textOf(inline)).toBe(text);

      const ticket = await call(client, "get_upload_url", { filename: "pixel.png" });
      const { upload_url, handle } = ticket.structuredContent as { upload_url: string; handle: string };
      const png = Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        "base64",
      );
      const form = new FormData();
      form.append("file", new Blob([new Uint8Array(png)]), "pixel.png");
      expect((await fetch(upload_url, { method: "POST", body: form })).status).toBe(201);
      const media = await call(client, "read_media_file", { path: handle });
      const image = (media.content as Array<{ type: string; data?: string }>).find(
        (block) => block.type === "image",
      );
      expect(sha256(Buffer.from(image?.data ?? "", "base64"))).toBe(sha256(png));
    });

    it("returns what write_file wrote as an artifact with a signed download URL", async () => {
      const result = await call(client, "write_file", {
        path: "notes.md",
        content: "# Notes\n\nwritten by the real filesystem server\n",
      });
      expect(result.isError).toBeFalsy();
      const meta = result._meta as { artifact_uri: string; download_url: string };
      expect(meta.artifact_uri).toMatch(/^artifact:\/\/.*\/notes\.md$/);
      expect(await (await fetch(meta.download_url)).text()).toBe(
        "# Notes\n\nwritten by the real filesystem server\n",
      );
    });

    it("passes the other tools through", async () => {
      const listed = await call(client, "list_allowed_directories", {});
      expect(textOf(listed)).toContain(join(dir, "work"));
    });
  },
);

describe.each(["v1", "v2"] as const)("examples/proxy on SDK %s: in front of the pandoc example", (sdk) => {
  let dir: string;
  let proxy: FileProxy;
  let client: AnyClient;

  beforeAll(async () => {
    dir = await tempDir("example-proxy-pandoc-");
    const file = await copyConfig("pandoc.yaml", dir, [
      [
        'command: npx\n    args: ["tsx", "../../pandoc-converter/server.ts"]',
        `command: ${JSON.stringify(process.execPath)}\n    args: ["--import", ${JSON.stringify(tsxLoader)}, ${JSON.stringify(join(repoRoot, "examples/pandoc-converter/server.ts"))}]`,
      ],
    ]);
    ({ proxy, client } = await serve(sdk, file));
  });

  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await removeDirs(dir);
  });

  it("converts a document the client sends inline through the path-only tool", async () => {
    const markdown = "# Report\n\nRevenue grew by *twelve* percent.\n";
    const result = await call(client, "pandoc_convert-contents", {
      input_path: `data:text/markdown;name=report.md;base64,${Buffer.from(markdown).toString("base64")}`,
      to: "html",
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("<em>twelve</em>");
    expect(await proxy.health()).toMatchObject({ status: "ok" });
  });
});
