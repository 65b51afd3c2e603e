/**
 * file-container: containers of files, signed downloads and usage accounting.
 *
 * - Each API key belongs to one container. `/mcp` needs `Authorization: Bearer <key>`.
 * - Files are `wire://container/{containerId}/file/{fileId}`. `resources/list` is deliberately empty;
 *   `resources/read` checks the caller's container (another container's URI is "not found") and
 *   answers `text/uri-list` with a signed download URL valid for 5 minutes.
 * - `GET /files/download/{token}` streams the file; each whole-file download that completed charges
 *   2 credits and records an activity event plus a usage row with the caller's key id in an
 *   append-only JSON-lines ledger (see usage-ledger.ts for why that store). The key id is signed into
 *   the URL by the registry's `downloadClaims` and read back, verified, from `DownloadEvent.claims`.
 * - Tools: `search` (matches with `resource_link`s to their files) and `navigate` (a file's chunks and
 *   its link).
 *
 * - On SDK v2 (`--sdk v2`, or `start({ sdk: "v2" })`) the same server is stateless: there is no session,
 *   and none is needed — the container comes from the API key, which every request carries.
 *
 *   npx tsx examples/file-container/server.ts             # prints the URL, the demo keys and the ledger path
 *   npx tsx examples/file-container/server.ts --sdk v2    # the same on @modelcontextprotocol/server 2.x
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { z } from "zod";
import {
  createFileRoutes,
  FileBridge,
  FileBridgeError,
  type FileStore,
  fsStore,
  ResourceRegistry,
  type ScopeSource,
  SignedUrlMinter,
  type StoredFile,
  toToolErrorResult,
  withFileOutputs,
} from "../../src/index.js";
import { scopeSourceOf } from "../../src/mcp/index.js";
import { isTextualMediaType } from "../../src/media/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import type { DownloadEvent, FileLinkResult } from "../../src/types.js";
import { type NodeRoute, serveHttp } from "../shared/serve-http.js";
import { serveHttpV2 } from "../shared/serve-http-v2.js";
import { UsageLedger } from "./usage-ledger.js";

/** An API key and the container it may use. */
export interface ApiKeyGrant {
  key: string;
  container: string;
}

/** A file put into a container at start-up. */
export interface SeedFile {
  container: string;
  name: string;
  content: string | Uint8Array;
  mimeType?: string;
}

/** Options of {@link start}. */
export interface FileContainerOptions {
  /** Keys and their containers. @default two random keys for containers "acme" and "globex" */
  keys?: ApiKeyGrant[];
  /** Files to put into the containers at start. @default a few demo documents */
  files?: SeedFile[];
  /** Folder of the file store. @default a new temp folder */
  dataDir?: string;
  /** The usage ledger (JSON lines). @default join(os.tmpdir(), "mcp-file-container", "usage.jsonl") */
  ledgerPath?: string;
  /** Credits charged per completed whole-file download. @default 2 */
  creditsPerDownload?: number;
  /** Characters per chunk returned by `navigate`. @default 1200 */
  chunkChars?: number;
  /** Clock in ms (signed URL expiry). @default Date.now */
  now?: () => number;
  /** @default 0 (a free port) */
  port?: number;
  /** Which MCP SDK generation serves `/mcp`: v1 (sessions) or v2 (stateless, 2026-07-28). @default "v1" */
  sdk?: "v1" | "v2";
}

/** A running file-container server. */
export interface FileContainerServer {
  url: string;
  mcpUrl: URL;
  keys: ApiKeyGrant[];
  /** Fingerprint recorded in the ledger for a key. */
  keyIdOf(key: string): string;
  ledger: UsageLedger;
  store: FileStore;
  registry: ResourceRegistry;
  /** The stored seed files. */
  files: StoredFile[];
  http: { url: string; mcpUrl: URL; close(): Promise<void> };
  close(): Promise<void>;
}

const DEMO_FILES: Omit<SeedFile, "container">[] = [
  {
    name: "handbook.md",
    content:
      "# Employee handbook\n\n## Holidays\nEveryone gets 25 days of paid holiday.\n\n## Expenses\nSubmit expenses within 30 days with a receipt.\n",
  },
  {
    name: "roadmap.txt",
    content: "Q1: ship the upload API\nQ2: signed downloads\nQ3: usage-based billing\n",
  },
];

