/**
 * The remote the client matrix puts the `connect` shim in front of (Streamable HTTP on 127.0.0.1, in
 * the test process), built on this package: each output shape the shim saves (an embedded blob, a
 * download link; each with and without `structuredContent`) and a tool taking `fileInput()`.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type RunningHttpServer, serveHttp } from "../../../examples/shared/serve-http.js";
import {
  Artifacts,
  createFileRoutes,
  FileBridge,
  fileInput,
  fsStore,
  memoryState,
  SignedUrlMinter,
  UploadHandleResolver,
  withFileOutputs,
} from "../../../src/index.js";
import { toNodeHandler } from "../../../src/node/index.js";

/** The embedded blob's bytes: recognisable in base64 ("U0hJTS1CTE9C…"), so a test can tell it was not forwarded. */
export const EMBEDDED_BYTES = Buffer.from("SHIM-BLOB-".repeat(40));
/** The linked report's text. */
export const REPORT_TEXT = "SHIM-REPORT quarterly figures\n";

export interface ShimRemote {
  mcpUrl: string;
  close(): Promise<void>;
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function embedded(name: string) {
  return {
    type: "resource" as const,
    resource: {
      uri: `file:///out/${name}`,
      mimeType: "application/octet-stream",
      blob: EMBEDDED_BYTES.toString("base64"),
    },
  };
}

/** Starts the remote on 127.0.0.1 port 0. */
export async function startShimRemote(): Promise<ShimRemote> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-shim-remote-"));
  const store = fsStore(join(dir, "store"));
  const state = memoryState();
  let http: RunningHttpServer | undefined;
  const minter = new SignedUrlMinter({
    secret: randomBytes(32),
    baseUrl: () => http?.url ?? "http://127.0.0.1",
    state,
  });
  const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
  const uploads = new UploadHandleResolver({ store, minter, state, bridge });
  const artifacts = new Artifacts({ store, minter });
  const files = toNodeHandler(createFileRoutes({ store, minter, state }));
  const report = (name: string) =>
    artifacts.capture({ scope: "shim-matrix", bytes: Buffer.from(REPORT_TEXT), name });

  const createServer = () => {
    const server = new McpServer({ name: "shim-remote", version: "1.0.0" });
    uploads.attach(server);
    server.registerTool("embedded_plain", { description: "An embedded file." }, async () => ({
      content: [{ type: "text", text: "Blob built." }, embedded("plain.bin")],
    }));
    server.registerTool(
      "embedded_structured",
      { description: "An embedded file and structuredContent." },
      async () => ({
        content: [{ type: "text", text: "Blob built." }, embedded("data.bin")],
        structuredContent: { rows: 2 },
      }),
    );
    server.registerTool("link_plain", { description: "A download link." }, async () =>
      withFileOutputs({ content: [{ type: "text", text: "Report written." }] }, await report("plain.txt")),
    );
    server.registerTool(
      "link_structured",
      { description: "A download link and structuredContent." },
      async () =>
        withFileOutputs(
          { content: [{ type: "text", text: "Report written." }], structuredContent: { pages: 1 } },
          await report("report.txt"),
        ),
    );
    server.registerTool(
      "digest",
      {
        description: "Hashes a file.",
        inputSchema: { file: fileInput({ description: "The file to hash." }) },
      },
      bridge.withFiles(
        async ({ file }) => ({
          content: [{ type: "text", text: `sha256 ${file.sha256} size ${file.size}` }],
          structuredContent: { sha256: file.sha256, size: file.size },
        }),
        { fields: ["file"], pass: "file" },
      ),
    );
    return server;
  };

  http = await serveHttp({
    createServer,
    routes: (req, res, next) => {
      if (new URL(req.url ?? "/", "http://x").pathname.startsWith("/files/")) files(req, res, next);
      else next();
    },
  });
  const running = http;
  return {
    mcpUrl: running.mcpUrl.href,
    async close() {
      await running.close();
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

export { sha };
