/**
 * Three servers a new user writes from the docs alone (issue 42), each in a fresh `npm init -y`
 * project of its own that installs the packed tarball (packed once by quick-start.test.ts) and only
 * what the docs say to install, each driven by a real SDK client: the file goes in, the exact result
 * comes out.
 *
 * - `thumbnail`: an SDK v1 stdio tool (README quick start + sharp), an image in, a PNG thumbnail out;
 * - `csv`: an SDK v2 Streamable HTTP server (docs/sdk-v2.md's stateless wiring) whose
 *   `summarize_csv` takes an upload, with the upload page (docs/http-routes.md, people-in-the-loop.md);
 * - `proxy`: `mcp-file-bridge proxy` from a small YAML config (docs/proxy.md) in front of
 *   `@modelcontextprotocol/server-filesystem`, its upload flow end to end.
 */
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { connectOrSay } from "./docs-blocks.js";
import { freePort, freshProject, startServer, text, tsxCommand } from "./fresh-project.js";

const THUMBNAIL = `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { FileBridge } from "mcp-file-bridge";
import sharp from "sharp";
import { z } from "zod";

const server = new McpServer({ name: "thumbnailer", version: "1.0.0" });
const bridge = new FileBridge({ roots: [process.cwd()] });

server.registerTool(
  "thumbnail",
  {
    description: "Makes a PNG thumbnail of an image, at most \`size\` pixels wide and high.",
    inputSchema: { image: bridge.fileInput(), size: z.number().int().min(8).max(512).default(64) },
  },
  bridge.withFiles(
    async ({ image, size }) => {
      const png = await sharp(image).resize(size, size, { fit: "inside" }).png().toBuffer();
      return { content: [{ type: "image", data: png.toString("base64"), mimeType: "image/png" }] };
    },
    { fields: ["image"] },
  ),
);

await server.connect(new StdioServerTransport());
`;

const CSV = `import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { type AuthInfo, createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import {
  createFileRoutes,
  FileBridge,
  fsStore,
  memoryState,
  SignedUrlMinter,
  UploadHandleResolver,
} from "mcp-file-bridge";
import { toNodeHandler } from "mcp-file-bridge/node";
import { uploadPageRenderer } from "mcp-file-bridge/ui";
import { z } from "zod";

const port = Number(process.env.PORT ?? 3000);
const store = fsStore("./files");
const state = memoryState();
const minter = new SignedUrlMinter({
  secret: process.env.FILES_SECRET ?? "",
  baseUrl: \`http://127.0.0.1:\${port}\`,
  state,
});
const bridge = new FileBridge();
const uploads = new UploadHandleResolver({ store, minter, state, bridge });

/** "3 rows; columns: city, population; population total 1079692" */
function summarize(csv: string): string {
  const [header = [], ...rows] = csv.trim().split("\\n").map((line) => line.split(","));
  const totals = header.flatMap((name, i) => {
    const values = rows.map((row) => Number(row[i]));
    return values.every(Number.isFinite) ? [\`\${name} total \${values.reduce((a, b) => a + b, 0)}\`] : [];
  });
  return [\`\${rows.length} rows\`, \`columns: \${header.join(", ")}\`, ...totals].join("; ");
}

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "csv-summarizer", version: "1.0.0" });
  uploads.attach(server);
  server.registerTool(
    "summarize_csv",
    { description: "Summarizes a CSV file.", inputSchema: z.object({ file: bridge.fileInput() }) },
    bridge.withFiles(
      async ({ file }) => ({ content: [{ type: "text", text: summarize(await readFile(file, "utf8")) }] }),
      { fields: ["file"] },
    ),
  );
  return server;
});

function verify(request: Request): AuthInfo | undefined {
  const token = request.headers.get("authorization")?.replace(/^Bearer /, "");
  if (token === undefined || token !== process.env.DEMO_TOKEN) return undefined;
  return { token, clientId: "app", scopes: [], extra: { sub: "user-1" } };
}

const files = toNodeHandler(createFileRoutes({ store, minter, state, uploadPage: uploadPageRenderer() }));
const mcp = toNodeHandler((request) => {
  const authInfo = verify(request);
  return handler.fetch(request, authInfo ? { authInfo } : {});
});
createServer((req, res) => files(req, res, () => mcp(req, res))).listen(port, "127.0.0.1");
`;

