/**
 * One files app for the cross-generation tests: the same pieces, mounted with the same lines on an
 * SDK v1 `McpServer` and an SDK v2 `McpServer`, plus clients of both generations.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpTransport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as V2McpServer } from "@modelcontextprotocol/server";
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
  type StateStore,
  type StoredFile,
  UploadHandleResolver,
} from "../../../src/index.js";
import { toNodeHandler } from "../../../src/node/index.js";
import type { UploadAttachOptions, UploadTicket } from "../../../src/types.js";

export const SECRET = "v2-harness-secret-v2-harness-secret-0123";
export const TOKENS = { "token-alice": "alice", "token-bob": "bob" } as const;

export interface FilesApp {
  dir: string;
  registry: ResourceRegistry;
  uploads: UploadHandleResolver;
  routes: ReturnType<typeof toNodeHandler>;
  /** Mounts the pieces and one `concat` tool: the same lines for both SDK generations. */
  mount<S extends V1McpServer | V2McpServer>(server: S): S;
  /** Where signed URLs point (set once the HTTP server listens). */
  setOrigin(origin: string): void;
  close(): Promise<void>;
}

/** Builds the pieces over one fsStore folder (`dir`, made when not given). */
export async function filesApp(
  options: {
    dir?: string;
    listMode?: "list" | "none";
    state?: StateStore;
    /** Serve the files extension too (`uploads.attach(server, { files })`). */
    files?: UploadAttachOptions["files"];
  } = {},
): Promise<FilesApp> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "mfb-v2-")));
  let origin = "http://127.0.0.1:1";
  const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = options.state ?? memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: () => origin, state });
  const registry = new ResourceRegistry({
    store,
    minter,
    notifyDelayMs: 10,
    ...(options.listMode ? { list: options.listMode } : {}),
  });
  const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
  bridge.addResolver(registry.resolver());
  const uploads = new UploadHandleResolver({ store, minter, state, bridge, maxBytes: 4 * 1024 * 1024 });
  const artifacts = new Artifacts({ store, minter, registry, tmpDir: join(dir, "tmp") });
  const routes = toNodeHandler(createFileRoutes({ store, minter, state, registry }));

  function mount<S extends V1McpServer | V2McpServer>(server: S): S {
    uploads.attach(server, options.files === undefined ? {} : { files: options.files });
    registry.attach(server);
    (server as V1McpServer).registerTool(
      "concat",
      {
        description: "Concatenates files into one output file.",
        inputSchema: { files: z.array(fileInput()), output: z.string().optional() },
      },
      artifacts.withArtifacts(
        bridge.withFiles(
          async (args) => {
            const parts = await Promise.all((args.files as string[]).map((path) => readFile(path)));
            await writeFile(args.output as string, Buffer.concat(parts));
            return { content: [{ type: "text" as const, text: `Concatenated ${parts.length} files.` }] };
          },
          { fields: ["files[]"] },
        ),
        { outputPathArg: "output", outputName: "joined.bin" },
      ),
    );
    return server;
  }

  return {
    dir,
    registry,
    uploads,
    routes,
    mount,
    setOrigin(value) {
      origin = value;
    },
    async close() {
      await registry.close();
      await store.close?.();
      if (!options.dir) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

export const newV1Server = () => new V1McpServer({ name: "files-v1", version: "1.0.0" });
export const newV2Server = () => new V2McpServer({ name: "files-v2", version: "1.0.0" });

/** What the flow needs of a client, the same for both generations. */
export interface AnyClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<{ tools: Array<{ name: string; inputSchema: unknown }> }>;
  listResources(params?: { cursor?: string }): Promise<{ resources: Array<{ uri: string; name: string }> }>;
  readResource(params: { uri: string }): Promise<{ contents: Array<Record<string, unknown>> }>;
  close(): Promise<void>;
}

/** v1; v2 pinned to the 2025 handshake; v2 pinned to 2026-07-28; v2 probing with `server/discover`. */
export type ClientKind = "v1" | "v2-legacy" | "v2-modern" | "v2-auto";

/** Connects a client of the given generation over Streamable HTTP, with a bearer token when given. */
export async function connectHttp(kind: ClientKind, url: URL, token?: string): Promise<AnyClient> {
  const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : undefined;
  if (kind === "v1") {
    const client = new V1Client({ name: "v1-client", version: "1.0.0" });
    await client.connect(new V1HttpTransport(url, requestInit ? { requestInit } : {}));
    return client as unknown as AnyClient;
  }
  const client = new V2Client(
    { name: `${kind}-client`, version: "1.0.0" },
    kind === "v2-modern"
      ? { versionNegotiation: { mode: { pin: "2026-07-28" } } }
      : kind === "v2-auto"
        ? { versionNegotiation: { mode: "auto" } }
        : {},
  );
  await client.connect(new V2HttpTransport(url, requestInit ? { requestInit } : {}));
  return client as unknown as AnyClient;
}

/** One JSON exchange a recording client saw: the POST it sent and the JSON it got back. */
export interface Exchange {
  url: string;
  headers: Headers;
  body: string;
  response: unknown;
}

/**
 * An SDK v2 client pinned to 2026-07-28, with a bearer token, that records into `exchanges` every
 * POST answered with JSON; fails unless the client did negotiate the 2026-07-28 era.
 */
export async function recordingModernClient(
  url: URL,
  token: string,
  exchanges: Exchange[] = [],
): Promise<V2Client> {
  const client = new V2Client(
    { name: "wire", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    if (init?.method === "POST" && response.headers.get("content-type")?.startsWith("application/json")) {
      exchanges.push({
        url: String(input),
        headers: new Headers(init.headers),
        body: String(init.body),
        response: await response.clone().json(),
      });
    }
    return response;
  };
  await client.connect(
    new V2HttpTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: recordingFetch,
    }),
  );
  const era = client.getProtocolEra();
  if (era !== "modern") {
    await client.close();
    throw new Error(`the client negotiated the ${era} era, not 2026-07-28`);
  }
  return client;
}

