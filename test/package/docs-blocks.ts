/**
 * The docs test (issue 42): every fenced block of README.md and docs/*.md marked
 * `<!-- docs-test: <id> -->` is extracted, written into the fresh project of quick-start.test.ts
 * (the packed tarball installed with both SDKs), type-checked there with TypeScript 5.9 and 7 (that
 * file's type-check covers `blocks/`) and run: servers are started from the project and driven by a
 * real SDK client — v1 over stdio, v2 over Streamable HTTP on 127.0.0.1 — which sends a file and
 * checks the exact result. Every marked block has a driver here and every driver a block, so a block
 * that is unmarked, renamed or broken fails the test. Blocks that must stay equal (the quick starts of
 * the README, getting-started and sdk-v2) are compared as text.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { StreamableHTTPClientTransport, Client as V2Client } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { SignedUrlMinter } from "../../src/index.js";
import { freePort, type MarkedBlock, markedBlocks, startServer, text, tsxCommand } from "./fresh-project.js";

/** What a driver gets: the fresh project, the block and (for `ts` blocks) its file in the project. */
interface Run {
  dir: string;
  block: MarkedBlock;
  file: string;
  blocks: Map<string, MarkedBlock>;
}
type Driver = (run: Run) => Promise<void>;

/** Connects; when the server dies first (a block that does not run), the error carries its stderr. */
export async function connectOrSay(
  client: Client,
  transport: StdioClientTransport,
  stderr: () => string,
): Promise<void> {
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`the server did not start: ${(error as Error).message}\n${stderr()}`);
  }
}

