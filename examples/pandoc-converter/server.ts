/**
 * pandoc-converter: documents converted by the real `pandoc` binary.
 *
 * Tools:
 * - `convert-contents`: a path inside the allowed roots.
 * - `convert-contents-base64`: `{ filename, content_base64 }`, or a data URL in `content_base64`.
 * - `convert-document-resource`: a resource URI (`file://uploads/…`, `artifact://…`) or an upload
 *   handle (`upload://…`) THIS server issued, resolved server-side (MCP has no server→client read).
 * - `get_upload_url` (HTTP only): an upload URL for large files; the upload answers with a handle.
 *
 * Text outputs (markdown, gfm, html, plain, rst, latex) come back as text; binary outputs (docx, odt,
 * epub) as artifacts: a `resource_link`, a text block with the URI and (over HTTP) a signed download
 * URL. pandoc runs with `execFile` (no shell), a timeout, and inputs/outputs in private temp folders.
 *
 * On SDK v2 (`--sdk v2`, or `start({ sdk: "v2" })`) the same tools are mounted with the same lines on
 * a `@modelcontextprotocol/server` `McpServer`: over stdio with `serveStdio`, over HTTP on a stateless
 * endpoint (a server per request). With no session, the scope of a caller's uploads, handles and
 * artifacts is the user of its bearer token (`authInfo.extra.sub`); a call without one is refused
 * (`FORBIDDEN`), never served in a shared default scope.
 *
 *   bash scripts/ensure-pandoc.sh                                   # installs pandoc if missing (Debian, root)
 *   npx tsx examples/pandoc-converter/server.ts                     # stdio
 *   npx tsx examples/pandoc-converter/server.ts --http              # Streamable HTTP + upload/download routes
 *   npx tsx examples/pandoc-converter/server.ts --sdk v2            # stdio, SDK v2
 *   npx tsx examples/pandoc-converter/server.ts --http --sdk v2     # stateless HTTP, SDK v2 (prints a token)
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, open, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import {
  Artifacts,
  createFileRoutes,
  defaultScope,
  FileBridge,
  FileBridgeError,
  type FileStore,
  fsStore,
  memoryState,
  type ResolvedFile,
  ResourceRegistry,
  SignedUrlMinter,
  toToolErrorResult,
  UploadHandleResolver,
  withFileOutputs,
} from "../../src/index.js";
import { type CallToolResult, clientNameOf } from "../../src/mcp/index.js";
import { sniffMediaType } from "../../src/media/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import { type NodeRoute, serveHttp } from "../shared/serve-http.js";
import { type SdkGeneration, sdkFlag, serveHttpV2, staticTokens } from "../shared/serve-http-v2.js";
import { EXAMPLE_SHARED_TICKET_RATE_LIMIT } from "../shared/server-limits.js";

const run = promisify(execFile);

/** Text outputs up to this size are read to be returned (inline or, past the budget, stored). */
const MAX_TEXT_READ = 16 * 1024 * 1024;

/** A text output that `fit` stored: its structured copy is the preview in `files`, not the whole text. */
function dropInlineTextIfStored(result: CallToolResult): CallToolResult {
  const structured = result.structuredContent;
  if (!structured || !Array.isArray(structured.files)) return result;
  const { text: _dropped, ...rest } = structured;
  return { ...result, structuredContent: rest };
}

/** Output formats: pandoc writer, file extension, and whether the result is text. */
const WRITERS = {
  markdown: { ext: "md", text: true },
  gfm: { ext: "md", text: true },
  html: { ext: "html", text: true },
  plain: { ext: "txt", text: true },
  rst: { ext: "rst", text: true },
  latex: { ext: "tex", text: true },
  docx: { ext: "docx", text: false },
  odt: { ext: "odt", text: false },
  epub: { ext: "epub", text: false },
} as const;
type Writer = keyof typeof WRITERS;
const WRITER_NAMES = Object.keys(WRITERS) as [Writer, ...Writer[]];

/** Input formats pandoc is asked to read, by file extension. */
const READERS: Record<string, string> = {
  md: "markdown",
  markdown: "markdown",
  txt: "markdown",
  html: "html",
  htm: "html",
  docx: "docx",
  odt: "odt",
  epub: "epub",
  rst: "rst",
  tex: "latex",
  org: "org",
  rtf: "rtf",
  ipynb: "ipynb",
  csv: "csv",
};
/** Readers whose input is a zip container: checked by sniffing before pandoc sees them. */
const ZIP_READERS = new Set(["docx", "odt", "epub"]);