/** The first recorded exchange whose request is a `method` call; fails when there is none. */
export function exchangeFor(exchanges: Exchange[], method: string): Exchange {
  const found = exchanges.find((each) => JSON.parse(each.body).method === method);
  if (!found) throw new Error(`no ${method} exchange was recorded`);
  return found;
}

/** The JSON-RPC result of the first recorded `method` exchange (undefined when it has none). */
export function resultOf(exchanges: Exchange[], method: string): Record<string, unknown> | undefined {
  return (
    exchanges.find((each) => JSON.parse(each.body).method === method)?.response as {
      result?: Record<string, unknown>;
    }
  )?.result;
}

export type Block = { type: string; text?: string; uri?: string; name?: string };
export type ToolResult = {
  content: Block[];
  isError?: boolean;
  structuredContent?: unknown;
  _meta?: Record<string, unknown>;
};

/** `get_upload_url`, then an HTTP upload of `bytes`: the reply's first file. */
export async function upload(
  client: AnyClient,
  name: string,
  bytes: Buffer,
): Promise<{ handle: string; uri: string; name: string; size: number; sha256: string }> {
  const result = (await client.callTool({ name: "get_upload_url", arguments: {} })) as ToolResult;
  if (result.isError) throw new Error(`get_upload_url failed: ${result.content[0]?.text}`);
  const ticket = result.structuredContent as UploadTicket;
  const form = new FormData();
  form.append(ticket.field, new Blob([new Uint8Array(bytes)]), name);
  const response = await fetch(ticket.upload_url, { method: ticket.method, body: form });
  if (!response.ok) throw new Error(`upload failed: ${response.status} ${await response.text()}`);
  const reply = (await response.json()) as {
    files: Array<{ handle: string; uri: string; name: string; size: number; sha256: string }>;
  };
  return reply.files[0] as never;
}

/** The JSON-RPC error a request failed with (code and data), or a failure when it did not fail. */
export async function rpcError(
  promise: Promise<unknown>,
): Promise<{ code: number; data?: unknown; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, data, message } = error as { code?: unknown; data?: unknown; message?: unknown };
    return { code: code as number, data, message: String(message) };
  }
  throw new Error("the request did not fail");
}

export type { StoredFile };
