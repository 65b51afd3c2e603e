/**
 * provider-upload: the temp-file bridge for a tool that hands files to a model provider's file API.
 *
 * `chat_with_files({ prompt, files })` takes any mix of local paths (inside the allowed roots) and
 * `{ filename, content }` objects (or data URLs, upload handles…), materializes each as a real local
 * file (`FileBridge.withFiles`), uploads it to an OpenAI-compatible `POST {base}/files` with `fetch` +
 * `FormData` and a file-backed `Blob` (`fs.openAsBlob`, streamed, never read whole), asks
 * `POST {base}/chat/completions` about them, deletes them at the provider, and the bridge removes its
 * temp files. Without a provider URL it starts the LOCAL STAND-IN (runs offline).
 *
 *   npx tsx examples/provider-upload/server.ts            # stdio
 *   npx tsx examples/provider-upload/server.ts --http     # Streamable HTTP on 127.0.0.1
 */
import { openAsBlob } from "node:fs";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import {
  FileBridge,
  FileBridgeError,
  fileInput,
  type ResolvedFile,
  toToolErrorResult,
} from "../../src/index.js";
import { serveHttp } from "../shared/serve-http.js";
import { type LocalProvider, startLocalProvider } from "./local-provider.js";

/** Options of {@link start}. */
export interface ProviderUploadOptions {
  /** Folders `files` paths may point into. @default [process.cwd()] */
  roots?: string[];
  /** OpenAI-compatible base URL, e.g. `https://api.openai.com/v1`. @default env OPENAI_BASE_URL, else the local stand-in */
  providerBaseUrl?: string;
  /** Bearer key for the provider. @default env OPENAI_API_KEY (the stand-in's own key when it runs) */
  providerApiKey?: string;
  /** Model named in the chat request. @default "gpt-4o-mini" */
  model?: string;
  /** `purpose` sent with each upload. @default "user_data" */
  purpose?: string;
  /** Delete each file at the provider once the answer is in. @default true */
  deleteUploaded?: boolean;
  /** Where the bridge makes its per-call temp folders. @default the bridge's default */
  tmpDir?: string;
  /** Largest file accepted, in bytes. @default 52428800 (50 MiB) */
  maxBytes?: number;
  /** `"stdio"`, `"http"` (Streamable HTTP on 127.0.0.1), or `"none"` (the caller connects a transport). @default "none" */
  transport?: "stdio" | "http" | "none";
  /** Port for `"http"`. @default 0 (a free port) */
  port?: number;
}

/** A started provider-upload example. */
export interface ProviderUploadExample {
  /** Makes one MCP server (one per session over HTTP). */
  createServer(): McpServer;
  bridge: FileBridge;
  providerBaseUrl: string;
  /** The local stand-in, when it was started. */
  localProvider?: LocalProvider;
  /** The MCP endpoint, for `transport: "http"`. */
  mcpUrl?: URL;
  close(): Promise<void>;
}

interface ProviderFile {
  id: string;
  bytes: number;
  filename: string;
}

