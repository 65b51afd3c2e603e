/**
 * Real remote servers for the connect-shim tests, in the test process on 127.0.0.1:
 * - `startPiecesRemote`: built on this package (get_upload_url, upload/download routes, a tool taking
 *   `fileInput()`, artifacts), plus tools that drop the connection mid-call or mid-download;
 * - `startPlainRemote`: a plain SDK server whose tool takes a `data:` URL and returns an embedded file.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { type RunningHttpServer, serveHttp } from "../../examples/shared/serve-http.js";
import {
  Artifacts,
  createFileRoutes,
  defaultScope,
  FileBridge,
  fileInput,
  fsStore,
  memoryState,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";
import { toNodeHandler } from "../../src/node/index.js";

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

export interface Remote {
  url: string;
  mcpUrl: string;
  /** Requests seen, as "METHOD /path" (file routes) and "tool:<name>" (tool calls). */
  seen: string[];
  close(): Promise<void>;
}

export async function startPiecesRemote(): Promise<Remote> {
  const dir = await mkdtemp(join(tmpdir(), "shim-remote-"));
  const store = fsStore(join(dir, "store"));
  const state = memoryState();
  const seen: string[] = [];
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

  const createServer = () => {
    const server = new McpServer({ name: "pieces-remote", version: "1.0.0" });
    uploads.attach(server);
    server.registerTool(
      "digest",
      {
        description: "Hashes a file.",
        inputSchema: { file: fileInput({ description: "The file to hash." }) },
      },
      bridge.withFiles(
        async ({ file }) => {
          seen.push("tool:digest");
          return {
            content: [
              { type: "text", text: `sha256 ${file.sha256} size ${file.size} via ${file.source.kind}` },
            ],
            structuredContent: { sha256: file.sha256, size: file.size, source: file.source.kind },
          };
        },
        { fields: ["file"], pass: "file" },
      ),
    );
    server.registerTool(
      "report",
      { description: "Writes a report artifact.", inputSchema: { name: z.string(), text: z.string() } },
      async ({ name, text }, extra) => {
        seen.push("tool:report");
        const captured = await artifacts.capture({
          scope: defaultScope(extra),
          bytes: Buffer.from(text),
          name,
        });
        return {
          content: [{ type: "text", text: "Report written." }, ...captured.content],
          _meta: captured._meta,
        };
      },
    );
    server.registerTool("drop", { description: "Drops the connection mid-call." }, async () => {
      seen.push("tool:drop");
      setTimeout(() => http?.server.closeAllConnections(), 50);
      await new Promise((resolve) => setTimeout(resolve, 5000));
      return { content: [{ type: "text", text: "unreachable" }] };
    });
    server.registerTool("broken_download", { description: "Links a download that breaks off." }, async () => {
      seen.push("tool:broken_download");
      const url = `${http?.url}/files/download/broken-on-purpose`;
      return {
        content: [
          {
            type: "resource_link",
            uri: "artifact://sessions/x/01j0000000000000000000000/big.bin",
            name: "big.bin",
          },
          {
            type: "text",
            text: `Resource URI: artifact://sessions/x/01j0000000000000000000000/big.bin\nDownload URL: ${url}`,
          },
        ],
      };
    });
    return server;
  };

  const broken = (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(1024 * 1024) });
    res.write(Buffer.alloc(64 * 1024, 7));
    setTimeout(() => req.socket.destroy(), 30);
  };
  http = await serveHttp({
    createServer,
    routes: (req, res, next) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path.startsWith("/files/")) seen.push(`${req.method} ${path.split("/").slice(0, 3).join("/")}`);
      if (path === "/files/download/broken-on-purpose") broken(req, res);
      else if (path.startsWith("/files/")) files(req, res, next);
      else next();
    },
  });
  const running = http;
  return {
    url: running.url,
    mcpUrl: running.mcpUrl.href,
    seen,
    async close() {
      await running.close();
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

export async function startPlainRemote(): Promise<Remote> {
  const seen: string[] = [];
  const http = await serveHttp({
    createServer: () => {
      const server = new McpServer({ name: "plain-remote", version: "1.0.0" });
      server.registerTool(
        "hash_data_url",
        { description: "Hashes a file sent as a data: URL.", inputSchema: { file: z.string() } },
        async ({ file }) => {
          seen.push("tool:hash_data_url");
          const match = /^data:([^,]*?)(;base64)?,(.*)$/s.exec(file);
          if (!match?.[2])
            return { isError: true, content: [{ type: "text", text: "not a base64 data URL" }] };
          const name = /;name=([^;,]+)/.exec(match[1] ?? "")?.[1];
          const bytes = Buffer.from(match[3] ?? "", "base64");
          return {
            content: [{ type: "text", text: `sha256 ${sha(bytes)} name ${decodeURIComponent(name ?? "")}` }],
          };
        },
      );
      server.registerTool("embedded", { description: "Returns an embedded file." }, async () => {
        seen.push("tool:embedded");
        return {
          content: [
            { type: "text", text: "here it is" },
            {
              type: "resource",
              resource: {
                uri: "file:///out/result.csv",
                mimeType: "text/csv",
                blob: Buffer.from("a,b\n1,2\n").toString("base64"),
              },
            },
          ],
        };
      });
      server.registerTool(
        "embedded_structured",
        { description: "Returns an embedded file and structuredContent." },
        async () => ({
          content: [
            { type: "text", text: "here it is" },
            {
              type: "resource",
              resource: {
                uri: "file:///out/data.bin",
                mimeType: "application/octet-stream",
                blob: "AAECAw==",
              },
            },
          ],
          structuredContent: { rows: 2 },
        }),
      );
      return server;
    },
  });
  return {
    url: http.url,
    mcpUrl: http.mcpUrl.href,
    seen,
    close: () => http.close(),
  };
}
