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
 *
 * On SDK v2 (`--sdk v2`, or `start({ sdk: "v2" })`) the same tool is mounted with the same lines on a
 * `@modelcontextprotocol/server` `McpServer`: over stdio with `serveStdio` (one client, one scope), over
 * HTTP on a stateless endpoint. A stateless server has no session, so a caller is known only by its
 * bearer token: the token's user is the scope (`authInfo.extra.sub`), and a call without a token is
 * refused (`FORBIDDEN`), never served in a shared default scope.
 *
 *   npx tsx examples/provider-upload/server.ts                     # stdio
 *   npx tsx examples/provider-upload/server.ts --http              # Streamable HTTP on 127.0.0.1
 *   npx tsx examples/provider-upload/server.ts --sdk v2            # stdio, SDK v2
 *   npx tsx examples/provider-upload/server.ts --http --sdk v2     # stateless HTTP, SDK v2 (prints a token)
 */
import { randomBytes } from "node:crypto";
import { openAsBlob } from "node:fs";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import {
  FileBridge,
  FileBridgeError,
  fileInput,
  type ResolvedFile,
  toToolErrorResult,
} from "../../src/index.js";
import { serveHttp } from "../shared/serve-http.js";
import { type SdkGeneration, sdkFlag, serveHttpV2, staticTokens } from "../shared/serve-http-v2.js";
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
  /**
   * Which MCP SDK generation the transport serves: v1 (`@modelcontextprotocol/sdk`, sessions) or v2
   * (`@modelcontextprotocol/server`, stateless over HTTP). @default "v1"
   */
  sdk?: SdkGeneration;
  /**
   * Bearer tokens the SDK v2 HTTP endpoint accepts, token → user id (the user is the caller's scope).
   * Without a token a call is refused; an unknown token is answered 401.
   * @default one random token for the user "user"
   */
  tokens?: Record<string, string>;
}

/** A started provider-upload example. */
export interface ProviderUploadExample {
  /** Makes one SDK v1 MCP server (one per session over HTTP). */
  createServer(): McpServer;
  /** Makes the same server on SDK v2 (over HTTP: one per request). */
  createServerV2(): McpServerV2;
  /** The SDK generation the transport serves. */
  sdk: SdkGeneration;
  /** The bearer tokens of the SDK v2 HTTP endpoint (token → user id); empty otherwise. */
  tokens: Record<string, string>;
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

  /**
   * Mounts the tool: the same lines on both SDK generations. The two `McpServer` classes have the
   * same `registerTool(name, config, callback)`, but TypeScript cannot call a method through a union
   * of two overloaded classes, so `mount` is typed against v1's.
   */
  function mount(server: McpServer): McpServer {
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

  const info = { name: "provider-upload", version: "1.0.0" };
  const createServer = () => mount(new McpServer(info));
  const createServerV2 = () => {
    const server = new McpServerV2(info);
    mount(server as unknown as McpServer);
    return server;
  };

  const sdk = options.sdk ?? "v1";
  const tokens =
    sdk === "v2" && options.transport === "http"
      ? (options.tokens ?? { [`pu_${randomBytes(16).toString("hex")}`]: "user" })
      : {};
  // The bridge's call folders (spare ones still being made after a call, emptied ones kept for a
  // scope's next call) are removed, so whoever removes the temp folder next never races a new one.
  const release = async () => {
    await bridge.close();
    await localProvider?.close();
  };
  const example: ProviderUploadExample = {
    createServer,
    createServerV2,
    sdk,
    tokens,
    bridge,
    providerBaseUrl: providerBase,
    ...(localProvider ? { localProvider } : {}),
    async close() {
      await release();
    },
  };
  if (options.transport === "stdio" && sdk === "v2") {
    // serveStdio pins one server from the factory to the connection (either protocol era).
    const stdio = serveStdio(createServerV2);
    example.close = async () => {
      await stdio.close();
      await release();
    };
  } else if (options.transport === "stdio") {
    await createServer().connect(new StdioServerTransport());
  } else if (options.transport === "http") {
    const port = options.port ? { port: options.port } : {};
    const http =
      sdk === "v2"
        ? await serveHttpV2({ createServer: createServerV2, authenticate: staticTokens(tokens), ...port })
        : await serveHttp({ createServer, ...port });
    example.mcpUrl = http.mcpUrl;
    example.close = async () => {
      await http.close();
      await release();
    };
  }
  return example;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const http = process.argv.includes("--http");
  const sdk = sdkFlag();
  const example = await start({
    transport: http ? "http" : "stdio",
    port: Number(process.env.PORT ?? 0),
    sdk,
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  if (example.localProvider) log(`provider: ${example.providerBaseUrl} (local stand-in, runs offline)`);
  else log(`provider: ${example.providerBaseUrl}`);
  const generation =
    sdk === "v2" ? "SDK v2 (@modelcontextprotocol/server)" : "SDK v1 (@modelcontextprotocol/sdk)";
  if (example.mcpUrl) log(`MCP (Streamable HTTP, ${generation}): ${example.mcpUrl}`);
  else log(`MCP on stdio, ${generation}`);
  for (const [token, user] of Object.entries(example.tokens)) {
    log(`  bearer token for user "${user}": ${token}   (Authorization: Bearer <token>)`);
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void example.close().finally(() => process.exit(0)));
  }
  if (!http) process.stdin.once("close", () => void example.close().finally(() => process.exit(0)));
}
