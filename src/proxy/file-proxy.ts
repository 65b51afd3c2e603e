/**
 * `createFileProxy()`: the gateway. Connects to the upstreams of a config, serves one downstream MCP
 * server (per session) that re-exposes their tools, prompts and resources, rewrites upload
 * consumers' file arguments, captures artifact producers' outputs, and adds `get_upload_url`, the
 * file routes and `GET /healthz`.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import {
  DEFAULT_ARTIFACT_MAX_BYTES,
  DEFAULT_MAX_FILES_PER_CALL,
  DEFAULT_UPLOAD_MAX_BYTES,
} from "../internal/limits.js";
import { toNodeHandler } from "../node/index.js";
import { ResourceRegistry } from "../registry/resource-registry.js";
import { createFileRoutes } from "../routes/create-file-routes.js";
import type { FileRoutes } from "../routes/types.js";
import { defaultScope, type ScopeFunction } from "../scope/scope.js";
import { SignedUrlMinter } from "../signing/signed-url-minter.js";
import { fsStore } from "../storage/fs-store.js";
import { memoryState } from "../storage/memory-state.js";
import type { FileStore } from "../storage/types.js";
import { UploadHandleResolver } from "../uploads/upload-handle-resolver.js";
import { bearerTokens, parseBearerTokens } from "./bearer-tokens.js";
import type { ProxyConfig } from "./config.js";
import { parseProxyConfig } from "./config.js";
import { checkHealth, type HealthReport } from "./health.js";
import { type NodeRoute, type ProxyAuthenticate, type ProxyHttpHost, serveProxyHttp } from "./http-host.js";
import { ownListenUris } from "./listen-uris.js";
import { type MountDeps, mountUpstream, wantsUploads } from "./mount-upstream.js";
import { makeOwnedTempDir } from "./owned-temp-dir.js";
import { ProxyCore } from "./proxy-core.js";
import { RegistryResources } from "./registry-resources.js";
import type { EndpointLimits } from "./sdk/downstream/sessions.js";
import {
  type Downstream,
  loadProxySdk,
  type ProxySdk,
  type ProxyServer,
  type SdkGeneration,
} from "./sdk/load-sdk.js";
import type { LocalResources, MountedUpstream } from "./types.js";
import { checkUploadLocalTool, uploadUrlTool } from "./upload-url-tool.js";

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

function secretFrom(options: FileProxyOptions, config: ProxyConfig): string | Uint8Array {
  if (options.secret !== undefined) return options.secret;
  const env = config.proxy?.secretEnv;
  if (env) {
    const value = process.env[env];
    if (!value) {
      throw new FileBridgeError(
        "INVALID_OPTION",
        `proxy.secretEnv names ${env}, but that environment variable is empty: set it to a long random value ` +
          `(e.g. export ${env}=$(openssl rand -hex 32)), or remove proxy.secretEnv for links that work until the process exits`,
      );
    }
    return value;
  }
  return randomBytes(32);
}

/** The `authenticate` of `proxy.auth.tokensEnv`. */
function tokensFrom(env: string | undefined): ProxyAuthenticate | undefined {
  if (env === undefined) return undefined;
  const value = process.env[env];
  if (!value) {
    throw new FileBridgeError(
      "INVALID_OPTION",
      `proxy.auth.tokensEnv names ${env}, but that environment variable is empty: set it to "user:token" pairs ` +
        `(e.g. export ${env}=alice:$(openssl rand -hex 24))`,
    );
  }
  return bearerTokens(parseBearerTokens(value, env));
}

/**
 * Why a handle from one connection is "not found" on the next, for an operator who has not set up
 * authentication: logged when such a proxy listens over HTTP, and by `--check`.
 */
export const PER_SESSION_NOTE =
  "note: callers are not authenticated (no proxy.auth), so each MCP session is its own scope: an upload " +
  "handle or artifact from one connection is not found on the next (the Inspector CLI opens one session per " +
  "command). Set proxy.auth.tokensEnv (or --auth-tokens-env NAME) so files belong to a signed-in user across sessions.";

/** Whether the proxy runs on the default scope rule with no authentication, and serves uploads. */
export function perSessionUploads(
  config: ProxyConfig,
  options: Pick<FileProxyOptions, "scope" | "authenticate">,
): boolean {
  const uploads = Object.keys(config.mcpServers).some((name) => wantsUploads(config.servers?.[name]));
  return uploads && options.scope === undefined && options.authenticate === undefined && !config.proxy?.auth;
}

