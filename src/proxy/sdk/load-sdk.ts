/**
 * Picks the SDK generation the proxy runs on, both faces of it (the downstream server and the
 * upstream client), and loads only that one: each generation's code is imported on demand, so a
 * proxy runs with just the SDK it uses installed.
 */
import { FileBridgeError } from "../../errors/file-bridge-error.js";
import type { McpEndpoint } from "../http-host.js";
import type { ProxyCore } from "../proxy-core.js";
import type { UpstreamPort } from "../types.js";
import type { ProxyServerOptions } from "./downstream/dispatch.js";
import type { EndpointLimits } from "./downstream/sessions.js";
import type { UpstreamConnectionOptions } from "./upstream/shared.js";

/**
 * An MCP SDK generation: `"v1"` is `@modelcontextprotocol/sdk` 1.x, `"v2"` is
 * `@modelcontextprotocol/server` + `client` 2.x.
 *
 * @example
 * ```ts
 * const proxy = await createFileProxy({ config, sdk: "v2" satisfies SdkGeneration });
 * ```
 */
export type SdkGeneration = "v1" | "v2";

/** The packages each generation needs. */
const PACKAGES: Record<SdkGeneration, readonly string[]> = {
  v1: ["@modelcontextprotocol/sdk"],
  v2: ["@modelcontextprotocol/server", "@modelcontextprotocol/client"],
};

/**
 * A transport, structurally (either SDK's `Transport`): what `connect` takes.
 *
 * @example
 * ```ts
 * const transport: ProxyTransportLike = new StdioServerTransport();
 * ```
 */
export interface ProxyTransportLike {
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A downstream proxy server of either SDK generation (the SDK's low-level `Server`): connect it to a
 * transport of the same SDK.
 *
 * @example
 * ```ts
 * const server: ProxyServer = proxy.createServer();
 * await server.connect(new StdioServerTransport());
 * ```
 */
export interface ProxyServer {
  connect(transport: ProxyTransportLike): Promise<void>;
  close(): Promise<void>;
}

/** The downstream of one generation, bound to a core. */
export interface Downstream {
  readonly sdk: SdkGeneration;
  /** A server for one connection. */
  createServer(): ProxyServer;
  /**
   * The HTTP endpoint; `overrides` change the server options for it (e.g. no log relay);
   * `limits` bound its sessions and (SDK v2) each user's open `subscriptions/listen` streams.
   */
  endpoint(
    log?: (line: string) => void,
    overrides?: Partial<ProxyServerOptions>,
    limits?: EndpointLimits,
  ): McpEndpoint;
  /** Serves one connection over this process's stdin and stdout. */
  serveStdio(): Promise<{ closed: Promise<void> }>;
}

/** Whether `error` says that one of `packages` is not installed (not that something inside failed). */
function isMissing(error: unknown, packages: readonly string[]): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as Error | null)?.message);
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    packages.some((pkg) => message.includes(`'${pkg}`) || message.includes(`"${pkg}`))
  );
}

/** A loaded SDK generation: the upstream client, and the downstream once bound to a core. */
export interface ProxySdk {
  readonly sdk: SdkGeneration;
  /** A connection to one upstream, on this generation's client. */
  upstream(options: UpstreamConnectionOptions): UpstreamPort;
  bind(core: ProxyCore, options: ProxyServerOptions): Downstream;
}

/**
 * Loads the downstream of `sdk`: the generation asked for, or else SDK v1 when it is installed,
 * else SDK v2. Load it before starting anything, so a missing SDK fails first; `command` is the CLI
 * command the error names.
 *
 * @throws FileBridgeError `INVALID_OPTION` naming the package to install when the SDK asked for (or
 *   any SDK) is missing.
 */
export async function loadProxySdk(
  sdk: SdkGeneration | undefined,
  command: "proxy" | "connect" = "proxy",
): Promise<ProxySdk> {
  const order: SdkGeneration[] = sdk === undefined ? ["v1", "v2"] : [sdk];
  for (const generation of order) {
    try {
      return generation === "v1" ? await v1Generation() : await v2Generation();
    } catch (error) {
      if (!isMissing(error, PACKAGES[generation])) throw error;
    }
  }
  throw new FileBridgeError(
    "INVALID_OPTION",
    sdk === undefined
      ? `mcp-file-bridge ${command} needs an MCP SDK installed next to it: npm install @modelcontextprotocol/sdk ` +
          "(SDK v1), or npm install @modelcontextprotocol/server @modelcontextprotocol/client (SDK v2); " +
          `with npx: npx -y -p mcp-file-bridge -p @modelcontextprotocol/sdk mcp-file-bridge ${command} …`
      : `mcp-file-bridge ${command} was asked to run on MCP SDK ${sdk}, but it is not installed: npm install ${PACKAGES[sdk].join(" ")}`,
    { data: { option: "sdk" } },
  );
}

async function v1Generation(): Promise<ProxySdk> {
  const [{ createProxyServer }, { v1Endpoint, serveProxyStdio }, { UpstreamConnection }] = await Promise.all([
    import("./downstream/v1/server.js"),
    import("./downstream/v1/endpoint.js"),
    import("./upstream/upstream-connection.js"),
  ]);
  return {
    sdk: "v1",
    upstream: (options) => new UpstreamConnection(options),
    bind(core, options) {
      const createServer = () => createProxyServer(core, options);
      return {
        sdk: "v1",
        createServer: () => createServer() as unknown as ProxyServer,
        endpoint: (log, overrides = {}, limits) =>
          v1Endpoint(
            (settledOf) => createProxyServer(core, { ...options, ...overrides }, settledOf),
            log,
            limits,
            core,
          ),
        async serveStdio() {
          const served = await serveProxyStdio(createServer());
          return { closed: served.closed };
        },
      };
    },
  };
}

async function v2Generation(): Promise<ProxySdk> {
  const [{ createProxyServerV2 }, { v2Endpoint, serveProxyStdioV2 }, { UpstreamConnectionV2 }] =
    await Promise.all([
      import("./downstream/v2/server.js"),
      import("./downstream/v2/endpoint.js"),
      import("./upstream/upstream-connection-v2.js"),
    ]);
  return {
    sdk: "v2",
    upstream: (options) => new UpstreamConnectionV2(options),
    bind(core, options) {
      const createServer = (serving: "connection" | "request") => createProxyServerV2(core, options, serving);
      return {
        sdk: "v2",
        createServer: () => createServer("connection") as unknown as ProxyServer,
        endpoint: (log, overrides = {}, limits) =>
          v2Endpoint(
            core,
            (serving, settled) => createProxyServerV2(core, { ...options, ...overrides }, serving, settled),
            log,
            limits,
            { name: overrides.name ?? options.name, version: overrides.version ?? options.version },
          ),
        async serveStdio() {
          const served = serveProxyStdioV2(createServer);
          return { closed: served.closed };
        },
      };
    },
  };
}
