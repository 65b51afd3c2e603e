/**
 * upload-page: people hand a tool their files — three ways, one set of signed upload tickets.
 *
 * - `request_document` asks the client to open the upload page (URL-mode elicitation, MCP
 *   2025-11-25) through `uploads.requestFiles`, waits for the upload and returns the file; a client
 *   without URL elicitation gets the link as text.
 * - `upload_files` returns an upload ticket and is linked to the MCP App upload widget
 *   (`ui://mcp-file-bridge/upload.html`): hosts with MCP Apps show a file picker in the chat.
 * - every upload link opens the upload page in a browser (`GET /files/upload/{token}`).
 *
 * On SDK v2 (`--sdk v2`, or `start({ sdk: "v2" })`) the same routes serve a v2 `McpServer` with the
 * same tools, widget and page. 2026-07-28 clients are served statelessly: `request_document` answers
 * with an `input_required` URL elicitation and waits for the upload on the client's retry. 2025
 * clients get MCP sessions, so `request_document` asks them with `elicitation/create` as on v1. The
 * scope is the caller's authenticated user (a bearer token, printed at start), never a shared
 * constant; a call without it is refused.
 *
 *   npx tsx examples/upload-page/server.ts            # prints the MCP URL
 *   npx tsx examples/upload-page/server.ts --sdk v2   # prints the MCP URL and the bearer token
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import {
  createFileRoutes,
  type Duration,
  FileBridgeError,
  type FileStore,
  fsStore,
  memoryState,
  type ScopeSource,
  SignedUrlMinter,
  toToolErrorResult,
  UploadHandleResolver,
} from "../../src/index.js";
import { scopeSourceOf } from "../../src/mcp/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import { type FileRequests, uploadPageRenderer, uploadWidgetResource } from "../../src/ui/index.js";
import { serveHttp } from "../shared/serve-http.js";
import { serveHttpV2, staticTokens } from "../shared/serve-http-v2.js";
import { EXAMPLE_SHARED_TICKET_RATE_LIMIT } from "../shared/server-limits.js";

/** One scope for this single-user demo on v1; a real server derives it from the session or the user. */
const SCOPE = "demo";

/**
 * The scope on SDK v2: the authenticated user only. Unlike `defaultScope`, an MCP session (which v2
 * has for 2025 clients here, see `legacy: "sessions"` below) is not enough: no user, no files.
 */
function userScope(extra: ScopeSource): string {
  const sub = scopeSourceOf(extra).authInfo?.extra?.sub;
  if (typeof sub === "string" && sub.length > 0) return sub;
  throw new FileBridgeError("FORBIDDEN", "this server needs an authenticated user (Authorization: Bearer)", {
    data: { reason: "no_scope" },
  });
}

/** Options of {@link start}. */
export interface UploadPageOptions {
  /** @default 0 (a free port) */
  port?: number;
  /** Folder of the file store. @default a new temp folder */
  dataDir?: string;
  /**
   * Which MCP SDK generation serves `/mcp`: v1 (`@modelcontextprotocol/sdk`, sessions) or v2
   * (`@modelcontextprotocol/server`: 2026-07-28 stateless, 2025 clients with sessions).
   * @default "v1"
   */
  sdk?: "v1" | "v2";
  /**
   * SDK v2 only: bearer tokens and the user each stands for (the scope of that user's uploads).
   * @default env UPLOAD_PAGE_TOKEN, else one random token, for the user "demo"
   */
  tokens?: Record<string, string>;
  /** How long `request_document` waits for the upload (seconds, or a string like `"5m"`). @default "15m" */
  requestTimeout?: Duration;
}

/** A running upload-page server. */
export interface UploadPageServer {
  url: string;
  mcpUrl: URL;
  sdk: "v1" | "v2";
  /** SDK v2: the bearer tokens `/mcp` accepts, and their users. Empty on v1. */
  tokens: Record<string, string>;
  requests: FileRequests;
  uploads: UploadHandleResolver;
  /** The file store behind the routes and the tools. */
  store: FileStore;
  /** The minter behind links and tickets: `scopeRef(scope, minter)` is a scope's reference in handles. */
  minter: SignedUrlMinter;
  close(): Promise<void>;
}

/**
 * Starts the server on 127.0.0.1.
 *
 * @example
 * ```ts
 * const app = await start({ sdk: "v2", tokens: { "t-1": "alice" } });
 * ```
 */