/** The proxy's limits, with their defaults (validated before anything starts). */
function limitsOf(config: ProxyConfig) {
  const limits = config.proxy?.limits ?? {};
  return {
    maxBytes: limits.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES,
    maxFiles: limits.maxFiles ?? DEFAULT_MAX_FILES_PER_CALL,
    artifactMaxBytes: limits.artifactMaxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES,
    callTimeoutMs: durationToMs((limits.callTimeout ?? "10m") as Duration, "proxy.limits.callTimeout"),
    initializeTimeoutMs: durationToMs(
      (limits.initializeTimeout ?? "60s") as Duration,
      "proxy.limits.initializeTimeout",
    ),
  };
}

/** The proxy's own file pieces: where files live, who signs their URLs, who lists and hands them out. */
interface FilePieces {
  store: FileStore;
  minter: SignedUrlMinter;
  registry: ResourceRegistry;
  uploads: UploadHandleResolver;
  routes: FileRoutes;
  /** The temp storage folder the proxy made (removed on close) when the config names none. */
  ownedDir: string | undefined;
}

/**
 * Makes the file pieces of a config: an `fsStore` in `proxy.storage.dir` (else a fresh temp
 * folder), in-memory state, the URL minter (on `baseUrl()`, known once listening), the registry on
 * the proxy's one scope rule, the upload tickets and the file routes.
 */
async function openFilePieces(
  options: FileProxyOptions,
  config: ProxyConfig,
  scope: ScopeFunction,
  baseUrl: () => string,
): Promise<FilePieces> {
  const gateway = config.proxy ?? {};
  const ttl = gateway.ttl ?? {};
  const { maxBytes } = limitsOf(config);
  const secret = secretFrom(options, config); // before the temp folder: a bad secret leaves nothing behind
  // Made fresh, and the folders of proxies that were killed are removed meanwhile (not awaited).
  const ownedDir = gateway.storage?.dir ? undefined : (await makeOwnedTempDir()).dir;
  const storageDir = gateway.storage?.dir ?? (ownedDir as string);
  await mkdir(storageDir, { recursive: true, mode: 0o700 });
  const store = fsStore(storageDir);
  const state = memoryState();
  const minter = new SignedUrlMinter({
    secret,
    baseUrl,
    state,
    ...(ttl.downloadUrls !== undefined ? { ttl: ttl.downloadUrls as Duration } : {}),
  });
  // One scope rule for the whole proxy: the registry derives the scope from the caller's own
  // context with the core's function (see RegistryResources).
  const registry = new ResourceRegistry({ store, minter, scope });
  const uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    maxBytes,
    ...(ttl.uploadUrls !== undefined ? { ttl: ttl.uploadUrls as Duration } : {}),
    ...(ttl.uploads !== undefined ? { handleTtl: ttl.uploads as Duration } : {}),
  });
  const routes = createFileRoutes({ store, minter, state, registry, maxBytes });
  return { store, minter, registry, uploads, routes, ownedDir };
}

/**
 * The core's view of the proxy's own resources, served by the {@link RegistryResources} `local()`
 * returns: it is made after the core, whose `broadcast` it notifies through.
 */
function localResourcesOf(local: () => RegistryResources | undefined): LocalResources {
  const served = () => local() as RegistryResources;
  return {
    owns: (uri) => local()?.owns(uri) ?? false,
    list: (scope, cursor, extra) => served().list(scope, cursor, extra),
    templates: (scope, extra) => served().templates(scope, extra),
    read: (scope, uri, extra) => served().read(scope, uri, extra),
    subscribe: (scope, uri, extra) => served().subscribe(scope, uri, extra),
    unsubscribe: (scope, uri, extra) => served().unsubscribe(scope, uri, extra),
    release: (scope) => local()?.release(scope),
  };
}

/** Connects every upstream at once; one that fails is logged and retried on its next call. */
async function connectUpstreams(upstreams: MountedUpstream[], log: (line: string) => void): Promise<void> {
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
}

/** Whether any upstream declares a capability (prompts, logging, completions, resources). */
function anyDeclares(upstreams: MountedUpstream[], capability: string): boolean {
  return upstreams.some((u) => u.port.capabilities?.[capability] !== undefined);
}

