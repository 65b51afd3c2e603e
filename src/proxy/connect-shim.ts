/**
 * `createConnectShim()`: the local side of a remote MCP server. A desktop client starts it as a stdio
 * server; it forwards everything to the remote (Streamable HTTP), uploads local files named in file
 * arguments (only from the allowed folders), and saves the files the remote returns into a local
 * output folder.
 */
import { mkdir, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { FileBridgeError } from "../errors/file-bridge-error.js";
import { type Duration, durationToMs } from "../internal/duration.js";
import { DEFAULT_UPLOAD_MAX_BYTES } from "../internal/limits.js";
import type { UpstreamServerConfig } from "./config.js";
import { confinedFolders, isInside } from "./confined-file.js";
import { localUploads, remoteDownloads } from "./local-file-adapters.js";
import { ProxyCore } from "./proxy-core.js";
import { markedFileArgs } from "./schema-paths.js";
import { loadProxySdk, type ProxyServer, type SdkGeneration } from "./sdk/load-sdk.js";
import type { JsonObject, ToolAdapter } from "./types.js";

/** Default: most remote outputs one result saves. */
const DEFAULT_MAX_OUTPUTS = 20;
/** Default: most bytes one result saves, as a multiple of `maxBytes`. */
const DEFAULT_OUTPUT_BYTES_FACTOR = 4;

/**
 * Options of {@link createConnectShim}.
 *
 * @example
 * ```ts
 * const options: ConnectShimOptions = {
 *   remote: { url: "https://mcp.example.com/mcp", headers: { Authorization: `Bearer ${token}` } },
 *   allowDirs: ["/home/me/Documents"],
 *   outputDir: "/home/me/Downloads/mcp",
 * };
 * ```
 */
export interface ConnectShimOptions {
  /** The remote server: a Streamable HTTP URL with headers (or, for tests, a stdio command). */
  remote: UpstreamServerConfig;
  /** Local folders whose files may be sent (symlinks out of them are refused). @default none: no local paths */
  allowDirs?: string[];
  /** Where remote outputs are saved. @default "./mcp-downloads" */
  outputDir?: string;
  /** Largest file sent or saved, in bytes. @default 104857600 (100 MiB) */
  maxBytes?: number;
  /** Most remote outputs one result saves; the rest are skipped (the result says how many). @default 20 */
  maxOutputs?: number;
  /** Most bytes one result saves in all. @default 4 × maxBytes */
  maxOutputBytes?: number;
  /**
   * File arguments by tool name, on top of those marked with `x-mcp-file`. Only in these may a bare
   * name (`notes.txt`) mean a local file; in a remote-marked argument only an explicit path does
   * (`./notes.txt`, `~/…`, absolute). @default {}
   */
  fileArgs?: Record<string, string[]>;
  /** Longest a remote call may take (reset by progress). @default "10m" */
  callTimeout?: Duration;
  /** The remote's upload tool. @default "get_upload_url" */
  uploadTool?: string;
  /** Log lines (to stderr in the CLI). @default none */
  log?: (line: string) => void;
  /**
   * The MCP SDK generation serving the desktop client over stdio (v2 answers 2026-07-28 and
   * 2025 clients alike). @default v1 when installed, else v2
   */
  sdk?: SdkGeneration;
}

/**
 * A started shim; see {@link createConnectShim}.
 *
 * @example
 * ```ts
 * const shim = await createConnectShim(options);
 * const { closed } = await shim.serveStdio();
 * await closed;
 * ```
 */
export interface ConnectShim {
  readonly core: ProxyCore;
  /** The MCP SDK generation serving the desktop client. */
  readonly sdk: SdkGeneration;
  /** Makes the downstream MCP server (the low-level `Server` of the SDK in `sdk`). */
  createServer(): ProxyServer;
  /** Serves it over this process's stdin/stdout. */
  serveStdio(): Promise<{ closed: Promise<void> }>;
  close(): Promise<void>;
}

/**
 * Starts the shim in front of a remote server.
 *
 * @example
 * ```ts
 * import { createConnectShim } from "mcp-file-bridge/proxy";
 *
 * const shim = await createConnectShim({
 *   remote: { url: "https://mcp.example.com/mcp" },
 *   allowDirs: [process.env.HOME + "/Documents"],
 *   outputDir: process.env.HOME + "/Downloads/mcp",
 * });
 * await shim.serveStdio();
 * ```
 */
export async function createConnectShim(options: ConnectShimOptions): Promise<ConnectShim> {
  const log = options.log ?? (() => {});
  const generation = await loadProxySdk(options.sdk, "connect");
  const maxBytes = options.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES;
  const home = (path: string) =>
    path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
  const outputDir = resolve(home(options.outputDir ?? "mcp-downloads"));
  await mkdir(outputDir, { recursive: true, mode: 0o700 });
  const allowed = await confinedFolders((options.allowDirs ?? []).map(home));
  // A downloaded file must not be re-uploadable by name: the output folder may not sit in an
  // allowed folder (issue 21, part 2).
  const realOutput = await realpath(outputDir);
  const holding = allowed.real.find((dir) => isInside(dir, realOutput));
  if (holding !== undefined) {
    throw new FileBridgeError(
      "INVALID_OPTION",
      `the output folder ${outputDir} is inside the allowed folder ${holding}: a file the remote sends could then be sent back by name. Choose an output folder outside every --allow-dir`,
      { data: { option: "outputDir" } },
    );
  }
  const uploadToolName = options.uploadTool ?? "get_upload_url";
  const remote = options.remote;
  const origin = "url" in remote ? new URL(remote.url).origin : "http://127.0.0.1";
  const headers = "url" in remote ? { ...(remote.headers ?? {}) } : {};
  const callTimeoutMs = durationToMs(options.callTimeout ?? "10m", "callTimeout");
  let core: ProxyCore | undefined;
  let remoteUploadTool = false;
  const port = generation.upstream({
    name: "remote",
    target: remote,
    timeoutMs: callTimeoutMs,
    stderr: "ignore",
    onNotification: (method, params) => core?.onUpstreamNotification(port, method, params),
    onError: (error) => log(`remote: ${error.message}`),
  });
  const downloads = remoteDownloads({
    outputDir,
    maxBytes,
    maxOutputs: options.maxOutputs ?? DEFAULT_MAX_OUTPUTS,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_OUTPUT_BYTES_FACTOR * maxBytes,
    origin,
    headers,
  });
  core = new ProxyCore({
    upstreams: [
      {
        port,
        adaptersFor: (tool: JsonObject) => {
          const name = String(tool.name);
          if (name === uploadToolName) remoteUploadTool = true;
          const paths = [
            ...new Set([...markedFileArgs(tool.inputSchema), ...(options.fileArgs?.[name] ?? [])]),
          ];
          const adapters: ToolAdapter[] = [];
          if (paths.length > 0 && name !== uploadToolName) {
            adapters.push(
              localUploads(paths, {
                allowed,
                maxBytes,
                origin,
                headers,
                uploadTool: () => (remoteUploadTool ? uploadToolName : undefined),
                userArgs: options.fileArgs?.[name] ?? [],
              }),
            );
          }
          adapters.push(downloads);
          return adapters;
        },
      },
    ],
    callTimeoutMs,
    log,
  });
  const shimCore = core;
  try {
    await port.connect();
    log(`connected to ${"url" in remote ? remote.url : remote.command}`);
  } catch (error) {
    log(`${(error as Error).message} (retried on the next call)`);
  }
  const caps = port.capabilities ?? {};
  const downstream = generation.bind(shimCore, {
    name: "mcp-file-bridge-connect",
    version: "0.1.0",
    prompts: caps.prompts !== undefined,
    logging: caps.logging !== undefined,
    completions: caps.completions !== undefined,
  });
  return {
    core: shimCore,
    sdk: downstream.sdk,
    createServer: () => downstream.createServer(),
    serveStdio: () => downstream.serveStdio(),
    async close() {
      await shimCore.drain(10_000);
      await shimCore.close();
    },
  };
}