/** Uploads one materialized file with the provider's real multipart shape. */
async function uploadToProvider(
  base: string,
  key: string,
  file: ResolvedFile,
  purpose: string,
): Promise<ProviderFile> {
  const form = new FormData();
  form.append("purpose", purpose);
  form.append("file", await openAsBlob(file.path, { type: file.mimeType }), file.name);
  const response = await fetch(`${base}/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  if (!response.ok) {
    throw new FileBridgeError("FETCH_FAILED", `the provider refused ${file.name} (HTTP ${response.status})`, {
      data: { status: response.status },
    });
  }
  return (await response.json()) as ProviderFile;
}

/**
 * Builds the example (and starts a transport when asked).
 *
 * @example
 * ```ts
 * const example = await start({ roots: ["/srv/docs"] });
 * const server = example.createServer(); // connect any transport
 * ```
 */
export async function start(options: ProviderUploadOptions = {}): Promise<ProviderUploadExample> {
  const bridge = new FileBridge({
    roots: options.roots ?? [process.cwd()],
    ...(options.tmpDir ? { tmpDir: options.tmpDir } : {}),
    ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
  });
  let localProvider: LocalProvider | undefined;
  let base = options.providerBaseUrl ?? process.env.OPENAI_BASE_URL;
  let key = options.providerApiKey ?? process.env.OPENAI_API_KEY;
  if (!base) {
    localProvider = await startLocalProvider();
    base = localProvider.baseUrl;
    key = localProvider.apiKey;
  }
  if (!key)
    throw new FileBridgeError(
      "INVALID_OPTION",
      "providerApiKey (or OPENAI_API_KEY) is required with a provider URL",
    );
  const providerBase = base.replace(/\/+$/, "");
  const apiKey = key;
  const purpose = options.purpose ?? "user_data";
  const model = options.model ?? "gpt-4o-mini";
  const deleteUploaded = options.deleteUploaded ?? true;

  function createServer(): McpServer {
    const server = new McpServer({ name: "provider-upload", version: "1.0.0" });
    server.registerTool(
      "chat_with_files",
      {
        description: "Asks the model provider a question about one or more files.",
        inputSchema: {
          prompt: z.string().min(1).describe("The question about the files"),
          files: z
            .array(fileInput({ description: "A file for the model.", paths: true }))
            .min(1)
            .max(10),
        },
      },
      bridge.withFiles(
        async ({ prompt, files }) => {
          const uploaded: ProviderFile[] = [];
          try {
            for (const file of files)
              uploaded.push(await uploadToProvider(providerBase, apiKey, file, purpose));
            const response = await fetch(`${providerBase}/chat/completions`, {
              method: "POST",
              headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
              body: JSON.stringify({
                model,
                messages: [
                  {
                    role: "user",
                    content: [
                      { type: "text", text: prompt },
                      ...uploaded.map((f) => ({ type: "file", file: { file_id: f.id } })),
                    ],
                  },
                ],
              }),
            });
            if (!response.ok) {
              throw new FileBridgeError("FETCH_FAILED", `the provider answered HTTP ${response.status}`);
            }
            const answer = (await response.json()) as { choices?: Array<{ message?: { content?: string } }> };
            const text = answer.choices?.[0]?.message?.content ?? "";
            return {
              content: [{ type: "text" as const, text }],
              structuredContent: {
                answer: text,
                files: uploaded.map(({ id, filename, bytes }) => ({ id, filename, bytes })),
              },
            };
          } catch (error) {
            return toToolErrorResult(error);
          } finally {
            if (deleteUploaded) {
              await Promise.allSettled(
                uploaded.map((f) =>
                  fetch(`${providerBase}/files/${encodeURIComponent(f.id)}`, {
                    method: "DELETE",
                    headers: { authorization: `Bearer ${apiKey}` },
                  }).then((r) => r.body?.cancel()),
                ),
              );
            }
          }
        },
        { fields: ["files[]"], pass: "file" },
      ),
    );
    return server;
  }

  const example: ProviderUploadExample = {
    createServer,
    bridge,
    providerBaseUrl: providerBase,
    ...(localProvider ? { localProvider } : {}),
    async close() {
      await localProvider?.close();
    },
  };
  if (options.transport === "stdio") {
    await createServer().connect(new StdioServerTransport());
  } else if (options.transport === "http") {
    const http = await serveHttp({ createServer, ...(options.port ? { port: options.port } : {}) });
    example.mcpUrl = http.mcpUrl;
    example.close = async () => {
      await http.close();
      await localProvider?.close();
    };
  }
  return example;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const http = process.argv.includes("--http");
  const example = await start({ transport: http ? "http" : "stdio", port: Number(process.env.PORT ?? 0) });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (example.localProvider) log(`provider: ${example.providerBaseUrl} (local stand-in, runs offline)`);
  else log(`provider: ${example.providerBaseUrl}`);
  if (example.mcpUrl) log(`MCP (Streamable HTTP): ${example.mcpUrl}`);
  else log("MCP on stdio");
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void example.close().finally(() => process.exit(0)));
  }
  if (!http) process.stdin.once("close", () => void example.close().finally(() => process.exit(0)));
}