const PROXY_YAML = `mcpServers:
  files:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "./work"]

proxy:
  storage: { dir: ./proxy-files }

servers:
  files:
    handoffDir: ./work/inbox
    tools:
      read_text_file: { upload: { args: [path], passThrough: relative-paths } }
`;

/** What each project installs besides the tarball: what the docs tell a user of that server to. */
const PROJECTS = {
  thumbnail: ["@modelcontextprotocol/sdk@1.32.2", "sharp@0.35.5", "tsx"],
  csv: ["@modelcontextprotocol/server@2.4.0", "zod@4", "tsx"],
  proxy: ["@modelcontextprotocol/sdk@1.32.2", "@modelcontextprotocol/server-filesystem@2026.8.31"],
} as const;

/** Makes the three projects under `root` (concurrently) and writes their servers. */
export async function installDocsServers(root: string, tarball: string): Promise<void> {
  await Promise.all(
    Object.entries(PROJECTS).map(([name, packages]) => freshProject(join(root, name), tarball, packages)),
  );
  await writeFile(join(root, "thumbnail", "server.ts"), THUMBNAIL);
  await writeFile(join(root, "csv", "server.ts"), CSV);
  await writeFile(join(root, "proxy", "proxy.yaml"), PROXY_YAML);
  await mkdir(join(root, "proxy", "work"));
  await writeFile(join(root, "proxy", "work", "notes.txt"), "already in the upstream's folder\n");
}

const CITIES = "city,population\nLyon,522250\nNantes,320732\nLille,236710\n";

