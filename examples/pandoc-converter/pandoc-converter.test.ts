import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it, type TestContext } from "vitest";
import { scopeRef } from "../../src/index.js";
import { type PandocConverter, start } from "./server.js";

const ENSURE = fileURLToPath(new URL("../../scripts/ensure-pandoc.sh", import.meta.url));
const MARKDOWN = "# Quarterly report\n\nRevenue grew by *twelve* percent.\n";

let pandocMissing: string | undefined;

beforeAll(() => {
  const result = spawnSync("bash", [ENSURE], { encoding: "utf8", timeout: 280_000 });
  if (result.status !== 0) {
    pandocMissing = `pandoc is not installed and could not be installed (${(result.stderr || result.error?.message || "").trim()}); skipping the pandoc-converter tests`;
    console.warn(pandocMissing);
  }
}, 300_000);

function needPandoc(ctx: TestContext): void {
  if (pandocMissing) ctx.skip(pandocMissing);
}

const text = (result: CallToolResult, index = 0) => (result.content[index] as { text: string }).text;

describe("pandoc-converter example", () => {
  let dir: string;
  let roots: string;
  let work: string;
  let converter: PandocConverter | undefined;
  const clients: Client[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "pandoc-converter-test-"));
    roots = join(dir, "docs");
    work = join(dir, "tmp");
    await mkdir(roots);
    await mkdir(work);
    await writeFile(join(roots, "report.md"), MARKDOWN);
  });

  afterEach(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    clients.length = 0;
    await converter?.close();
    converter = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function inMemory(): Promise<Client> {
    converter = await start({ roots: [roots], tmpDir: work, dataDir: join(dir, "data") });
    const server = converter.createServer();
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "test", version: "1.0.0" });
    await Promise.all([server.connect(b), client.connect(a)]);
    clients.push(client);
    return client;
  }

  async function overHttp(): Promise<Client> {
    converter = await start({ roots: [roots], tmpDir: work, dataDir: join(dir, "data"), transport: "http" });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(converter.mcpUrl as URL));
    clients.push(client);
    return client;
  }

  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

  it("convert-contents: a path inside the roots comes back as text (html, plain)", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    const html = await call(client, "convert-contents", { input_path: join(roots, "report.md"), to: "html" });
    expect(html.isError).toBeFalsy();
    expect(text(html)).toContain('<h1 id="quarterly-report">Quarterly report</h1>');
    expect(text(html)).toContain("<em>twelve</em>");
    const plain = await call(client, "convert-contents", { input_path: "report.md", to: "plain" });
    expect(text(plain)).toContain("Revenue grew by twelve percent.");
    // No temp folder survives a call.
    expect(await readdir(work)).toEqual(expect.not.arrayContaining([expect.stringMatching(/^pandoc-call-/)]));
  });

  it("convert-contents: a path outside the roots is PATH_NOT_ALLOWED", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    await writeFile(join(dir, "outside.md"), "# secret");
    const result = await call(client, "convert-contents", {
      input_path: join(dir, "outside.md"),
      to: "html",
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("PATH_NOT_ALLOWED");
  });

  it("convert-contents-base64: filename + base64, and a data URL", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    const html = Buffer.from("<h2>Hi</h2><p>there <strong>you</strong></p>").toString("base64");
    const md = await call(client, "convert-contents-base64", {
      filename: "page.html",
      content_base64: html,
      to: "markdown",
    });
    expect(md.isError).toBeFalsy();
    expect(text(md)).toContain("## Hi");
    expect(text(md)).toContain("**you**");

    const dataUrl = `data:text/markdown;name=n.md;base64,${Buffer.from(MARKDOWN).toString("base64")}`;
    const rst = await call(client, "convert-contents-base64", { content_base64: dataUrl, to: "rst" });
    expect(text(rst)).toContain("Quarterly report\n================");
  });

  it("a non-zip body named .docx is UNSUPPORTED_MEDIA_TYPE, not pandoc's unpack error", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    const result = await call(client, "convert-contents-base64", {
      filename: "fake.docx",
      content_base64: Buffer.from("this is plain text, not a zip").toString("base64"),
      to: "markdown",
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("UNSUPPORTED_MEDIA_TYPE");
    expect(text(result)).not.toContain("unpack");
  });

  it("binary outputs are artifacts; an artifact URI converts back server-side", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    const docx = await call(client, "convert-contents", { input_path: "report.md", to: "docx" });
    expect(docx.isError).toBeFalsy();
    const link = docx.content.find((b) => b.type === "resource_link") as {
      uri: string;
      mimeType: string;
      name: string;
    };
    // `{scope}` carries the scope's reference, never the scope itself.
    expect(link.uri).toMatch(
      new RegExp(`^artifact://sessions/${scopeRef("default")}/[0-9a-z]{26}/report\\.docx$`),
    );
    expect(link.mimeType).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");

    // The artifact is a real docx (a zip container) readable as a resource.
    const read = await client.readResource({ uri: link.uri });
    const blob = Buffer.from((read.contents[0] as { blob: string }).blob, "base64");
    expect(blob.subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));

    const back = await call(client, "convert-document-resource", { uri: link.uri, to: "markdown" });
    expect(back.isError).toBeFalsy();
    expect(text(back)).toContain("Quarterly report");
    expect(text(back)).toContain("*twelve*");

    for (const to of ["odt", "epub"]) {
      const out = await call(client, "convert-contents", { input_path: "report.md", to });
      expect(out.isError).toBeFalsy();
      expect(out.content.some((b) => b.type === "resource_link" && b.uri.endsWith(`/report.${to}`))).toBe(
        true,
      );
    }
  });

  it("convert-document-resource refuses URIs it did not issue or of another session", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    const docx = await call(client, "convert-contents", { input_path: "report.md", to: "docx" });
    const own = (docx.content.find((b) => b.type === "resource_link") as { uri: string }).uri;
    // The same file id under another session's scope: resolved like a missing file.
    const foreign = await call(client, "convert-document-resource", {
      uri: own.replace(`/${scopeRef("default")}/`, `/${scopeRef("someone-else")}/`),
      to: "markdown",
    });
    expect(foreign.isError).toBe(true);
    expect(text(foreign)).toContain("NOT_FOUND");
    const https = await call(client, "convert-document-resource", {
      uri: "https://example.com/a.docx",
      to: "markdown",
    });
    expect(https.isError).toBe(true);
    expect(text(https)).toContain("FORM_DISABLED");
    const made = await call(client, "convert-document-resource", {
      uri: `upload://sessions/${scopeRef("default")}/nope`,
      to: "markdown",
    });
    expect(text(made)).toContain("UNSUPPORTED_INPUT"); // no upload handles without the HTTP routes
  });

  it("over HTTP: get_upload_url → upload → handle → convert; docx artifacts carry a working download URL", async (ctx) => {
    needPandoc(ctx);
    const client = await overHttp();
    const ticket = await call(client, "get_upload_url", { filename: "notes.md" });
    const { upload_url, handle } = ticket.structuredContent as { upload_url: string; handle: string };
    const form = new FormData();
    form.append("file", new Blob([MARKDOWN], { type: "text/markdown" }), "notes.md");
    const uploaded = await fetch(upload_url, { method: "POST", body: form });
    expect(uploaded.status).toBe(201);

    const html = await call(client, "convert-document-resource", { uri: handle, to: "html" });
    expect(html.isError).toBeFalsy();
    expect(text(html)).toContain("<em>twelve</em>");

    const docx = await call(client, "convert-document-resource", { uri: handle, to: "docx" });
    const meta = docx.structuredContent as { download_url: string; uri: string };
    const download = await fetch(meta.download_url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toContain('attachment; filename="notes.docx"');
    expect(
      Buffer.from(await download.arrayBuffer())
        .subarray(0, 2)
        .toString("latin1"),
    ).toBe("PK");
    // The artifact shows up in this session's resources.
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(meta.uri);
  });
});
