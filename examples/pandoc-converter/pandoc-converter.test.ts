import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Client as ClientV2,
  InMemoryTransport as InMemoryTransportV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type CallToolResult,
  type McpError,
  ResourceListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it, type TestContext, vi } from "vitest";
import { scopeRef } from "../../src/index.js";
import { repoRoot } from "../../test/support/helpers.js";
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

/** Bearer tokens of the v2 HTTP endpoint in these tests: two users. */
const TOKENS = { "tok-ada": "ada", "tok-bob": "bob" };

/**
 * A client of the given generation; the v2 one is typed as v1's (the calls used here are the same).
 * Over HTTP and stdio the v2 client probes `server/discover` and speaks 2026-07-28 when the server can
 * — only an SDK v2 server can — so its era tells which generation served it.
 */
function newClient(sdk: "v1" | "v2", modern: boolean): Client {
  if (sdk === "v1") return new Client({ name: "test", version: "1.0.0" });
  const options = modern ? { versionNegotiation: { mode: "auto" as const } } : {};
  return new ClientV2({ name: "test", version: "1.0.0" }, options) as unknown as Client;
}

const eraOf = (client: Client) =>
  "getProtocolEra" in client ? (client as unknown as ClientV2).getProtocolEra() : "legacy";

// The same client-driven flows on each SDK generation: a v1 client against the v1 server (sessions), a
// v2 client against the v2 server (in memory; over HTTP stateless, the scope being the token's user).
describe.each(["v1", "v2"] as const)("pandoc-converter example on SDK %s", (sdk) => {
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
    // No retries: converter.close() closes its bridges, so nothing is being made in `tmp` any more.
    await rm(dir, { recursive: true, force: true });
  });

  async function inMemory(): Promise<Client> {
    converter = await start({ roots: [roots], tmpDir: work, dataDir: join(dir, "data"), sdk });
    const client = newClient(sdk, false);
    if (sdk === "v2") {
      const [a, b] = InMemoryTransportV2.createLinkedPair();
      await converter.createServerV2().connect(b);
      await (client as unknown as ClientV2).connect(a);
    } else {
      const [a, b] = InMemoryTransport.createLinkedPair();
      await Promise.all([converter.createServer().connect(b), client.connect(a)]);
    }
    clients.push(client);
    return client;
  }

  /** Starts the HTTP server (v2: stateless, with {@link TOKENS}) and connects a first client. */
  async function overHttp(token = "tok-ada"): Promise<Client> {
    converter = await start({
      roots: [roots],
      tmpDir: work,
      dataDir: join(dir, "data"),
      transport: "http",
      sdk,
      tokens: TOKENS,
    });
    return connectHttp(token);
  }

  /** Another client of the running HTTP server: on v1 a new session, on v2 the token's user (none: anonymous). */
  async function connectHttp(token: string | undefined): Promise<Client> {
    const url = converter?.mcpUrl as URL;
    const client = newClient(sdk, true);
    if (sdk === "v2") {
      const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : {};
      await (client as unknown as ClientV2).connect(
        new StreamableHTTPClientTransportV2(url, { requestInit }),
      );
    } else {
      await client.connect(new StreamableHTTPClientTransport(url));
    }
    expect(eraOf(client)).toBe(sdk === "v2" ? "modern" : "legacy");
    clients.push(client);
    return client;
  }

  async function uploadHandle(client: Client, name: string, body: string): Promise<string> {
    const ticket = await call(client, "get_upload_url", { filename: name });
    expect(ticket.isError).toBeFalsy();
    const { upload_url, handle } = ticket.structuredContent as { upload_url: string; handle: string };
    const form = new FormData();
    form.append("file", new Blob([body], { type: "text/markdown" }), name);
    const uploaded = await fetch(upload_url, { method: "POST", body: form });
    expect(uploaded.status).toBe(201);
    return handle;
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

  // The budget follows clientInfo.name alone (the same on both generations: test/links/file-output.test.ts).
  it.skipIf(sdk === "v2")(
    "every output fits every measured client's cap, each with a link the model can act on",
    async (ctx) => {
      needPandoc(ctx);
      // What each client shows the model, and its cap (test/clients measures them; Claude Desktop, whose
      // clientInfo.name is claude-ai, rejects a whole result over 1 MB).
      const shows = {
        "claude-code": { cap: 50_000, of: (r: CallToolResult) => JSON.stringify(r.structuredContent) },
        "codex-mcp-client": { cap: 11_000, of: (r: CallToolResult) => JSON.stringify(r.structuredContent) },
        "gemini-cli-mcp-client": {
          cap: 40_000,
          of: (r: CallToolResult) =>
            r.content.map((b) => ("text" in b ? b.text : JSON.stringify(b))).join("\n"),
        },
        "claude-ai": { cap: 1_000_000, of: (r: CallToolResult) => JSON.stringify(r) },
      };
      const big = `# Long\n\n${"A paragraph of the long report, *emphasised* now and then.\n\n".repeat(1_000)}`;
      const small = Buffer.from(MARKDOWN).toString("base64");
      converter = await start({ roots: [roots], tmpDir: work, dataDir: join(dir, "data"), sdk });
      for (const [name, { cap, of }] of Object.entries(shows)) {
        let client: Client;
        if (sdk === "v2") {
          client = new ClientV2({ name, version: "1.0.0" }) as unknown as Client;
          const [a, b] = InMemoryTransportV2.createLinkedPair();
          await converter.createServerV2().connect(b);
          await (client as unknown as ClientV2).connect(a);
        } else {
          client = new Client({ name, version: "1.0.0" });
          const [a, b] = InMemoryTransport.createLinkedPair();
          await Promise.all([converter.createServer().connect(b), client.connect(a)]);
        }
        clients.push(client);
        const outputs = [[Buffer.from(big).toString("base64"), "html"]] as Array<[string, string]>;
        // A short text output and a binary one are the same for every client: once.
        if (name === "codex-mcp-client") outputs.push([small, "html"], [small, "docx"]);
        for (const [content, to] of outputs) {
          const result = await call(client, "convert-contents-base64", {
            filename: "long.md",
            content_base64: content,
            to,
          });
          expect(result.isError, `${name} ${to}`).toBeFalsy();
          const seen = of(result);
          expect(seen.length, `${name} ${to}: ${seen.length} characters`).toBeLessThan(cap);
          // The output itself (short HTML) or its link (a stored file).
          expect(seen, `${name} ${to}`).toMatch(
            /<em>twelve<\/em>|<em>emphasised<\/em>|artifact:\/\/|file:\/\//,
          );
          if (content !== small) expect(seen, `${name}: the long HTML is a link`).toMatch(/artifact:\/\//);
        }
      }
    },
  );

  /** Asks to convert a plain-text body named `.docx` (not a zip): a refused input. */
  const convertFakeDocx = (client: Client) =>
    call(client, "convert-contents-base64", {
      filename: "fake.docx",
      content_base64: Buffer.from("this is plain text, not a zip").toString("base64"),
      to: "markdown",
    });

  it("a non-zip body named .docx is UNSUPPORTED_MEDIA_TYPE, not pandoc's unpack error", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    const result = await convertFakeDocx(client);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("UNSUPPORTED_MEDIA_TYPE");
    expect(text(result)).not.toContain("unpack");
  });

  // CI run 16 saw ENOTEMPTY removing `tmp` after this refused input: the bridges' spare call folders
  // were still being made. close() lets them go quiet, so a removal without retries never races them.
  it("close() leaves the temp folder quiet after a refused input: removed without retries", async (ctx) => {
    needPandoc(ctx);
    const client = await inMemory();
    const result = await convertFakeDocx(client);
    expect(text(result)).toContain("UNSUPPORTED_MEDIA_TYPE");
    await converter?.close();
    converter = undefined;
    expect(await readdir(work)).toEqual([]);
    await rm(work, { recursive: true });
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
    // New files are announced: on the v1 session; on v2 (2026-07-28) on a subscriptions/listen stream.
    let listChanged = 0;
    if (sdk === "v2") {
      const v2 = client as unknown as ClientV2;
      v2.setNotificationHandler("notifications/resources/list_changed", async () => {
        listChanged++;
      });
      await v2.listen({ resourcesListChanged: true });
    } else {
      client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
        listChanged++;
      });
    }
    const handle = await uploadHandle(client, "notes.md", MARKDOWN);

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
    // The artifact shows up in this caller's resources (v1: the session's; v2: the user's).
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(meta.uri);
    await vi.waitFor(() => expect(listChanged).toBeGreaterThan(0));
  });

  it("over HTTP two callers do not see each other's uploads or artifacts (v1: sessions, v2: token users)", async (ctx) => {
    needPandoc(ctx);
    const ada = await overHttp("tok-ada");
    const bob = await connectHttp("tok-bob");
    const handle = await uploadHandle(ada, "ada.md", MARKDOWN);
    const docx = await call(ada, "convert-document-resource", { uri: handle, to: "docx" });
    const artifact = (docx.structuredContent as { uri: string }).uri;
    expect(artifact).toMatch(/^artifact:\/\/sessions\/[^/]+\/[0-9a-z]{26}\/ada\.docx$/);

    // Bob holds Ada's handle and artifact URI: both resolve like missing files.
    const viaHandle = await call(bob, "convert-document-resource", { uri: handle, to: "html" });
    expect(viaHandle.isError).toBe(true);
    expect(text(viaHandle)).toContain("NOT_FOUND");
    const viaArtifact = await call(bob, "convert-document-resource", { uri: artifact, to: "markdown" });
    expect(text(viaArtifact)).toContain("NOT_FOUND");
    const read = await bob.readResource({ uri: artifact }).then(
      () => undefined,
      (error: McpError) => error,
    );
    expect(read?.code).toBe(-32602);
    expect((await bob.listResources()).resources.map((r) => r.uri)).not.toContain(artifact);

    // Ada still has both, and on v2 a second connection with Ada's token is Ada.
    const again = sdk === "v2" ? await connectHttp("tok-ada") : ada;
    expect(text(await call(again, "convert-document-resource", { uri: handle, to: "html" }))).toContain(
      "<em>twelve</em>",
    );
    expect((await again.listResources()).resources.map((r) => r.uri)).toContain(artifact);
  });

  it.runIf(sdk === "v2")(
    "stateless v2: a call without a token is FORBIDDEN (no shared scope); an unknown token is 401",
    async (ctx) => {
      needPandoc(ctx);
      await overHttp("tok-ada");
      const anonymous = await connectHttp(undefined);
      for (const [name, args] of [
        ["get_upload_url", { filename: "x.md" }],
        ["convert-contents", { input_path: "report.md", to: "docx" }],
        ["convert-contents-base64", { filename: "a.md", content_base64: "IyBoaQ==", to: "odt" }],
      ] as const) {
        const refused = await call(anonymous, name, args);
        expect(refused.isError, name).toBe(true);
        expect(text(refused), name).toContain("FORBIDDEN");
      }
      // resources/list needs a scope too: refused, not answered with someone's (or everyone's) files.
      const list = await anonymous.listResources().then(
        () => undefined,
        (error: McpError) => error,
      );
      expect(list?.data).toMatchObject({ code: "FORBIDDEN" });

      const response = await fetch(converter?.mcpUrl as URL, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer tok-wrong",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(response.status).toBe(401);
    },
  );

  it("the command line runs on stdio (--sdk flag)", { timeout: 30_000 }, async (ctx) => {
    needPandoc(ctx);
    const args = [
      "--import",
      "tsx",
      "examples/pandoc-converter/server.ts",
      ...(sdk === "v2" ? ["--sdk", "v2"] : []),
    ];
    // Its own temp folder, so the test sees what the run leaves there.
    const temp = join(dir, "cli-tmp");
    await mkdir(temp);
    const env = { ...(process.env as Record<string, string>), TMPDIR: temp };
    const params = { command: process.execPath, args, cwd: repoRoot, env, stderr: "pipe" as const };
    const client = newClient(sdk, true);
    if (sdk === "v2") await (client as unknown as ClientV2).connect(new StdioClientTransportV2(params));
    else await client.connect(new StdioClientTransport(params));
    expect(eraOf(client)).toBe(sdk === "v2" ? "modern" : "legacy");
    const html = await call(client, "convert-contents-base64", {
      filename: "report.md",
      content_base64: Buffer.from(MARKDOWN).toString("base64"),
      to: "html",
    });
    expect(html.isError).toBeFalsy();
    expect(text(html)).toContain("<em>twelve</em>");
    const docx = await call(client, "convert-contents-base64", {
      filename: "report.md",
      content_base64: Buffer.from(MARKDOWN).toString("base64"),
      to: "docx",
    });
    const uri = (docx.structuredContent as { uri: string }).uri;
    const back = await call(client, "convert-document-resource", { uri, to: "markdown" });
    expect(text(back)).toContain("*twelve*");
    expect((await readdir(temp)).filter((n) => n.startsWith("pandoc-converter-data-"))).toHaveLength(1);
    // Closing the client ends the server's stdin: the run removes the data folder it made, and the
    // bridge's call folders (its shared parent folder may stay). tsx keeps its own cache there.
    await client.close();
    const left = async () =>
      (await readdir(temp, { recursive: true })).filter(
        // The bridge's per-user parent folder (`mcp-file-bridge-<uid>`) may stay.
        (n) => !n.startsWith("tsx-") && !/^mcp-file-bridge(-\d+)?$/.test(n),
      );
    await vi.waitFor(async () => expect(await left()).toEqual([]), { timeout: 10_000, interval: 50 });
  });
});
