/**
 * The demo's server: every piece of mcp-file-bridge wired together on embedded defaults (files on local
 * disk in one folder, state in memory). Two tools:
 * - `inspect_file` takes one file in any accepted form and describes it;
 * - `summarize_files` takes several files and writes a Markdown report, returned as an artifact.
 * Plus `get_upload_url` (large files out of band) and the stored files as MCP resources.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { z } from "zod";
import {
  Artifacts,
  createFileRoutes,
  FileBridge,
  fileInput,
  fsStore,
  memoryState,
  ResourceRegistry,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";
import { isTextualMediaType } from "../../src/media/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import { EXAMPLE_SHARED_TICKET_RATE_LIMIT } from "../shared/server-limits.js";

export interface DemoAppOptions {
  /** Folder for stored files, temp files and the workspace the path form may read. */
  dataDir: string;
  /** Base URL the HTTP server is reachable at (signed URLs point there), or a function giving it. */
  baseUrl: string | (() => string);
}

export function createDemoApp({ dataDir, baseUrl }: DemoAppOptions) {
  const store = fsStore(join(dataDir, "store"));
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: randomBytes(32), baseUrl, state });
  const registry = new ResourceRegistry({ store, minter });
  // One size limit: uploads take what the tools accept (the upload limit defaults to the bridge's).
  const bridge = new FileBridge({
    roots: [join(dataDir, "workspace")],
    tmpDir: join(dataDir, "tmp"),
    maxBytes: 64 * 1024 * 1024,
  });
  bridge.addResolver(registry.resolver());
  const uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    bridge,
    rateLimit: EXAMPLE_SHARED_TICKET_RATE_LIMIT, // 20 upload URLs per scope per minute
  });
  const artifacts = new Artifacts({ store, minter, registry, tmpDir: join(dataDir, "tmp") });
  const routes = toNodeHandler(createFileRoutes({ store, minter, state, registry }));

  /** The demo's MCP server on SDK v1 (`@modelcontextprotocol/sdk`). */
  function createServer(): McpServer {
    return mount(new McpServer({ name: "mcp-file-bridge-demo", version: "1.0.0" }));
  }

  /**
   * The same server on SDK v2 (`@modelcontextprotocol/server`): the same lines mount the same
   * pieces (`toHost()` tells the generations apart). The two `McpServer` classes have the same
   * `registerTool(name, config, callback)`, but TypeScript cannot call a method on a union of two
   * overloaded classes, so `mount` is typed against one of them.
   */
  function createServerV2(): McpServerV2 {
    const server = new McpServerV2({ name: "mcp-file-bridge-demo", version: "1.0.0" });
    mount(server as unknown as McpServer);
    return server;
  }

  function mount(server: McpServer): McpServer {
    uploads.attach(server);
    registry.attach(server);

    server.registerTool(
      "inspect_file",
      {
        description: "Describes a file: name, media type, size, sha256 and, for text, its first line.",
        inputSchema: { file: fileInput() },
      },
      bridge.withFiles(
        async (args) => {
          const file = args.file;
          const facts = [`${file.name}: ${file.mimeType}, ${file.size} bytes, sha256 ${file.sha256}`];
          if (isTextualMediaType(file.mimeType)) {
            const firstLine = (await readFile(file.path, "utf8")).split("\n", 1)[0];
            facts.push(`first line: ${JSON.stringify(firstLine)}`);
          }
          facts.push(`(came in as ${file.source.kind})`);
          return { content: [{ type: "text", text: facts.join("\n") }] };
        },
        { fields: ["file"], pass: "file" },
      ),
    );

    server.registerTool(
      "summarize_files",
      {
        description:
          "Writes a Markdown report about several files and returns it as a downloadable artifact.",
        inputSchema: { files: z.array(fileInput()), output: z.string().optional() },
      },
      artifacts.withArtifacts(
        bridge.withFiles(
          async (args) => {
            const files = args.files;
            const rows = files.map(
              (f) => `| ${f.name} | ${f.mimeType} | ${f.size} | \`${f.sha256.slice(0, 16)}…\` |`,
            );
            const report = [
              "# File report",
              "",
              "| name | type | bytes | sha256 |",
              "|---|---|---|---|",
              ...rows,
            ];
            await writeFile(args.output as string, `${report.join("\n")}\n`);
            return { content: [{ type: "text", text: `Summarized ${files.length} files.` }] };
          },
          { fields: ["files[]"], pass: "file" },
        ),
        { outputPathArg: "output", outputName: "report.md" },
      ),
    );
    return server;
  }

  return {
    createServer,
    createServerV2,
    registry,
    routes,
    store,
    async close() {
      await registry.close();
      await store.close?.();
      await state.close?.();
    },
  };
}