/** `key_` + 16 hex digits of sha256(key): identifies a key in the ledger without storing it. */
export function keyFingerprint(key: string): string {
  return `key_${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
}

function bearer(value: string | string[] | null | undefined): string | undefined {
  const header = Array.isArray(value) ? value[0] : value;
  return /^Bearer (.+)$/.exec(header ?? "")?.[1];
}

/** Reads a stream line by line (files are streamed, never read whole). */
async function* lines(stream: NodeJS.ReadableStream): AsyncGenerator<string> {
  const reader = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of reader) yield line;
  } finally {
    reader.close();
  }
}

/**
 * Starts the server on 127.0.0.1.
 *
 * @example
 * ```ts
 * const app = await start({ keys: [{ key: "k1", container: "acme" }] });
 * ```
 */
export async function start(options: FileContainerOptions = {}): Promise<FileContainerServer> {
  const keys = options.keys ?? [
    { key: `fc_${randomBytes(16).toString("hex")}`, container: "acme" },
    { key: `fc_${randomBytes(16).toString("hex")}`, container: "globex" },
  ];
  const grants = new Map(keys.map((grant) => [grant.key, grant]));
  const credits = options.creditsPerDownload ?? 2;
  const chunkChars = options.chunkChars ?? 1200;
  const ledger = await UsageLedger.open(
    options.ledgerPath ?? join(tmpdir(), "mcp-file-container", "usage.jsonl"),
  );
  const store = fsStore(options.dataDir ?? (await mkdtemp(join(tmpdir(), "mcp-file-container-"))));

  const grantOf = (extra: ScopeSource | undefined): ApiKeyGrant => {
    const grant = grants.get(bearer(extra?.requestInfo?.headers?.authorization) ?? "");
    if (!grant) throw new FileBridgeError("FORBIDDEN", "unknown API key");
    return grant;
  };
  const containerOf = (extra: ScopeSource): string => grantOf(extra).container;

  let http: FileContainerServer["http"] | undefined;
  const minter = new SignedUrlMinter({
    secret: randomBytes(32),
    // The port is known only once the server listens; the function is asked at each mint.
    baseUrl: () => {
      if (!http) throw new FileBridgeError("STORAGE_ERROR", "not listening yet");
      return http.url;
    },
    ttl: "5m",
    ...(options.now ? { now: options.now } : {}),
  });
  const registry = new ResourceRegistry({
    store,
    templates: [
      {
        name: "container-file",
        uriTemplate: "wire://container/{containerId}/file/{fileId}",
        title: "Container file",
        variables: { scope: "containerId", id: "fileId" },
        // Container names are not secrets and the scope comes from the verified API key (never
        // from the URI), so the URI may show them as they are.
        scopeInUri: "raw",
      },
    ],
    listMode: "none",
    scope: containerOf,
    maxInlineBytes: 0, // every read answers with a signed URL (text/uri-list), never the bytes
    minter,
    // The id of the key that is shown a link is signed into it; onDownload charges that key.
    downloadClaims: (_file, extra) => ({ key: keyFingerprint(grantOf(extra).key) }),
    ...(options.now ? { now: options.now } : {}),
  });
  const bridge = new FileBridge({
    forms: { dataUrl: false, object: false },
    resolvers: [registry.resolver()],
  });

  const seeded: StoredFile[] = [];
  const seeds =
    options.files ?? keys.flatMap(({ container }) => DEMO_FILES.map((f) => ({ ...f, container })));
  for (const seed of seeds) {
    const bytes = typeof seed.content === "string" ? Buffer.from(seed.content, "utf8") : seed.content;
    seeded.push(
      await registry.add(bytes, {
        scope: seed.container,
        name: seed.name,
        kind: "file",
        ...(seed.mimeType ? { mimeType: seed.mimeType } : {}),
      }),
    );
  }

  async function charge(event: DownloadEvent): Promise<void> {
    const keyId = String(event.claims.key ?? "unknown");
    const at = new Date().toISOString();
    const base = { keyId, container: event.scope, fileId: event.file.id, at };
    const whole = event.range === undefined || event.bytes === event.file.size;
    const activity = {
      type: "activity" as const,
      event: whole ? "download" : "download.partial",
      name: event.file.name,
      bytes: event.bytes,
      ...base,
    };
    if (whole) await ledger.append(activity, { type: "usage", credits, ...base });
    else await ledger.append(activity);
  }

  /**
   * Mounts the registry and the tools: the same lines for both SDK generations. The tool callbacks
   * read the caller's key from `extra` themselves, so they pass it through `scopeSourceOf` (SDK v2
   * keeps the HTTP request in `ctx.http.req`; on v1 it returns `extra` as it is).
   */
  function mount(server: McpServer): McpServer {
    registry.attach(server);

    server.registerTool(
      "search",
      {
        description: "Searches the text files of your container. Each match links to its file.",
        inputSchema: {
          query: z.string().min(1).max(200),
          limit: z.number().int().min(1).max(100).optional(),
        },
      },
      async ({ query, limit = 20 }, context) => {
        const extra = scopeSourceOf(context);
        try {
          const container = containerOf(extra);
          const needle = query.toLowerCase();
          const matches: Array<{ uri: string; name: string; line: number; text: string }> = [];
          const linked: FileLinkResult[] = [];
          let cursor: string | undefined;
          do {
            const page = await store.list(container, cursor === undefined ? {} : { cursor });
            for (const file of page.files) {
              if (matches.length >= limit || !isTextualMediaType(file.mimeType)) continue;
              const stream = await store.read(container, file.id);
              if (!stream) continue;
              let number = 0;
              let found = false;
              for await (const line of lines(stream)) {
                number++;
                if (!line.toLowerCase().includes(needle)) continue;
                found = true;
                matches.push({
                  uri: registry.uriFor(file),
                  name: file.name,
                  line: number,
                  text: line.trim().slice(0, 300),
                });
                if (matches.length >= limit) break;
              }
              stream.destroy();
              if (found) linked.push(await registry.link(file, { scope: container, extra }));
            }
            cursor = page.nextCursor;
          } while (cursor !== undefined && matches.length < limit);
          const summary = matches.length
            ? matches.map((m) => `${m.name}:${m.line}: ${m.text}`).join("\n")
            : `No matches for "${query}".`;
          // The links go into the text content and into structuredContent.files (the output
          // contract): Claude Code and Codex CLI show only structuredContent when a result has it.
          return withFileOutputs(
            { content: [{ type: "text", text: summary }], structuredContent: { matches } },
            ...linked,
          );
        } catch (error) {
          return toToolErrorResult(error);
        }
      },
    );

    server.registerTool(
      "navigate",
      {
        description: "Returns a text file of your container in chunks, with its link.",
        inputSchema: { uri: z.string().describe("wire://container/{containerId}/file/{fileId}") },
      },
      async ({ uri }, context) => {
        const extra = scopeSourceOf(context);
        try {
          const container = containerOf(extra);
          // Resolved through the registry: another container's URI is NOT_FOUND, like a missing file.
          const file = await bridge.resolve(uri, { scope: container });
          const chunks: Array<{ index: number; startLine: number; endLine: number; text: string }> = [];
          try {
            if (!isTextualMediaType(file.mimeType)) {
              throw new FileBridgeError("UNSUPPORTED_MEDIA_TYPE", `${file.name} is not a text file`);
            }
            let current: string[] = [];
            let size = 0;
            let number = 0;
            const flush = () => {
              if (current.length === 0) return;
              const startLine = number - current.length + 1;
              chunks.push({ index: chunks.length, startLine, endLine: number, text: current.join("\n") });
              current = [];
              size = 0;
            };
            for await (const line of lines(file.stream())) {
              if (size > 0 && size + line.length + 1 > chunkChars) flush();
              number++;
              current.push(line);
              size += line.length + 1;
            }
            flush();
          } finally {
            await file.dispose();
          }
          const id = registry.parseUri(uri)?.id;
          const stored = id ? await store.head(container, id) : null;
          if (!stored) throw new FileBridgeError("NOT_FOUND", "the file is gone", { data: { uri } });
          const link = await registry.link(stored, { scope: container, extra });
          return withFileOutputs(
            {
              content: chunks.map((c) => ({
                type: "text" as const,
                text: `[chunk ${c.index}, lines ${c.startLine}-${c.endLine}]\n${c.text}`,
              })),
              structuredContent: { name: stored.name, chunks, link: link.structuredContent },
            },
            link,
          );
        } catch (error) {
          return toToolErrorResult(error);
        }
      },
    );
    return server;
  }

  const files = toNodeHandler(createFileRoutes({ store, minter, onDownload: charge }));
  const routes: NodeRoute = (req, res, next) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path.startsWith("/files/")) return files(req, res);
    const grant = grants.get(bearer(req.headers.authorization) ?? "");
    if (path === "/api/usage" && req.method === "GET") {
      if (!grant)
        return void res
          .writeHead(401, { "content-type": "application/json" })
          .end('{"error":"unauthorized"}');
      ledger.summary(keyFingerprint(grant.key)).then(
        (summary) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(summary)),
        () => res.writeHead(500).end(),
      );
      return;
    }
    if (path === "/mcp" && !grant) {
      req.resume();
      res.writeHead(401, { "content-type": "application/json", "www-authenticate": "Bearer" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Unauthorized" }, id: null }));
      return;
    }
    next();
  };
  const running =
    options.sdk === "v2"
      ? await serveHttpV2({
          port: options.port ?? 0,
          // The v2 McpServer has the same registerTool; TypeScript cannot call it through a union type.
          createServer: () => {
            const server = new McpServerV2({ name: "file-container", version: "1.0.0" });
            mount(server as unknown as McpServer);
            return server;
          },
          routes,
        })
      : await serveHttp({
          port: options.port ?? 0,
          createServer: () => mount(new McpServer({ name: "file-container", version: "1.0.0" })),
          routes,
        });
  http = running;

  return {
    url: running.url,
    mcpUrl: running.mcpUrl,
    keys,
    keyIdOf: keyFingerprint,
    ledger,
    store,
    registry,
    files: seeded,
    http: running,
    async close() {
      await running.close();
      await registry.close();
      await store.close?.();
      await ledger.close();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sdk = process.argv.includes("--sdk") ? process.argv[process.argv.indexOf("--sdk") + 1] : "v1";
  if (sdk !== "v1" && sdk !== "v2") throw new Error("--sdk takes v1 or v2");
  const app = await start({ port: Number(process.env.PORT ?? 3000), sdk });
  console.log(`file-container listening on ${app.url} (MCP SDK ${sdk})`);
  console.log(`  MCP endpoint: ${app.mcpUrl}   (Authorization: Bearer <key>)`);
  for (const grant of app.keys) console.log(`  key for container "${grant.container}": ${grant.key}`);
  for (const file of app.files) console.log(`  ${app.registry.uriFor(file)}  ${file.name}`);
  console.log(`  usage ledger: ${app.ledger.path}`);
}