/** A v1 client on a stdio server started with `npx tsx <file>`-equivalent from the project. */
async function stdioClient(dir: string, file: string): Promise<{ client: Client; stderr: () => string }> {
  const client = new Client({ name: "docs-test", version: "1.0.0" });
  const transport = new StdioClientTransport({ ...tsxCommand(dir, file), cwd: dir, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await connectOrSay(client, transport, () => stderr);
  return { client, stderr: () => stderr };
}

/** The calls a new user's client makes against the quick-start server (`count_words`) in `file`. */
export async function exercise(dir: string, server: { command: string; args: string[] }): Promise<void> {
  const client = new Client({ name: "quick-start-test", version: "1.0.0" });
  const transport = new StdioClientTransport({ ...server, cwd: dir, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await connectOrSay(client, transport, () => stderr);
  try {
    const call = async (arg: unknown) =>
      client.callTool({ name: "count_words", arguments: { file: arg } }) as Promise<Record<string, unknown>>;
    const dataUrl = `data:text/plain;base64,${Buffer.from("one two three").toString("base64")}`;
    expect(text(await call(dataUrl))).toBe("3 words");
    const object = { filename: "a.txt", content: Buffer.from("four five").toString("base64") };
    expect(text(await call(object))).toBe("2 words");
    await writeFile(join(dir, "notes.txt"), "six seven eight nine");
    expect(text(await call("notes.txt"))).toBe("4 words");
    // What models and clients really send: the description names the path form (roots are set),
    // an object sent as a JSON string works, bare base64 is told the data: form to use.
    const { tools } = await client.listTools();
    expect(JSON.stringify(tools[0]?.inputSchema)).toContain("a path inside the server's shared folders");
    expect(text(await call(JSON.stringify(object)))).toBe("2 words");
    const bare = await call(Buffer.from("ten eleven twelve thirteen").toString("base64"));
    expect(bare.isError).toBe(true);
    expect(text(bare)).toContain("FORM_DISABLED");
    expect(text(bare)).toContain("data:<media type>;name=<file name>;base64,");
    const refused = await call("/etc/passwd");
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("PATH_NOT_ALLOWED");
  } finally {
    await client.close();
  }
  // Nothing a user cannot act on: no Node warning (deprecations, experimental features) from the
  // package on either Node major.
  expect(stderr).not.toMatch(/Warning/);
}

/** The block `id`, which must exist. */
export function blockOf(blocks: Map<string, MarkedBlock>, id: string): MarkedBlock {
  const block = blocks.get(id);
  if (!block) throw new Error(`no block marked docs-test: ${id}`);
  return block;
}

/** A driver that checks the block is the same text as the block `id` (B: one quick start). */
const sameAs =
  (id: string): Driver =>
  async ({ block, blocks }) => {
    expect(block.code, `${block.where} must be the same text as ${blockOf(blocks, id).where}`).toBe(
      blockOf(blocks, id).code,
    );
  };

/** The drivers, one per marked block. */
const DRIVERS: Record<string, Driver> = {
  // The README's set-up lines; the harness installs them with the published names replaced by the
  // tarball and pinned versions.
  "readme-install": async ({ block }) => {
    expect(block.code.split("\n")).toEqual([
      "npm init -y && npm pkg set type=module",
      "npm install mcp-file-bridge @modelcontextprotocol/sdk",
      "npm install -D typescript tsx @types/node",
      "",
    ]);
  },
  // Written as the project's tsconfig.json by the harness; the type-check uses it.
  "readme-tsconfig": async ({ block }) => {
    expect(JSON.parse(block.code).compilerOptions.strict).toBe(true);
  },
  "readme-v1": async ({ dir, file }) => exercise(dir, tsxCommand(dir, file)),
  "readme-v2": async ({ dir, file }) => exercise(dir, tsxCommand(dir, file)),
  "getting-started-install": sameAs("readme-install"),
  "getting-started-tsconfig": sameAs("readme-tsconfig"),
  "getting-started-server": sameAs("readme-v1"),
  // "Try it": the Inspector command's tool and argument, and the answer shown below it, exactly.
  "getting-started-try": async ({ dir, block, blocks }) => {
    const tool = /--tool-name (\S+)/.exec(block.code)?.[1];
    const [name, value] = (/--tool-arg '([^=]+)=([^']+)'/.exec(block.code) ?? []).slice(1);
    expect(block.code).toContain("npx tsx server.ts");
    const { client } = await stdioClient(dir, join("blocks", "getting-started-server.ts"));
    try {
      const result = await client.callTool({ name: tool as string, arguments: { [name as string]: value } });
      expect(result).toEqual(JSON.parse(blockOf(blocks, "getting-started-try-output").code));
    } finally {
      await client.close();
    }
  },
  "getting-started-try-output": async () => {}, // checked by getting-started-try
  "sdk-v2-quick-start": sameAs("readme-v2"),
  "sdk-v2-http": async ({ dir, file }) => {
    const port = await freePort();
    const token = "docs-test-token-0123456789abcdef";
    const server = await startServer(dir, tsxCommand(dir, file), port, {
      PORT: String(port),
      FILES_SECRET: "docs-test-secret-0123456789abcdef0123456789",
      DEMO_TOKEN: token,
    });
    const connect = async (bearer?: string) => {
      const client = new V2Client({ name: "docs-test", version: "1.0.0" });
      const headers: Record<string, string> = bearer ? { authorization: `Bearer ${bearer}` } : {};
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit: { headers },
        }),
      );
      return client;
    };
    try {
      const client = await connect(token);
      const dataUrl = `data:text/plain;name=a.txt;base64,${Buffer.from("one two three").toString("base64")}`;
      expect(text(await client.callTool({ name: "count_words", arguments: { file: dataUrl } }))).toBe(
        "3 words",
      );
      // The large-file path: an upload URL, the bytes over HTTP, the handle into the tool.
      const ticket = (await client.callTool({ name: "get_upload_url", arguments: {} })).structuredContent as {
        upload_url: string;
        method: string;
        field: string;
      };
      const form = new FormData();
      form.append(ticket.field, new Blob(["four five six seven"], { type: "text/plain" }), "big.txt");
      const uploaded = await fetch(ticket.upload_url, { method: ticket.method, body: form });
      expect(uploaded.status).toBe(201);
      const { files } = (await uploaded.json()) as { files: Array<{ handle: string }> };
      const byHandle = await client.callTool({ name: "count_words", arguments: { file: files[0]?.handle } });
      expect(text(byHandle)).toBe("4 words");
      await client.close();
      // Without the token there is no scope: what needs one is refused, never a shared default;
      // a file inside the call needs none.
      const anonymous = await connect();
      const refused = await anonymous.callTool({ name: "get_upload_url", arguments: {} });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain("FORBIDDEN");
      const handle = await anonymous.callTool({ name: "count_words", arguments: { file: files[0]?.handle } });
      expect(handle.isError).toBe(true);
      expect(text(handle)).toContain("FORBIDDEN");
      expect(text(await anonymous.callTool({ name: "count_words", arguments: { file: dataUrl } }))).toBe(
        "3 words",
      );
      await anonymous.close();
    } finally {
      await server.stop();
    }
    // The one warning is the refusal's (MCP_FILE_BRIDGE_NO_SCOPE), for the operator.
    expect(server.stderr()).not.toMatch(/Error/);
  },
  "file-bridge-main": async ({ dir, file }) => {
    const { client, stderr } = await stdioClient(dir, file);
    try {
      const count = async (arg: string) => {
        const result = await client.callTool({ name: "word_count", arguments: { file: arg } });
        return { isError: result.isError === true, text: text(result) };
      };
      await writeFile(join(dir, "five.txt"), "one two three four five");
      expect(await count("five.txt")).toEqual({ isError: false, text: "5" });
      const dataUrl = `data:text/plain;name=a.txt;base64,${Buffer.from("six seven").toString("base64")}`;
      expect(await count(dataUrl)).toEqual({ isError: false, text: "2" });
      const refused = await count("/etc/passwd");
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("PATH_NOT_ALLOWED");
      // What the comment says: bridge.fileInput() tells the model that paths work here.
      const { tools } = await client.listTools();
      expect(JSON.stringify(tools[0]?.inputSchema)).toContain("a path inside the server's shared folders");
    } finally {
      await client.close();
    }
    expect(stderr()).not.toMatch(/Warning/);
  },
  "http-routes-main": async ({ dir, file }) => {
    const port = await freePort();
    const secret = "docs-test-routes-secret-0123456789abcdef";
    const server = await startServer(dir, tsxCommand(dir, file), port, {
      PORT: String(port),
      FILE_URL_SECRET: secret,
    });
    try {
      // The server's own minter would hand these out; the same secret signs them here.
      const minter = new SignedUrlMinter({ secret, baseUrl: `http://127.0.0.1:${port}` });
      const upload = await minter.mint({ scope: "docs", fileId: "ticket-1", action: "upload" });
      const form = new FormData();
      form.append("file", new Blob(["bytes over plain HTTP"], { type: "text/plain" }), "routes.txt");
      const stored = await fetch(upload.url, { method: "POST", body: form });
      expect(stored.status).toBe(201);
      const { files } = (await stored.json()) as { files: Array<{ id: string; name: string }> };
      expect(files.map((f) => f.name)).toEqual(["routes.txt"]);
      const storedFile = { id: files[0]?.id as string, scope: "docs" };
      const download = await fetch((await minter.downloadUrl(storedFile)).url);
      expect(download.status).toBe(200);
      expect(await download.text()).toBe("bytes over plain HTTP");
      const forged = new SignedUrlMinter({
        secret: "another-secret-0123456789abcdef01234567",
        baseUrl: "http://x",
      });
      const stranger = (await forged.downloadUrl(storedFile)).url;
      expect((await fetch(stranger.replace("http://x", `http://127.0.0.1:${port}`))).status).toBe(401);
    } finally {
      await server.stop();
    }
    expect(server.stderr()).not.toMatch(/Error|Warning/);
  },
  "resource-registry-stdio": async ({ dir, file }) => {
    const { client, stderr } = await stdioClient(dir, file);
    try {
      const dataUrl = `data:text/plain;name=note.txt;base64,${Buffer.from("hello docs").toString("base64")}`;
      const result = await client.callTool({ name: "to_upper", arguments: { file: dataUrl } });
      expect(result.isError).toBeFalsy();
      const link = (result.content as Array<{ type: string; uri?: string; name?: string }>).find(
        (block) => block.type === "resource_link",
      );
      expect(link?.name).toBe("upper-note.txt");
      const read = await client.readResource({ uri: link?.uri as string });
      const contents = read.contents[0] as { text?: string; blob?: string };
      expect(contents.text ?? Buffer.from(contents.blob ?? "", "base64").toString()).toBe("HELLO DOCS");
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toContain(link?.uri);
    } finally {
      await client.close();
    }
    expect(stderr()).not.toMatch(/Warning/);
  },
};