/** Options of {@link start}. */
export interface PandocConverterOptions {
  /** Folders `convert-contents` may read. @default [process.cwd()] */
  roots?: string[];
  /** The pandoc binary. @default "pandoc" */
  pandoc?: string;
  /** Longest a conversion may run, in milliseconds. @default 60000 */
  timeoutMs?: number;
  /** Largest input, in bytes. @default 52428800 (50 MiB) */
  maxBytes?: number;
  /**
   * Text outputs longer than this many characters come back as an artifact (a preview, the link and
   * the download URL) instead of inline.
   * @default the calling client's inline budget (10,000 characters; Claude Code 40,000, Gemini CLI 30,000)
   */
  maxInlineText?: number;
  /** Folder of the file store (uploads and artifacts). @default a new temp folder */
  dataDir?: string;
  /** Where per-call temp folders go. @default os.tmpdir() */
  tmpDir?: string;
  /** `"stdio"`, `"http"`, or `"none"` (the caller connects a transport to `createServer()`). @default "none" */
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

/** A started pandoc-converter example. */
export interface PandocConverter {
  /** Makes one SDK v1 MCP server (over HTTP: one per session). */
  createServer(): McpServer;
  /** Makes the same server on SDK v2 (over HTTP: one per request). */
  createServerV2(): McpServerV2;
  /** The SDK generation the transport serves. */
  sdk: SdkGeneration;
  /** The bearer tokens of the SDK v2 HTTP endpoint (token → user id); empty otherwise. */
  tokens: Record<string, string>;
  store: FileStore;
  registry: ResourceRegistry;
  /** Base URL and MCP endpoint, for `transport: "http"`. */
  url?: string;
  mcpUrl?: URL;
  http?: { url: string; mcpUrl: URL; close(): Promise<void> };
  close(): Promise<void>;
}

interface Pieces {
  artifacts: Artifacts;
  uploads?: UploadHandleResolver;
}

/** The first bytes of a file, for sniffing. */
async function head(path: string): Promise<Uint8Array> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(8);
    const { bytesRead } = await handle.read(buffer, 0, 8, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

function stem(name: string): string {
  const base = name.slice(0, name.length - extname(name).length);
  return base || "document";
}

/**
 * Builds the converter (and starts a transport when asked).
 *
 * @example
 * ```ts
 * const converter = await start({ transport: "http", roots: ["/srv/docs"] });
 * console.log(converter.mcpUrl?.href);
 * ```
 */
export async function start(options: PandocConverterOptions = {}): Promise<PandocConverter> {
  const pandoc = options.pandoc ?? "pandoc";
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxInlineText = options.maxInlineText;
  const tmp = options.tmpDir ?? tmpdir();
  const bridgeOptions = {
    ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
    ...(options.tmpDir ? { tmpDir: options.tmpDir } : {}),
  };

  // pandoc < 3 cannot write docx/odt/epub under --sandbox (it loses its own data files); text
  // writers always get it, so inputs cannot pull other local files into the output.
  const version = /pandoc(?:\.exe)? (\d+)/.exec(
    (await run(pandoc, ["--version"], { timeout: 10_000 })).stdout,
  );
  const sandboxAll = Number(version?.[1] ?? 0) >= 3;

  // A data folder this converter made itself is its own: close() removes it.
  const ownDataDir = options.dataDir ? undefined : await mkdtemp(join(tmp, "pandoc-converter-data-"));
  const store = fsStore(options.dataDir ?? (ownDataDir as string));
  const state = memoryState();
  const registry = new ResourceRegistry({ store });
  const release = async () => {
    // The bridges' call folders (spare ones still being made after a call, emptied ones kept for a
    // scope's next call) are removed, so whoever removes the temp folder next never races a new one.
    await Promise.all([pathBridge.close(), inlineBridge.close(), resourceBridge.close()]);
    await registry.close();
    if (ownDataDir) await rm(ownDataDir, { recursive: true, force: true });
  };
  const pathBridge = new FileBridge({
    ...bridgeOptions,
    roots: options.roots ?? [process.cwd()],
    forms: { dataUrl: false, object: false, resolver: false },
  });
  const inlineBridge = new FileBridge({
    ...bridgeOptions,
    forms: { dataUrl: true, object: true, resolver: false },
  });
  const resourceBridge = new FileBridge({
    ...bridgeOptions,
    forms: { dataUrl: false, object: false },
    resolvers: [registry.resolver()],
  });

  async function convert(
    file: ResolvedFile,
    to: Writer,
    from: string | undefined,
    scope: string,
    pieces: Pieces,
    client: string | undefined,
  ) {
    const ext = extname(file.name).slice(1).toLowerCase();
    const reader = from ?? READERS[ext];
    if (!reader) {
      throw new FileBridgeError(
        "UNSUPPORTED_MEDIA_TYPE",
        `cannot tell the format of ${file.name}; pass "from"`,
        {
          data: { name: file.name },
        },
      );
    }
    if (ZIP_READERS.has(reader) && sniffMediaType(await head(file.path)) !== "application/zip") {
      throw new FileBridgeError(
        "UNSUPPORTED_MEDIA_TYPE",
        `${file.name} is not a ${reader} file (not a zip container)`,
        {
          data: { name: file.name, expected: reader },
        },
      );
    }
    const writer = WRITERS[to];
    const dir = await mkdtemp(join(tmp, "pandoc-call-"));
    try {
      const outName = `${stem(file.name)}.${writer.ext}`;
      const outPath = join(dir, outName);
      const args = ["--from", reader, "--to", to, "--output", outPath, "--resource-path", dir];
      if (writer.text || sandboxAll) args.push("--sandbox");
      if (to === "epub") args.push("--metadata", `title=${stem(file.name)}`);
      args.push(file.path);
      try {
        await run(pandoc, args, {
          cwd: dir,
          timeout: timeoutMs,
          killSignal: "SIGKILL",
          maxBuffer: 1024 * 1024,
        });
      } catch (cause) {
        const failure = cause as { killed?: boolean; signal?: string; stderr?: string };
        if (failure.killed || failure.signal === "SIGKILL") {
          throw new FileBridgeError("TIMEOUT", `pandoc took longer than ${timeoutMs} ms`, { cause });
        }
        const detail = (failure.stderr ?? "")
          .split("\n")[0]
          ?.replaceAll(dir, ".")
          .replaceAll(file.path, file.name);
        throw new FileBridgeError("INVALID_INPUT", `pandoc could not convert ${file.name}: ${detail}`, {
          cause,
        });
      }
      const size = (await stat(outPath)).size;
      if (writer.text && size <= MAX_TEXT_READ) {
        // Claude Code and Codex show only structuredContent, Gemini CLI only the text: the output
        // goes in both, and past the client's budget it is stored and previewed, with its link.
        const text = await readFile(outPath, "utf8");
        return pieces.artifacts
          .fit(
            {
              content: [{ type: "text" as const, text }],
              structuredContent: { format: to, name: outName, size, text },
            },
            {
              scope,
              client,
              name: outName,
              ...(maxInlineText === undefined ? {} : { budget: { text: maxInlineText } }),
            },
          )
          .then(dropInlineTextIfStored);
      }
      const captured = await pieces.artifacts.capture({ scope, path: outPath, name: outName });
      // The link blocks for Gemini CLI, `files` for Claude Code and Codex (which show only structuredContent).
      return withFileOutputs(
        {
          content: [{ type: "text" as const, text: `Converted ${file.name} to ${to}.` }],
          structuredContent: { format: to, name: outName, size, uri: captured.uri, ...captured._meta },
          _meta: captured._meta,
        },
        captured,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  const toSchema = z.enum(WRITER_NAMES).describe("Output format");
  const fromSchema = z
    .string()
    .regex(/^[a-z_+-]{2,40}$/)
    .optional()
    .describe("Input format (pandoc reader); guessed from the extension");

  /**
   * Mounts the pieces and the tools: the same lines on both SDK generations. The two `McpServer`
   * classes have the same `registerTool(name, config, callback)`, but TypeScript cannot call a method
   * through a union of two overloaded classes, so `mount` is typed against v1's. `defaultScope(extra)`
   * reads either generation's request context: on a stateless v2 request, the token's user.
   */
  function mount(server: McpServer, pieces: Pieces): McpServer {
    registry.attach(server);
    pieces.uploads?.attach(server);

    server.registerTool(
      "convert-contents",
      {
        description: "Converts a document at a path inside the server's allowed folders.",
        inputSchema: {
          input_path: z.string().min(1).describe("Path of the document"),
          to: toSchema,
          from: fromSchema,
        },
      },
      pathBridge.withFiles(
        async ({ input_path, to, from }, extra) => {
          try {
            return await convert(input_path, to, from, defaultScope(extra), pieces, clientNameOf(server));
          } catch (error) {
            return toToolErrorResult(error);
          }
        },
        { fields: ["input_path"], pass: "file" },
      ),
    );

    server.registerTool(
      "convert-contents-base64",
      {
        description: "Converts a document sent inline: base64 content plus its file name, or a data URL.",
        inputSchema: {
          filename: z.string().min(1).optional().describe("File name with extension, e.g. report.docx"),
          content_base64: z.string().min(1).describe("The document, base64-encoded, or a data: URL"),
          to: toSchema,
          from: fromSchema,
        },
      },
      async ({ filename, content_base64, to, from }, extra) => {
        try {
          const scope = defaultScope(extra);
          const isDataUrl = content_base64.startsWith("data:");
          if (!isDataUrl && !filename) {
            throw new FileBridgeError("INVALID_INPUT", "filename is required with base64 content");
          }
          const input = isDataUrl ? content_base64 : { filename, content_base64 };
          const file = await inlineBridge.resolve(input, {
            scope,
            ...(isDataUrl && filename ? { name: filename } : {}),
          });
          try {
            return await convert(file, to, from, scope, pieces, clientNameOf(server));
          } finally {
            await file.dispose();
          }
        } catch (error) {
          return toToolErrorResult(error);
        }
      },
    );

    server.registerTool(
      "convert-document-resource",
      {
        description:
          "Converts a document this server already has: a resource URI (file://uploads/…, artifact://…) or an upload handle (upload://…).",
        inputSchema: {
          uri: z.string().min(1).describe("Resource URI or upload handle"),
          to: toSchema,
          from: fromSchema,
        },
      },
      resourceBridge.withFiles(
        async ({ uri, to, from }, extra) => {
          try {
            return await convert(uri, to, from, defaultScope(extra), pieces, clientNameOf(server));
          } catch (error) {
            return toToolErrorResult(error);
          }
        },
        { fields: ["uri"], pass: "file" },
      ),
    );
    return server;
  }

  // Over HTTP the minter needs the URL, known once listening; requests only come after that.
  let pieces: Pieces | undefined;
  const info = { name: "pandoc-converter", version: "1.0.0" };
  const createServer = () => mount(new McpServer(info), pieces as Pieces);
  const createServerV2 = () => {
    const server = new McpServerV2(info);
    mount(server as unknown as McpServer, pieces as Pieces);
    return server;
  };
  const sdk = options.sdk ?? "v1";
  const tokens =
    sdk === "v2" && options.transport === "http"
      ? (options.tokens ?? { [`pc_${randomBytes(16).toString("hex")}`]: "user" })
      : {};
  const base = { store, registry, createServer, createServerV2, sdk, tokens };

  if (options.transport !== "http") {
    pieces = { artifacts: new Artifacts({ store, registry }) };
    if (options.transport === "stdio" && sdk === "v2") {
      // serveStdio pins one server from the factory to the connection (either protocol era).
      const stdio = serveStdio(createServerV2);
      return {
        ...base,
        async close() {
          await stdio.close();
          await release();
        },
      };
    }
    if (options.transport === "stdio") await createServer().connect(new StdioServerTransport());
    return { ...base, close: release };
  }

  let files: ReturnType<typeof toNodeHandler> | undefined;
  const routes: NodeRoute = (req, res, next) =>
    files && req.url?.startsWith("/files/") ? files(req, res) : next();
  const port = options.port ?? 0;
  let http: NonNullable<PandocConverter["http"]>;
  if (sdk === "v2") {
    const v2 = await serveHttpV2({
      port,
      createServer: createServerV2,
      routes,
      authenticate: staticTokens(tokens),
    });
    // 2026-07-28 clients hear of new uploads and artifacts on their subscriptions/listen streams.
    registry.publishTo(v2.handler);
    http = v2;
  } else {
    http = await serveHttp({ port, createServer, routes });
  }
  const minter = new SignedUrlMinter({ secret: randomBytes(32), baseUrl: http.url, state });
  pieces = {
    artifacts: new Artifacts({ store, registry, minter }),
    uploads: new UploadHandleResolver({
      store,
      minter,
      state,
      bridge: resourceBridge,
      rateLimit: EXAMPLE_SHARED_TICKET_RATE_LIMIT, // 20 upload URLs per scope per minute
    }),
  };
  files = toNodeHandler(
    createFileRoutes({ store, minter, state, onStored: (file) => registry.register(file).then(() => {}) }),
  );
  return {
    ...base,
    url: http.url,
    mcpUrl: http.mcpUrl,
    http,
    async close() {
      await http.close();
      await release();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const http = process.argv.includes("--http");
  const sdk = sdkFlag();
  const converter = await start({
    transport: http ? "http" : "stdio",
    port: Number(process.env.PORT ?? 0),
    sdk,
  });
  const generation =
    sdk === "v2" ? "SDK v2 (@modelcontextprotocol/server)" : "SDK v1 (@modelcontextprotocol/sdk)";
  if (converter.mcpUrl) {
    console.log(`pandoc-converter listening on ${converter.url} (${generation})`);
    console.log(`  MCP endpoint: ${converter.mcpUrl}`);
    for (const [token, user] of Object.entries(converter.tokens)) {
      console.log(`  bearer token for user "${user}": ${token}   (Authorization: Bearer <token>)`);
    }
  } else process.stderr.write(`pandoc-converter on stdio, ${generation}\n`);
  // Stopped by a signal, or on stdio by the client closing its end: close first, so the data
  // folder made for this run is removed.
  const stop = () => void converter.close().finally(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  if (!http) process.stdin.once("end", stop);
}
