/**
 * `createFileProxy()`: the gateway. Connects to the upstreams of a config, serves one downstream MCP
 * server (per session) that re-exposes their tools, prompts and resources, rewrites upload
 * consumers' file arguments, captures artifact producers' outputs, and adds `get_upload_url`, the
 * file routes and `GET /healthz`.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileBridge } from "../bridge/file-bridge.js";
import { createFileRoutes } from "../http/create-file-routes.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import {
  DEFAULT_ARTIFACT_MAX_BYTES,
  DEFAULT_MAX_FILES_PER_CALL,
  DEFAULT_UPLOAD_MAX_BYTES,
} from "../internal/limits.js";
import { toNodeHandler } from "../node/index.js";
import { ResourceRegistry } from "../registry/resource-registry.js";
import { DEFAULT_SCOPE, type ScopeFunction } from "../scope/scope.js";
import { SignedUrlMinter } from "../signing/signed-url-minter.js";
import { fsStore } from "../storage/fs-store.js";
import { memoryState } from "../storage/memory-state.js";
import type { FileStore } from "../storage/types.js";
import { UploadHandleResolver } from "../uploads/upload-handle-resolver.js";
import { bearerTokens, parseBearerTokens } from "./bearer-tokens.js";
import type { ProxyConfig, ServerRules } from "./config.js";
import { parseProxyConfig } from "./config.js";
import { confinedFolders } from "./confined-file.js";
import { checkHealth, type HealthReport } from "./health.js";
import {
  type NodeRoute,
  type ProxyAuthenticate,
  type ProxyAuthInfo,
  type ProxyHttpHost,
  serveProxyHttp,
} from "./http-host.js";
import { type MountedUpstream, ProxyCore } from "./proxy-core.js";
import { RegistryResources } from "./registry-resources.js";
import { type Downstream, loadProxySdk, type ProxyServer, type SdkGeneration } from "./sdk/load-sdk.js";
import { artifactProducer, uploadConsumer } from "./stored-file-adapters.js";
import type { JsonObject, LocalTool, ToolAdapter } from "./types.js";

/**
 * Options of {@link createFileProxy}.
 *
 * @example
 * ```ts
 * const options: FileProxyOptions = { config: await loadProxyConfig("proxy.yaml"), log: console.error };
 * ```
 */
export interface FileProxyOptions {
  /** The parsed config (see `loadProxyConfig`), or a plain object that is validated here. */
  config: ProxyConfig | Record<string, unknown>;
  /**
   * Signing secret for upload and download URLs (at least 32 bytes).
   * @default the environment variable named by `proxy.secretEnv`, else random per process
   */
  secret?: string | Uint8Array;
  /**
   * Derives a request's scope.
   * @default the verified user (`authInfo.extra.sub`), else the MCP session id; over HTTP without
   *   either (a 2026-07-28 request with no identity), file features answer `FORBIDDEN`
   */
  scope?: ScopeFunction;
  /**
   * The MCP SDK generation the proxy runs on: `"v1"` (`@modelcontextprotocol/sdk`) or `"v2"`
   * (`@modelcontextprotocol/server` + `client`: serves 2026-07-28 stateless clients and 2025 clients on
   * sessions, and reaches upstreams of either era, 2026-07-28-only ones included).
   * @default `proxy.sdk` of the config, else v1 when installed, else v2
   */
  sdk?: SdkGeneration;
  /**
   * Verifies HTTP callers (a user in `extra.sub` becomes the scope of its files; `false` answers
   * 401). Stateless (2026-07-28) callers need an identity to use files.
   * @default the tokens of `proxy.auth.tokensEnv`, else every caller anonymous
   */
  authenticate?: ProxyAuthenticate;
  /** Receives log lines (what happened). @default none */
  log?: (line: string) => void;
  /** Where stdio upstreams' stderr goes. @default "inherit" */
  upstreamStderr?: "inherit" | "pipe" | "ignore";
  /** Name and version of the downstream server. @default mcp-file-bridge-proxy */
  serverInfo?: { name: string; version: string };
}

/**
 * A running proxy; see {@link createFileProxy}.
 *
 * @example
 * ```ts
 * const proxy = await createFileProxy({ config });
 * const { mcpUrl } = await proxy.listen({ port: 8080 });
 * ```
 */