export async function start(options: UploadPageOptions = {}): Promise<UploadPageServer> {
  const sdk = options.sdk ?? "v1";
  const tokens =
    sdk === "v1"
      ? {}
      : (options.tokens ?? {
          [process.env.UPLOAD_PAGE_TOKEN ?? randomBytes(18).toString("base64url")]: "demo",
        });
  // A data folder of its own (when none is given) goes with the server on close.
  const ownDir =
    options.dataDir === undefined ? await mkdtemp(join(tmpdir(), "mcp-upload-page-")) : undefined;
  const store = fsStore(options.dataDir ?? (ownDir as string));
  const state = memoryState();
  let baseUrl = "http://127.0.0.1";
  const minter = new SignedUrlMinter({
    secret: process.env.FILE_URL_SECRET ?? randomBytes(32).toString("hex"),
    baseUrl: () => baseUrl,
    state,
  });
  const uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    maxFiles: 5,
    toolName: "upload_files",
    // At most 20 upload URLs per scope per minute.
    rateLimit: EXAMPLE_SHARED_TICKET_RATE_LIMIT,
    ...(options.requestTimeout === undefined ? {} : { fileRequests: { timeout: options.requestTimeout } }),
    // v1: one constant scope for this single-user demo. v2: the authenticated user
    // (`authInfo.extra.sub`, set by the token check), on both eras; a call without one is refused.
    scope: sdk === "v1" ? () => SCOPE : userScope,
  });
  // The page for browsers at every upload link, and any-origin CORS so the widget (on the host's
  // sandbox origin) can read its upload reply: the links are capabilities, no cookie is involved.
  const routes = createFileRoutes({
    store,
    minter,
    state,
    uploadPage: uploadPageRenderer(),
    allowedOrigins: "*",
  });

  // The same lines on both SDK generations: the ticket tool with the MCP App widget, and
  // request_document asking for a file through URL elicitation.
  function mount<S extends McpServer | McpServerV2>(server: S): S {
    // upload_files: an upload ticket, linked to the MCP App upload widget (a fixed ui:// resource).
    const widget = uploadWidgetResource({ uploadOrigin: new URL(baseUrl).origin, toolName: "upload_files" });
    uploads.attach(server, { widget });
    (server as McpServer).registerTool(
      "request_document",
      { description: "Asks the user for a document and returns it once uploaded." },
      async (extra) => {
        try {
          const outcome = await uploads.requestFiles(server, extra, {
            message: "Please upload the document to work on.",
            maxFiles: 1,
          });
          // Not uploaded (yet): the link as text, declined, timeout — or, on SDK v2 under
          // 2026-07-28, the input_required result that asks the client to open the page and retry.
          if (outcome.status !== "uploaded") return outcome.result;
          return outcome.result; // a real tool would work on outcome.files[0] here
        } catch (error) {
          return toToolErrorResult(error); // FORBIDDEN without a user (v2), ABORTED
        }
      },
    );
    return server;
  }

  const running =
    sdk === "v2"
      ? await serveHttpV2({
          port: options.port ?? 0,
          // Built per 2026-07-28 request (stateless) and per 2025 session: the same pieces as on v1.
          createServer: () => mount(new McpServerV2({ name: "upload-page-example", version: "1.0.0" })),
          authenticate: staticTokens(tokens),
          // 2025 clients get MCP sessions, so request_document can ask them (elicitation/create) and
          // hear the answer; 2026-07-28 clients stay stateless (input_required and a retry).
          legacy: "sessions",
          routes: toNodeHandler(routes),
        })
      : await serveHttp({
          createServer: () => mount(new McpServer({ name: "upload-page-example", version: "1.0.0" })),
          routes: toNodeHandler(routes),
          port: options.port ?? 0,
        });
  baseUrl = running.url;
  return {
    url: running.url,
    mcpUrl: running.mcpUrl,
    sdk,
    tokens,
    requests: uploads.fileRequests,
    uploads,
    store,
    minter,
    close: async () => {
      await running.close();
      await store.close?.();
      if (ownDir) await rm(ownDir, { recursive: true, force: true });
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const sdk = process.argv.includes("--sdk") ? process.argv[process.argv.indexOf("--sdk") + 1] : "v1";
  if (sdk !== "v1" && sdk !== "v2") throw new Error("--sdk takes v1 or v2");
  const running = await start({ port: Number(process.env.PORT ?? 3000), sdk });
  console.log(`upload-page example: MCP at ${running.mcpUrl} (MCP SDK ${sdk})`);
  for (const [token, user] of Object.entries(running.tokens)) {
    console.log(`  Authorization: Bearer ${token}   (user "${user}")`);
  }
}