export function describeDocsServers(rootOf: () => string): void {
  describe("three servers written from the docs, each in a fresh project", () => {
    it("SDK v1 stdio thumbnail tool: an image in (data: URL, path), the exact thumbnail out", {
      timeout: 120_000,
    }, async () => {
      const dir = join(rootOf(), "thumbnail");
      const client = new Client({ name: "docs-servers", version: "1.0.0" });
      const transport = new StdioClientTransport({
        ...tsxCommand(dir, "server.ts"),
        cwd: dir,
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      await connectOrSay(client, transport, () => stderr);
      try {
        const red = await sharp({ create: { width: 300, height: 150, channels: 3, background: "#ff0000" } })
          .png()
          .toBuffer();
        const thumbnailOf = async (image: string, size?: number) => {
          const result = await client.callTool({ name: "thumbnail", arguments: { image, size } });
          expect(result.isError, text(result)).toBeFalsy();
          const [block] = result.content as Array<{ type: string; data: string; mimeType: string }>;
          expect(block?.type).toBe("image");
          expect(block?.mimeType).toBe("image/png");
          const bytes = Buffer.from(block?.data ?? "", "base64");
          const { width, height, format } = await sharp(bytes).metadata();
          const { channels } = await sharp(bytes).stats();
          return { width, height, format, rgb: channels.slice(0, 3).map((c) => c.mean) };
        };
        const dataUrl = `data:image/png;name=red.png;base64,${red.toString("base64")}`;
        expect(await thumbnailOf(dataUrl, 100)).toEqual({
          width: 100,
          height: 50,
          format: "png",
          rgb: [255, 0, 0],
        });
        await writeFile(join(dir, "photo.png"), red);
        expect(await thumbnailOf("photo.png")).toEqual({
          width: 64,
          height: 32,
          format: "png",
          rgb: [255, 0, 0],
        });
        const refused = await client.callTool({ name: "thumbnail", arguments: { image: "/etc/hostname" } });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toContain("PATH_NOT_ALLOWED");
      } finally {
        await client.close();
      }
    });

    it("SDK v2 HTTP CSV summarizer: pending before the upload, the page, the upload, the exact summary", {
      timeout: 120_000,
    }, async () => {
      const dir = join(rootOf(), "csv");
      const port = await freePort();
      const token = "docs-servers-token-0123456789abcdef";
      const server = await startServer(dir, tsxCommand(dir, "server.ts"), port, {
        PORT: String(port),
        FILES_SECRET: "docs-servers-secret-0123456789abcdef0123456789",
        DEMO_TOKEN: token,
      });
      const client = new V2Client({ name: "docs-servers", version: "1.0.0" });
      try {
        await client.connect(
          new V2HttpTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
        const ticket = (
          await client.callTool({
            name: "get_upload_url",
            arguments: { message: "Upload the cities CSV", accept: [".csv", "text/csv"], max_files: 1 },
          })
        ).structuredContent as { upload_url: string; method: string; field: string; handle: string };
        const summarize = (file: string) => client.callTool({ name: "summarize_csv", arguments: { file } });
        // The model calls the tool before the person uploaded: a state, not "upload it again".
        const early = await summarize(ticket.handle);
        expect(early.isError).toBe(true);
        expect(text(early)).toContain("UPLOAD_PENDING");
        // What the person opens: the page, with the request's text and a one-file picker for CSV.
        const page = await fetch(ticket.upload_url, { headers: { accept: "text/html" } });
        expect(page.status).toBe(200);
        expect(page.headers.get("content-type")).toMatch(/^text\/html/);
        const html = await page.text();
        expect(html).toContain("Upload the cities CSV");
        expect(html).toContain("Upload a file");
        expect(html).toContain(".csv");
        // What the page sends: a form post to the same URL.
        const form = new FormData();
        form.append(ticket.field, new Blob([CITIES], { type: "text/csv" }), "cities.csv");
        const uploaded = await fetch(ticket.upload_url, { method: ticket.method, body: form });
        expect(uploaded.ok).toBe(true);
        const status = await client.callTool({ name: "check_upload", arguments: { handle: ticket.handle } });
        expect((status.structuredContent as { status: string }).status).toBe("ready");
        expect(text(await summarize(ticket.handle))).toBe(
          "3 rows; columns: city, population; population total 1079692",
        );
      } finally {
        await client.close();
        await server.stop();
      }
      expect(server.stderr()).not.toMatch(/Error|Warning/);
    });

    it("the proxy from a YAML config in front of server-filesystem: upload, data: URL and pass-through", {
      timeout: 120_000,
    }, async () => {
      const dir = join(rootOf(), "proxy");
      const proxy = await startServer(
        dir,
        {
          command: join(dir, "node_modules", ".bin", "mcp-file-bridge"),
          args: ["proxy", "--config", "proxy.yaml"],
        },
        /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
      );
      const client = new Client({ name: "docs-servers", version: "1.0.0" });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(proxy.match?.[1] as string)));
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(
          expect.arrayContaining(["read_text_file", "get_upload_url"]),
        );
        const read = async (path: string) => {
          const result = await client.callTool({ name: "read_text_file", arguments: { path } });
          expect(result.isError, text(result)).toBeFalsy();
          return text(result);
        };
        // The upload flow: a URL, the bytes over HTTP, the handle into the upstream's tool.
        const ticket = (await client.callTool({ name: "get_upload_url", arguments: {} }))
          .structuredContent as {
          upload_url: string;
          method: string;
          field: string;
          handle: string;
        };
        const form = new FormData();
        form.append(
          ticket.field,
          new Blob(["uploaded through the proxy\n"], { type: "text/plain" }),
          "up.txt",
        );
        expect((await fetch(ticket.upload_url, { method: ticket.method, body: form })).ok).toBe(true);
        expect(await read(ticket.handle)).toBe("uploaded through the proxy\n");
        const dataUrl = `data:text/plain;name=inline.txt;base64,${Buffer.from("inline bytes").toString("base64")}`;
        expect(await read(dataUrl)).toBe("inline bytes");
        // passThrough: relative-paths — a file already in the upstream's folder reaches it as it is.
        expect(await read("notes.txt")).toBe("already in the upstream's folder\n");
        // The handed-over copies are gone after the calls (the folder keeps a pool of empty per-call
        // folders, made ahead of calls).
        const left = await readdir(join(dir, "work", "inbox"), { recursive: true, withFileTypes: true });
        expect(left.filter((entry) => !entry.isDirectory()).map((entry) => entry.name)).toEqual([]);
      } finally {
        await client.close();
        await proxy.stop();
      }
    });
  });
}