export interface FileProxy {
  /** The routing core (for custom hosting). */
  readonly core: ProxyCore;
  readonly store: FileStore;
  readonly registry: ResourceRegistry;
  readonly uploads: UploadHandleResolver;
  readonly minter: SignedUrlMinter;
  /** The MCP SDK generation the proxy runs on (its server and its upstream client). */
  readonly sdk: SdkGeneration;
  /**
   * Makes one downstream MCP server (the low-level `Server` of the SDK in {@link FileProxy.sdk});
   * connect it to a transport of that SDK.
   */
  createServer(): ProxyServer;
  /** Open 2025-era MCP sessions over HTTP (0 before `listen`). */
  readonly sessions: number;
  /** Serves MCP (Streamable HTTP at `mount`), the file routes and `/healthz`. */
  listen(options?: { host?: string; port?: number }): Promise<{ url: string; mcpUrl: string }>;
  /** Serves one session over this process's stdin/stdout (no upload routes unless also listening). */
  serveStdio(): Promise<{ closed: Promise<void> }>;
  /** Reachability and wiring of the upstreams. */
  health(): Promise<HealthReport>;
  /** Finishes in-flight calls (up to `timeoutMs`), closes sessions and upstreams, removes temp files. */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * The URIs of a `subscriptions/listen` request a caller may hear `resources/updated` for: upstream
 * URIs (not the proxy's own), and the proxy's own files' URIs of the caller's scope. A caller
 * without a scope hears about none of the proxy's files.
 */
function ownListenUris(
  uris: readonly string[],
  authInfo: ProxyAuthInfo | undefined,
  core: ProxyCore,
  registry: ResourceRegistry,
  minter: SignedUrlMinter,
): string[] {
  let scope: string | undefined;
  try {
    scope = core.scopeOf({
      extra: { ...(authInfo ? { authInfo } : {}), transport: "http", requestInfo: { headers: {} } },
      signal: new AbortController().signal,
    });
  } catch {
    scope = undefined;
  }
  return uris.filter((uri) => {
    const parsed = registry.parseUri(uri);
    if (!parsed) return true;
    if (scope === undefined) return false;
    if (parsed.scope !== undefined) return parsed.scope === scope;
    if (parsed.scopeRef !== undefined) return minter.scopeRefs.matches(parsed.scopeRef, scope);
    return true;
  });
}

/** The `get_upload_url` tool served by the proxy itself. */
function uploadUrlTool(uploads: UploadHandleResolver): LocalTool {
  return {
    definition: {
      name: uploads.toolName,
      title: "Get an upload URL",
      description:
        "Returns a short-lived URL the user (or client) can upload files to over HTTP, for files too large to " +
        "pass inline. After the upload, pass the returned handle (upload://…) as the file argument of another tool.",
      inputSchema: {
        type: "object",
        properties: {
          filename: {
            type: "string",
            maxLength: 200,
            description: "Name of the file to upload, used in the example command line.",
          },
        },
      },
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    async call(args, { scope }) {
      const filename = typeof args.filename === "string" && args.filename ? args.filename : undefined;
      const ticket = await uploads.createTicket(scope, filename ? { filename } : {});
      const text = [
        `Upload URL (${ticket.method} multipart/form-data, field "${ticket.field}", or PUT the raw bytes with ?filename=…): ${ticket.upload_url}`,
        `Expires at ${ticket.expires_at}; at most ${ticket.max_files} file(s) of ${ticket.max_bytes} bytes each${ticket.single_use ? "; works for one successful upload." : "."}`,
        `Example: ${ticket.curl}`,
        `After the upload, pass ${ticket.handle} (or the handles in the upload's JSON reply) as the file argument.`,
      ].join("\n");
      return { content: [{ type: "text", text }], structuredContent: ticket as unknown as JsonObject };
    },
  };
}

function secretFrom(options: FileProxyOptions, config: ProxyConfig): string | Uint8Array {
  if (options.secret !== undefined) return options.secret;
  const env = config.proxy?.secretEnv;
  if (env) {
    const value = process.env[env];
    if (!value) {
      throw new Error(`proxy.secretEnv names ${env}, but that environment variable is empty`);
    }
    return value;
  }
  return randomBytes(32);
}

/** The `authenticate` of `proxy.auth.tokensEnv`. */
function tokensFrom(env: string | undefined): ProxyAuthenticate | undefined {
  if (env === undefined) return undefined;
  const value = process.env[env];
  if (!value) throw new Error(`proxy.auth.tokensEnv names ${env}, but that environment variable is empty`);
  return bearerTokens(parseBearerTokens(value, env));
}

/**
 * Starts a file-handling proxy in front of the upstreams of a config: connects to them (failures are
 * logged and reported by `health()`; calls retry), and returns the pieces plus ways to serve it.
 *
 * @example
 * ```ts
 * import { createFileProxy, loadProxyConfig } from "mcp-file-bridge/proxy";
 *
 * const proxy = await createFileProxy({ config: await loadProxyConfig("proxy.yaml"), log: console.error });
 * const { mcpUrl } = await proxy.listen({ port: 8080 });
 * process.on("SIGTERM", () => void proxy.close());
 * ```
 */
export async function createFileProxy(options: FileProxyOptions): Promise<FileProxy> {
  const config = parseProxyConfig(options.config, "config");
  const log = options.log ?? (() => {});
  const gateway = config.proxy ?? {};
  const limits = gateway.limits ?? {};
  const ttl = gateway.ttl ?? {};
  const maxBytes = limits.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES;
  const maxFiles = limits.maxFiles ?? DEFAULT_MAX_FILES_PER_CALL;
  const callTimeoutMs = durationToMs((limits.callTimeout ?? "10m") as Duration, "proxy.limits.callTimeout");
  // Everything that can fail on its own before anything starts: the SDK, the tokens.
  const generation = await loadProxySdk(options.sdk ?? gateway.sdk);
  const authenticate = options.authenticate ?? tokensFrom(gateway.auth?.tokensEnv);

  const ownedDir = gateway.storage?.dir ? undefined : await mkdtemp(join(tmpdir(), "mcp-file-proxy-"));
  const storageDir = gateway.storage?.dir ?? (ownedDir as string);
  await mkdir(storageDir, { recursive: true, mode: 0o700 });
  const store = fsStore(storageDir);
  const state = memoryState();
  let host: ProxyHttpHost | undefined;
  const minter = new SignedUrlMinter({
    secret: secretFrom(options, config),
    baseUrl: () => gateway.baseUrl ?? host?.url ?? "http://127.0.0.1",
    state,
    ...(ttl.downloadUrls !== undefined ? { ttl: ttl.downloadUrls as Duration } : {}),
  });
  const registry = new ResourceRegistry({
    store,
    minter,
    scope: (extra) => extra.sessionId ?? DEFAULT_SCOPE,
  });
  const uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    maxBytes,
    ...(ttl.uploadUrls !== undefined ? { ttl: ttl.uploadUrls as Duration } : {}),
    ...(ttl.uploads !== undefined ? { handleTtl: ttl.uploads as Duration } : {}),
  });
  const routes = createFileRoutes({ store, minter, state, registry, maxBytes });

  const rulesOf = new Map<MountedUpstream, ServerRules | undefined>();
  const upstreams: MountedUpstream[] = [];
  let core: ProxyCore | undefined;
  let wantsUploads = false;
  for (const [name, target] of Object.entries(config.mcpServers)) {
    const rules = config.servers?.[name];
    const port = generation.upstream({
      name,
      target,
      stderr: options.upstreamStderr ?? "inherit",
      timeoutMs: callTimeoutMs,
      onNotification: (method, params) => core?.onUpstreamNotification(port, method, params),
      onError: (error) => log(`upstream ${name}: ${error.message}`),
    });
    if (rules?.handoffDir) await mkdir(rules.handoffDir, { recursive: true, mode: 0o700 });
    for (const dir of rules?.outputDirs ?? []) await mkdir(dir, { recursive: true, mode: 0o700 });
    const outputs = await confinedFolders(rules?.outputDirs ?? []);
    const bridge = new FileBridge({
      maxBytes,
      maxFiles,
      forms: { path: false, dataUrl: true, object: true, resolver: true, https: false, base64: false },
      resolvers: [uploads.fileSourceResolver(), registry.resolver()],
      ...(rules?.handoffDir ? { tmpDir: rules.handoffDir } : {}),
    });
    const tools = rules?.tools ?? {};
    if (Object.values(tools).some((rule) => rule.upload)) wantsUploads = true;
    const mounted: MountedUpstream = {
      port,
      ...(rules?.prefix ? { prefix: rules.prefix } : {}),
      adaptersFor: (tool: JsonObject) => {
        const rule = tools[String(tool.name)];
        if (!rule) return [];
        const adapters: ToolAdapter[] = [];
        if (rule.upload) {
          adapters.push(
            uploadConsumer(rule.upload, {
              bridge,
              uploads,
              store,
              maxFiles,
              ...(rules?.handoffDir ? { handoffDir: rules.handoffDir } : {}),
            }),
          );
        }
        if (rule.artifacts) {
          adapters.push(
            artifactProducer(rule.artifacts, {
              registry,
              outputs,
              maxBytes: limits.artifactMaxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES,
              ttl: (ttl.artifacts ?? "24h") as Duration,
            }),
          );
        }
        return adapters;
      },
    };
    rulesOf.set(mounted, rules);
    upstreams.push(mounted);
  }

  let local: RegistryResources | undefined;
  const coreInstance = new ProxyCore({
    upstreams,
    localTools: wantsUploads ? [uploadUrlTool(uploads)] : [],
    localResources: {
      owns: (uri) => local?.owns(uri) ?? false,
      list: (scope, cursor) => (local as RegistryResources).list(scope, cursor),
      templates: (scope) => (local as RegistryResources).templates(scope),
      read: (scope, uri) => (local as RegistryResources).read(scope, uri),
      subscribe: (scope, uri) => (local as RegistryResources).subscribe(scope, uri),
      unsubscribe: (scope, uri) => (local as RegistryResources).unsubscribe(scope, uri),
      release: (scope) => local?.release(scope),
    },
    ...(options.scope ? { scope: options.scope } : {}),
    callTimeoutMs,
    log,
  });
  core = coreInstance;
  local = new RegistryResources(registry, (scope, method, params) =>
    coreInstance.broadcast(method, params, scope),
  );

  await Promise.all(
    upstreams.map(async (upstream) => {
      try {
        await upstream.port.connect();
        log(`upstream ${upstream.port.name}: connected`);
      } catch (error) {
        log(`upstream ${upstream.port.name}: ${(error as Error).message} (retried on the next call)`);
      }
    }),
  );
  const has = (capability: string) => upstreams.some((u) => u.port.capabilities?.[capability] !== undefined);
  const info = options.serverInfo ?? { name: "mcp-file-bridge-proxy", version: "0.1.0" };
  const downstream: Downstream = generation.bind(coreInstance, {
    ...info,
    prompts: has("prompts"),
    logging: has("logging"),
    completions: has("completions"),
  });
  log(`serving with MCP SDK ${downstream.sdk}`);
  // Changes of the proxy's own files reach 2026-07-28 listen streams (list changes carry no content;
  // an update only reaches streams that named its URI).
  registry.publishTo({
    resourcesChanged: () => coreInstance.notifyListeners("notifications/resources/list_changed"),
    resourceUpdated: (uri) => coreInstance.notifyListeners("notifications/resources/updated", { uri }),
  });
  const health = () => checkHealth(coreInstance, (upstream) => rulesOf.get(upstream));
  const files = toNodeHandler(routes);
  const basePath = minter.basePath;
  const fileRoutes: NodeRoute = (req, res, next) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path.startsWith(`${basePath}/`)) files(req, res, next);
    else next();
  };
  let closing: Promise<void> | undefined;

  return {
    core: coreInstance,
    store,
    registry,
    uploads,
    minter,
    sdk: downstream.sdk,
    createServer: () => downstream.createServer(),
    get sessions() {
      return host?.sessions ?? 0;
    },
    async listen(listenOptions = {}) {
      if (host) throw new Error("the proxy is already listening");
      host = await serveProxyHttp({
        // An upstream's log is about every caller's calls: over HTTP it is relayed only when asked.
        endpoint: downstream.endpoint(
          log,
          { logging: has("logging") && gateway.relayUpstreamLogs === true },
          {
            ...(limits.listenStreams !== undefined ? { listenStreams: limits.listenStreams } : {}),
            ...(limits.sessionsPerUser !== undefined ? { sessionsPerUser: limits.sessionsPerUser } : {}),
            ...(limits.anonymousSessions !== undefined
              ? { anonymousSessions: limits.anonymousSessions }
              : {}),
            ...(limits.sessionIdle !== undefined
              ? { sessionIdleMs: durationToMs(limits.sessionIdle as Duration, "proxy.limits.sessionIdle") }
              : {}),
            // With auth configured, an anonymous caller opens no session (401).
            requireAuth: authenticate !== undefined,
            listenUris: (uris, authInfo) => ownListenUris(uris, authInfo, coreInstance, registry, minter),
          },
        ),
        routes: fileRoutes,
        ...(authenticate ? { authenticate } : {}),
        ...(gateway.allowedHosts ? { allowedHosts: gateway.allowedHosts } : {}),
        ...(gateway.baseUrl ? { baseUrl: gateway.baseUrl } : {}),
        health: async () => {
          const report = await health();
          return { status: report.status === "ok" ? 200 : 503, body: report };
        },
        mount: gateway.mount ?? "/mcp",
        host: listenOptions.host ?? gateway.host ?? "127.0.0.1",
        port: listenOptions.port ?? gateway.port ?? 0,
        log,
      });
      log(`listening on ${host.mcpUrl}`);
      return { url: host.url, mcpUrl: host.mcpUrl };
    },
    serveStdio: () => downstream.serveStdio(),
    health,
    close(closeOptions = {}) {
      closing ??= (async () => {
        host?.stopAccepting();
        if (coreInstance.inFlight > 0) log(`waiting for ${coreInstance.inFlight} call(s) to finish`);
        const timeoutMs = closeOptions.timeoutMs ?? 30_000;
        await coreInstance.drain(timeoutMs);
        // the results of those calls are still on their way out
        await host?.drain(Math.min(timeoutMs, 5000));
        await host?.close();
        await local?.close();
        await coreInstance.close();
        await registry.close();
        if (ownedDir) await rm(ownedDir, { recursive: true, force: true });
        log("closed");
      })();
      return closing;
    },
  };
}
