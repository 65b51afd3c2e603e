/**
 * replicas: one replica of an MCP file server meant to run several times behind a load balancer,
 * all on one S3 bucket and one Redis.
 *
 * - files: `s3Store` (+ `redisCatalog`, so every replica lists the same files fast)
 * - state: `redisState` (upload tickets and single-use download links hold across replicas)
 * - notifications: `redisChangeFeed` (a file stored on replica A reaches the resource lists, and
 *   `list_changed`, of clients on replica B)
 * - `/files/…`: upload and download routes, any replica
 *
 * On SDK v1 (the default):
 * - `/mcp`: stateful Streamable HTTP (the load balancer keeps a session on one replica by its
 *   `Mcp-Session-Id`); scope = the MCP session
 * - `/mcp-stateless`: stateless Streamable HTTP (any replica answers any request); scope = the user
 *   of a verified bearer token (`Bearer <user>.<hmac>`, see {@link userToken})
 *
 * On SDK v2 (`--sdk v2`, `SDK=v2`, or `startReplica({ sdk: "v2" })`):
 * - `/mcp`: SDK v2's `createMcpHandler`, stateless: the 2026-07-28 protocol, and 2025-era clients
 *   served statelessly (no `Mcp-Session-Id`), so any replica answers any request; scope = the user
 *   of a verified bearer token, and a request without a valid one is answered 401
 * - `subscriptions/listen` streams (2026-07-28) get `list_changed` / `updated` for files stored or
 *   deleted on any replica: the change feed updates this replica's registry, and
 *   `registry.publishTo(handler)` hands that to the handler's `notify`
 *
 * Environment: PORT (0 = free), REPLICA (a name), SECRET (shared by all replicas: signs URLs and
 * user tokens), PUBLIC_URL (the load balancer's URL, put into links), S3_ENDPOINT, S3_BUCKET,
 * S3_PREFIX, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, REDIS_URL, SDK (v1 or v2; `--sdk` wins).
 * Prints `READY <url>` when listening.
 *
 *   npx tsx examples/replicas/server.ts
 *   npx tsx examples/replicas/server.ts --sdk v2
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { type AuthInfo, McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { z } from "zod";
import {
  createFileRoutes,
  FileBridge,
  FileBridgeError,
  fileInput,
  ResourceRegistry,
  type ScopeSource,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";
import { scopeSourceOf } from "../../src/mcp/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import { redisCatalog, redisChangeFeed, redisState } from "../../src/redis/index.js";
import { s3Store } from "../../src/s3/index.js";
import { type SdkGeneration, sdkFlag, serveHttpV2 } from "../shared/serve-http-v2.js";
import { EXAMPLE_SHARED_TICKET_RATE_LIMIT, httpServerOptions } from "../shared/server-limits.js";

/** Settings of one replica. */
export interface ReplicaOptions {
  replica: string;
  port: number;
  secret: string;
  /** Base URL put into upload/download links (the load balancer's). */
  publicUrl: string | (() => string);
  s3: {
    endpoint: string;
    bucket: string;
    prefix: string;
    accessKeyId: string;
    secretAccessKey: string;
  };
  redisUrl: string;
  /** Key prefix in Redis (separates deployments sharing one Redis). @default "replicas:" */
  redisPrefix?: string;
  /**
   * The MCP SDK generation of `/mcp`: v1 (stateful sessions, plus `/mcp-stateless`) or v2
   * (`createMcpHandler`, stateless, scope = the bearer token's user). @default "v1"
   */
  sdk?: SdkGeneration;
}

/** A bearer token for `user`, as the stateless endpoint verifies it. */
export function userToken(secret: string, user: string): string {
  return `${user}.${createHmac("sha256", secret).update(`user:${user}`).digest("base64url")}`;
}

/** The scope of the user whose token an `Authorization` header carries, if the token is valid. */
function userOfHeader(secret: string, header: string | null | undefined): string | undefined {
  const match = /^Bearer ([a-z0-9-]{1,64})\.([A-Za-z0-9_-]+)$/.exec(header ?? "");
  if (!match) return undefined;
  const expected = Buffer.from(userToken(secret, match[1] as string));
  const given = Buffer.from(`${match[1]}.${match[2]}`);
  return expected.length === given.length && timingSafeEqual(expected, given)
    ? `user:${match[1]}`
    : undefined;
}