/** The file routes (under the minter's base path) as a Node route in front of the MCP endpoint. */
function nodeFileRoutes(routes: FileRoutes, basePath: string): NodeRoute {
  const files = toNodeHandler(routes);
  return (req, res, next) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path.startsWith(`${basePath}/`)) files(req, res, next);
    else next();
  };
}

/** What a running proxy is made of, as {@link listenHttp} and {@link closeProxy} need it. */
interface RunningParts {
  config: ProxyConfig;
  core: ProxyCore;
  downstream: Downstream;
  pieces: FilePieces;
  local: RegistryResources;
  authenticate: ProxyAuthenticate | undefined;
  health: () => Promise<HealthReport>;
  log: (line: string) => void;
}

/** Serves MCP at `proxy.mount`, the file routes and `/healthz` over HTTP. */
/** The bounds of the HTTP endpoint's sessions and streams (issue 21 parts 3 and 4). */
function endpointLimits(parts: RunningParts, gateway: NonNullable<ProxyConfig["proxy"]>): EndpointLimits {
  const limits = gateway.limits ?? {};
  const { core, pieces } = parts;
  return {
    ...(limits.listenStreams !== undefined ? { listenStreams: limits.listenStreams } : {}),
    ...(limits.sessionsPerUser !== undefined ? { sessionsPerUser: limits.sessionsPerUser } : {}),
    ...(limits.anonymousSessions !== undefined ? { anonymousSessions: limits.anonymousSessions } : {}),
    ...(limits.sessionIdle !== undefined
      ? { sessionIdleMs: durationToMs(limits.sessionIdle as Duration, "proxy.limits.sessionIdle") }
      : {}),
    // With auth configured, an anonymous caller opens no session (401).
    requireAuth: parts.authenticate !== undefined,
    listenUris: (uris, authInfo) => ownListenUris(uris, authInfo, core, pieces.registry, pieces.minter),
  };
}

async function listenHttp(
  parts: RunningParts,
  listenOptions: { host?: string; port?: number },
): Promise<ProxyHttpHost> {
  const gateway = parts.config.proxy ?? {};
  const logging = anyDeclares(parts.core.upstreams, "logging");
  return await serveProxyHttp({
    // An upstream's log is about every caller's calls: over HTTP it is relayed only when asked.
    endpoint: parts.downstream.endpoint(
      parts.log,
      { logging: logging && gateway.relayUpstreamLogs === true },
      endpointLimits(parts, gateway),
    ),
    routes: nodeFileRoutes(parts.pieces.routes, parts.pieces.minter.basePath),
    ...(parts.authenticate ? { authenticate: parts.authenticate } : {}),
    ...(gateway.allowedHosts ? { allowedHosts: gateway.allowedHosts } : {}),
    ...(gateway.baseUrl ? { baseUrl: gateway.baseUrl } : {}),
    health: async () => {
      const report = await parts.health();
      return { status: report.status === "ok" ? 200 : 503, body: report };
    },
    mount: gateway.mount ?? "/mcp",
    host: listenOptions.host ?? gateway.host ?? "127.0.0.1",
    port: listenOptions.port ?? gateway.port ?? 0,
    log: parts.log,
  });
}

/**
 * Shuts a proxy down in order: stop accepting, let calls in flight finish (up to `timeoutMs`) and
 * their results go out, close sessions, the proxy's own resources, the upstreams and the registry,
 * and remove the temp storage folder the proxy made.
 */
async function closeProxy(
  parts: RunningParts,
  host: ProxyHttpHost | undefined,
  timeoutMs: number,
): Promise<void> {
  const { core, log } = parts;
  host?.stopAccepting();
  if (core.inFlight > 0) log(`waiting for ${core.inFlight} call(s) to finish`);
  await core.drain(timeoutMs);
  // the results of those calls are still on their way out
  await host?.drain(Math.min(timeoutMs, 5000));
  await host?.close();
  await parts.local.close();
  await core.close();
  await parts.pieces.registry.close();
  if (parts.pieces.ownedDir) await rm(parts.pieces.ownedDir, { recursive: true, force: true });
  log("closed");
}

/**
 * Mounts every upstream of the config with its rules, and builds the core on them with the proxy's
 * own tool (`get_upload_url`, when a tool takes uploads) and resources, on one scope rule.
 */