/** Writes every marked `ts` block to `blocks/<id>.ts` in `dir`; resolves with the blocks by id. */
export async function writeBlocks(dir: string): Promise<Map<string, MarkedBlock>> {
  const blocks = new Map<string, MarkedBlock>();
  for (const block of await markedBlocks()) {
    if (blocks.has(block.id)) throw new Error(`${block.where}: docs-test id ${block.id} is used twice`);
    blocks.set(block.id, block);
  }
  await mkdir(join(dir, "blocks"), { recursive: true });
  for (const block of blocks.values())
    if (block.lang === "ts") await writeFile(join(dir, "blocks", `${block.id}.ts`), block.code);
  return blocks;
}

/** Registers the docs test; `project()` gives the fresh project and its blocks once beforeAll ran. */
export function describeDocsBlocks(project: () => { dir: string; blocks: Map<string, MarkedBlock> }): void {
  describe("the docs' marked code blocks, run in the fresh project", () => {
    it("every marked block has a driver and every driver a marked block", () => {
      expect([...project().blocks.keys()].sort()).toEqual(Object.keys(DRIVERS).sort());
    });

    it.each(Object.keys(DRIVERS))("%s", { timeout: 120_000 }, async (id) => {
      const { dir, blocks } = project();
      const block = blockOf(blocks, id);
      await (DRIVERS[id] as Driver)({ dir, block, blocks, file: join("blocks", `${id}.ts`) });
    });
  });
}