function verifiedUser(secret: string, extra: ScopeSource | undefined): string | undefined {
  const header = extra?.requestInfo?.headers?.authorization;
  return userOfHeader(secret, Array.isArray(header) ? header[0] : header);
}

/** Starts one replica. */
export async function startReplica(options: ReplicaOptions) {
  const redisPrefix = options.redisPrefix ?? "replicas:";
  const catalog = redisCatalog({ url: options.redisUrl, keyPrefix: redisPrefix });
  const store = s3Store({
    bucket: options.s3.bucket,
    endpoint: options.s3.endpoint,
    forcePathStyle: true,
    prefix: options.s3.prefix,
    credentials: { accessKeyId: options.s3.accessKeyId, secretAccessKey: options.s3.secretAccessKey },
    catalog,
  });
  const state = redisState({ url: options.redisUrl, keyPrefix: redisPrefix });
  const feed = redisChangeFeed({ url: options.redisUrl, keyPrefix: redisPrefix });
  const minter = new SignedUrlMinter({ secret: options.secret, baseUrl: options.publicUrl, state });
  const sdk = options.sdk ?? "v1";

  // v1: stateful sessions: the session's scope; stateless requests: the verified user; else refused.
  // v2: the user the HTTP layer verified (`authenticate` below put it in authInfo.extra.sub); there
  // is no session to fall back on, and a request without a user is refused.
  const scope = (extra: ScopeSource): string => {
    if (sdk === "v2") {
      const sub = extra.authInfo?.extra?.sub;
      if (typeof sub === "string" && sub.length > 0) return sub;
    } else {
      if (extra.sessionId) return extra.sessionId;
      const user = verifiedUser(options.secret, extra);
      if (user) return user;
    }
    throw new FileBridgeError("FORBIDDEN", "send Authorization: Bearer <user token> (stateless endpoint)");
  };
  // The feed carries what this replica stores or deletes to the others, and theirs to this one.
  const registry = new ResourceRegistry({ store, minter, scope, feed });
  // One size limit: uploads take what the tools accept (the upload limit defaults to the bridge's).
  const bridge = new FileBridge({
    tmpDir: join(tmpdir(), `mcp-replica-${options.replica}`),
    maxBytes: 256 * 1024 * 1024,
  });
  bridge.addResolver(registry.resolver());
  const uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    bridge,
    scope,
    // At most 20 upload URLs per user per minute (per replica).
    rateLimit: EXAMPLE_SHARED_TICKET_RATE_LIMIT,
  });

  await feed.ready();

  const routes = toNodeHandler(
    createFileRoutes({
      store,
      minter,
      state,
      registry, // registers each upload, which the registry publishes on the feed
    }),
  );

  /**
   * The same pieces and tools on either generation's `McpServer`. Both have the same
   * `registerTool(name, config, callback)`; TypeScript cannot call it through a union of the two
   * overloaded classes, so this is typed against v1's (`scopeSourceOf` reads either's context).
   */
  function mount(server: McpServer): McpServer {
    uploads.attach(server);
    registry.attach(server);
    server.registerTool(
      "inspect_file",
      {
        description:
          "Describes a file (any accepted form, e.g. an upload:// handle): name, size, sha256, and which replica read it.",
        inputSchema: { file: fileInput() },
      },
      bridge.withFiles(
        async (args) => {
          const file = args.file;
          return {
            content: [
              {
                type: "text",
                text: JSON.stringify({
                  replica: options.replica,
                  name: file.name,
                  size: file.size,
                  sha256: file.sha256,
                }),
              },
            ],
          };
        },
        { fields: ["file"], pass: "file", scope },
      ),
    );
    server.registerTool(
      "download_link",
      {
        description: "A single-use download URL for one of the caller's files (by id).",
        inputSchema: { id: z.string() },
      },
      async (args, extra) => {
        const file = await store.head(scope(scopeSourceOf(extra)), args.id);
        if (!file) return { isError: true, content: [{ type: "text", text: "NOT_FOUND" }] };
        const { url } = await minter.downloadUrl(file, { singleUse: true, ttl: "5m" });
        return { content: [{ type: "text", text: url }] };
      },
    );
    server.registerTool("whoami", { description: "Which replica answered." }, async () => ({
      content: [{ type: "text", text: options.replica }],
    }));
    return server;
  }

  const info = { name: `replica-${options.replica}`, version: "1.0.0" };
  const createMcpServer = (): McpServer => mount(new McpServer(info));
  const createMcpServerV2 = (): McpServerV2 => {
    const server = new McpServerV2(info);
    mount(server as unknown as McpServer);
    return server;
  };

  if (sdk === "v2") return startV2();

  /** SDK v2: one stateless `/mcp` (serveHttpV2) beside the file routes; no state between requests. */
  async function startV2() {
    const http = await serveHttpV2({
      port: options.port,
      createServer: () => createMcpServerV2(),
      authenticate: (request): AuthInfo | false => {
        const header = request.headers.get("authorization");
        const user = userOfHeader(options.secret, header);
        // Fail closed: no token, or a token that does not verify, is a 401 before any MCP handling.
        if (user === undefined) return false;
        return { token: header as string, clientId: "replicas", scopes: [], extra: { sub: user } };
      },
      routes: (req, res, next) => {
        res.setHeader("x-replica", options.replica);
        const path = new URL(req.url ?? "/", "http://localhost").pathname;
        if (path === "/healthz") res.writeHead(200).end(options.replica);
        else if (path === "/mcp") next();
        else routes(req, res, () => res.writeHead(404).end());
      },
    });
    // Every change this replica's registry learns of (its own, and the other replicas' through the
    // feed) reaches the subscriptions/listen streams open on this replica.
    const unpublish = registry.publishTo(http.handler);
    return {
      url: http.url,
      store,
      async close() {
        unpublish();
        await http.close();
        await registry.close();
        await Promise.allSettled([feed.close?.(), state.close?.(), store.close?.(), catalog.close?.()]);
      },
    };
  }

  const transports = new Map<string, StreamableHTTPServerTransport>();

  async function handleStateful(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res);
    if (req.method !== "POST" || sessionId !== undefined) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32000, message: `unknown session on replica ${options.replica}` },
          id: null,
        }),
      );
      return;
    }
    const server = createMcpServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  async function handleStateless(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const server = createMcpServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      transport.close().catch(() => {});
      server.close().catch(() => {});
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  const http = createServer(httpServerOptions(), (req, res) => {
    res.setHeader("x-replica", options.replica);
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const fail = (error: unknown) => {
      console.error(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    };
    if (path === "/mcp") handleStateful(req, res).catch(fail);
    else if (path === "/mcp-stateless") handleStateless(req, res).catch(fail);
    else if (path === "/healthz") res.writeHead(200).end(options.replica);
    else routes(req, res, () => res.writeHead(404).end());
  });
  await new Promise<void>((resolve) => http.listen(options.port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  return {
    url,
    store,
    async close() {
      await Promise.allSettled([...transports.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await registry.close();
      await Promise.allSettled([feed.close?.(), state.close?.(), store.close?.(), catalog.close?.()]);
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = (name: string, fallback?: string): string => {
    const value = process.env[name] ?? fallback;
    if (value === undefined) throw new Error(`set ${name}`);
    return value;
  };
  let publicUrl = process.env.PUBLIC_URL;
  const sdk = sdkFlag(process.argv.includes("--sdk") ? process.argv : ["--sdk", env("SDK", "v1")]);
  const replica = await startReplica({
    sdk,
    replica: env("REPLICA", "a"),
    port: Number(env("PORT", "0")),
    secret: env("SECRET"),
    publicUrl: () => publicUrl as string,
    s3: {
      endpoint: env("S3_ENDPOINT"),
      bucket: env("S3_BUCKET"),
      prefix: env("S3_PREFIX", "replicas/"),
      accessKeyId: env("AWS_ACCESS_KEY_ID"),
      secretAccessKey: env("AWS_SECRET_ACCESS_KEY"),
    },
    redisUrl: env("REDIS_URL"),
    ...(process.env.REDIS_PREFIX ? { redisPrefix: process.env.REDIS_PREFIX } : {}),
  });
  publicUrl ??= replica.url;
  console.log(`READY ${replica.url}`);
  const stop = () => {
    replica.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