async function buildCore(
  options: FileProxyOptions,
  config: ProxyConfig,
  generation: ProxySdk,
  pieces: FilePieces,
  scope: ScopeFunction,
): Promise<{ core: ProxyCore; local: RegistryResources }> {
  const log = options.log ?? (() => {});
  const limits = limitsOf(config);
  let core: ProxyCore | undefined;
  const deps: MountDeps = {
    generation,
    store: pieces.store,
    registry: pieces.registry,
    uploads: pieces.uploads,
    ...limits,
    artifactTtl: (config.proxy?.ttl?.artifacts ?? "24h") as Duration,
    upstreamStderr: options.upstreamStderr ?? "inherit",
    onNotification: (port, method, params) => core?.onUpstreamNotification(port, method, params),
    log,
  };
  const upstreams: MountedUpstream[] = [];
  for (const [name, target] of Object.entries(config.mcpServers)) {
    upstreams.push(await mountUpstream(name, target, config.servers?.[name], deps));
  }
  const uploadsWanted = Object.keys(config.mcpServers).some((name) => wantsUploads(config.servers?.[name]));
  let local: RegistryResources | undefined;
  const built = new ProxyCore({
    upstreams,
    localTools: uploadsWanted ? [uploadUrlTool(pieces.uploads), checkUploadLocalTool(pieces.uploads)] : [],
    localResources: localResourcesOf(() => local),
    scope,
    callTimeoutMs: limits.callTimeoutMs,
    log,
  });
  core = built;
  local = new RegistryResources(pieces.registry, (scope, method, params) =>
    built.broadcast(method, params, scope),
  );
  return { core: built, local };
}

/**
 * Puts the core behind a downstream server of the proxy's SDK generation, and sends changes of the
 * proxy's own files to 2026-07-28 listen streams (list changes carry no content; an update only
 * reaches streams that named its URI).
 */
function bindDownstream(
  options: FileProxyOptions,
  config: ProxyConfig,
  generation: ProxySdk,
  core: ProxyCore,
  registry: ResourceRegistry,
): Downstream {
  const info = options.serverInfo ?? { name: "mcp-file-bridge-proxy", version: "0.1.0" };
  const downstream = generation.bind(core, {
    ...info,
    prompts: anyDeclares(core.upstreams, "prompts"),
    logging: anyDeclares(core.upstreams, "logging"),
    completions: anyDeclares(core.upstreams, "completions"),
    uploads: Object.keys(config.mcpServers).some((name) => wantsUploads(config.servers?.[name])),
  });
  registry.publishTo({
    resourcesChanged: () => core.notifyListeners("notifications/resources/list_changed"),
    resourceUpdated: (uri) => core.notifyListeners("notifications/resources/updated", { uri }),
  });
  return downstream;
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
  const scope: ScopeFunction = options.scope ?? defaultScope;
  const gateway = config.proxy ?? {};
  // Everything that can fail on its own before anything starts: the limits, the SDK, the tokens.
  limitsOf(config);
  const generation = await loadProxySdk(options.sdk ?? gateway.sdk);
  const authenticate = options.authenticate ?? tokensFrom(gateway.auth?.tokensEnv);

  let host: ProxyHttpHost | undefined;
  const pieces = await openFilePieces(
    options,
    config,
    scope,
    () => gateway.baseUrl ?? host?.url ?? "http://127.0.0.1",
  );
  const { core, local } = await buildCore(options, config, generation, pieces, scope);
  await connectUpstreams(core.upstreams, log);
  const downstream = bindDownstream(options, config, generation, core, pieces.registry);
  log(`serving with MCP SDK ${downstream.sdk}`);
  const health = () => checkHealth(core, (upstream) => config.servers?.[upstream.port.name]);
  const parts: RunningParts = { config, core, downstream, pieces, local, authenticate, health, log };
  let closing: Promise<void> | undefined;

  return {
    core,
    store: pieces.store,
    registry: pieces.registry,
    uploads: pieces.uploads,
    minter: pieces.minter,
    sdk: downstream.sdk,
    createServer: () => downstream.createServer(),
    get sessions() {
      return host?.sessions ?? 0;
    },
    async listen(listenOptions = {}) {
      if (host) throw new Error("the proxy is already listening");
      host = await listenHttp(parts, listenOptions);
      if (perSessionUploads(config, options)) log(PER_SESSION_NOTE);
      log(`listening on ${host.mcpUrl}`);
      return { url: host.url, mcpUrl: host.mcpUrl };
    },
    serveStdio: () => downstream.serveStdio(),
    health,
    close(closeOptions = {}) {
      closing ??= closeProxy(parts, host, closeOptions.timeoutMs ?? 30_000);
      return closing;
    },
  };
}
