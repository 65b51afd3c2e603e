#!/usr/bin/env node
/**
 * The `mcp-file-bridge` command: `proxy` (a file-handling gateway in front of any MCP server) and
 * `connect` (a local stdio shim in front of a remote server). Logs go to stderr.
 */
import { parseArgs } from "node:util";
import { isFileBridgeError } from "../errors/file-bridge-error.js";
import {
  loadProxyConfig,
  type ProxyConfig,
  parseProxyConfig,
  type UpstreamServerConfig,
} from "../proxy/config.js";
import { createConnectShim } from "../proxy/connect-shim.js";
import { createFileProxy, type FileProxy, PER_SESSION_NOTE, perSessionUploads } from "../proxy/file-proxy.js";
import type { HealthReport } from "../proxy/health.js";
import { splitCommandLine } from "./command-line.js";

const VERSION = "0.1.0";

const MAIN_HELP = `mcp-file-bridge ${VERSION}: real file handling for MCP servers

Usage:
  mcp-file-bridge proxy   --config proxy.yaml            a file-handling gateway in front of MCP servers
  mcp-file-bridge proxy   --upstream-cmd "npx -y some-mcp-server /srv"
  mcp-file-bridge proxy   --upstream-url https://mcp.example.com/mcp
  mcp-file-bridge connect --url https://mcp.example.com/mcp --allow-dir ~/Documents
                                                         a local stdio shim for desktop clients

Run "mcp-file-bridge <command> --help" for the options of a command.
`;

const PROXY_HELP = `Usage: mcp-file-bridge proxy [options] [-- command args…]

Serves MCP over Streamable HTTP in front of one or more upstream MCP servers, with file handling:
upload consumers get files in the form the upstream needs, artifact producers' outputs come back as
links with signed download URLs, and get_upload_url + upload/download routes are added.

Options:
  -c, --config <file>        Config file (JSON or YAML): "mcpServers" (as in your MCP client's config)
                             plus "proxy", "servers" (per-tool rules). See docs/proxy.md.
      --upstream-cmd <cmd>   Zero-config: one stdio upstream, e.g. "npx -y @modelcontextprotocol/server-filesystem /srv".
                             Everything after "--" works too.
      --upstream-url <url>   Zero-config: one Streamable HTTP upstream.
  -H, --header <k: v>        Header for --upstream-url (repeatable), e.g. "Authorization: Bearer …".
      --host <host>          Interface to listen on (default 127.0.0.1, or proxy.host).
  -p, --port <port>          Port (default 0 = a free port, or proxy.port).
      --stdio                Also serve one MCP session over stdin/stdout (for clients that start it).
      --sdk <v1|v2>          MCP SDK serving clients (default: v1 when installed, else v2). v2 answers
                             2026-07-28 (stateless) clients and 2025 clients (sessions) alike.
      --auth-tokens-env <N>  Environment variable of "user:token" pairs (comma-separated): HTTP callers
                             send "Authorization: Bearer <token>"; their files are their user's.
                             Stateless (2026-07-28) callers need it to use files.
      --wait-for-upstreams   Start even when an upstream cannot be reached (proxy.waitForUpstreams);
                             without it, an unreachable upstream (a missing command) exits 1.
      --check                Connect, print the health report (JSON) and exit: 0 when healthy.
  -h, --help                 Show this help.

Endpoints: <mount> (default /mcp), /files/upload/…, /files/download/…, GET /healthz (503 when an
upstream is unreachable or a configured tool/argument does not exist upstream).
The signing secret comes from the variable named by proxy.secretEnv; without one, links only work
until the process exits.

Examples:
  mcp-file-bridge proxy --config proxy.yaml --port 8080
  mcp-file-bridge proxy --port 8080 -- npx -y @modelcontextprotocol/server-filesystem /srv/work
`;

const CONNECT_HELP = `Usage: mcp-file-bridge connect [options]

A local stdio MCP server in front of a remote Streamable HTTP server, for desktop clients (Claude
Desktop, Claude Code, Cursor). File arguments (marked x-mcp-file by the remote, or named with
--file-arg) may be local paths inside --allow-dir: the shim uploads them (through the remote's
get_upload_url when offered, else as a data: URL). Files the remote returns are saved into
--output-dir and their local paths added to the result.

Options:
  -c, --config <file>        Config file: "mcpServers" with one remote ({"url", "headers"}) plus "connect".
  -u, --url <url>            The remote MCP endpoint.
  -H, --header <k: v>        Header for the remote (repeatable), e.g. "Authorization: Bearer …".
  -a, --allow-dir <dir>      A local folder whose files may be sent (repeatable). Nothing else is readable.
  -o, --output-dir <dir>     Where remote outputs are saved (default ./mcp-downloads).
      --max-bytes <n>        Largest file sent or saved (default 104857600).
      --file-arg <tool=arg>  Treat an argument as a file argument (repeatable), e.g. convert=input_path.
      --sdk <v1|v2>          MCP SDK serving the desktop client (default: v1 when installed, else v2).
  -h, --help                 Show this help.

Claude Desktop (claude_desktop_config.json):
  { "mcpServers": { "remote-files": { "command": "npx", "args": ["-y", "mcp-file-bridge", "connect",
      "--url", "https://mcp.example.com/mcp", "--allow-dir", "/Users/me/Documents",
      "--output-dir", "/Users/me/Downloads/mcp"] } } }
`;

function log(line: string): void {
  process.stderr.write(`[mcp-file-bridge] ${line}\n`);
}

function headersFrom(values: string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values ?? []) {
    const colon = value.indexOf(":");
    if (colon <= 0)
      throw new UsageError(`--header must look like "Name: value", got ${JSON.stringify(value)}`);
    headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim();
  }
  return headers;
}

class UsageError extends Error {}

/** A start-up failure the person can fix: one line (or a few), no stack, and its exit code. */
class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** One line per upstream the proxy could not reach at start-up, naming the command when it is missing. */
function unreachableUpstreams(report: HealthReport, config: ProxyConfig): string | undefined {
  const lines = report.problems
    .filter((problem) => problem.code === "upstream_unreachable")
    .map(({ upstream, message }) => {
      const target = config.mcpServers[upstream];
      const missing = /spawn (.+) (ENOENT|EACCES)\b/.exec(message);
      if (missing && target && "command" in target) {
        const why = missing[2] === "ENOENT" ? "was not found" : "is not executable";
        return `upstream "${upstream}": the command ${JSON.stringify(target.command)} ${why}; install it or fix mcpServers.${upstream}.command`;
      }
      return `upstream "${upstream}": ${message}`;
    });
  if (lines.length === 0) return undefined;
  return `${lines.join("\n")}\n(to start anyway and retry on each call, set proxy.waitForUpstreams: true or pass --wait-for-upstreams)`;
}

/** EADDRINUSE / EACCES of `listen` as a sentence with the fix. */
function listenFailure(error: unknown, host: string, port: number | undefined): StartupError | undefined {
  const code = (error as { code?: unknown })?.code;
  const where = `${host}:${port ?? 0}`;
  if (code === "EADDRINUSE")
    return new StartupError(
      `port ${where} is already in use: choose another with --port <n> (or proxy.port), or --port 0 for a free one`,
      2,
    );
  if (code === "EACCES")
    return new StartupError(
      `may not listen on ${where}: use a port above 1023, or run with the right to bind it`,
      2,
    );
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND")
    return new StartupError(
      `cannot listen on ${host}: it is not an address of this machine; fix --host (or proxy.host)`,
      2,
    );
  return undefined;
}

/**
 * Resolves once the stdio client has gone: its end of stdin closed (`closed`), or stdout can no
 * longer be written (the client closed its end while keeping stdin open: `EPIPE`), so answers
 * would only pile up.
 */
async function clientGone(closed: Promise<void>): Promise<string> {
  const stdoutGone = new Promise<string>((resolve) => {
    process.stdout.once("error", (error: NodeJS.ErrnoException) => resolve(`stdout closed (${error.code})`));
  });
  return Promise.race([closed.then(() => "stdin closed"), stdoutGone]);
}

function onSignals(shutdown: (signal: string) => Promise<void>): void {
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (stopping) {
        log(`${signal} again: exiting now`);
        process.exit(1);
      }
      stopping = true;
      log(`${signal}: finishing calls in flight, then shutting down`);
      shutdown(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          log(`shutdown failed: ${String(error)}`);
          process.exit(1);
        },
      );
    });
  }
}

function sdkFrom(value: string | undefined): "v1" | "v2" | undefined {
  if (value === undefined) return undefined;
  if (value !== "v1" && value !== "v2")
    throw new UsageError(`--sdk takes v1 or v2, got ${JSON.stringify(value)}`);
  return value;
}

const PROXY_OPTIONS = {
  config: { type: "string", short: "c" },
  "upstream-cmd": { type: "string" },
  "upstream-url": { type: "string" },
  header: { type: "string", short: "H", multiple: true },
  host: { type: "string" },
  port: { type: "string", short: "p" },
  stdio: { type: "boolean" },
  check: { type: "boolean" },
  sdk: { type: "string" },
  "auth-tokens-env": { type: "string" },
  "wait-for-upstreams": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type ProxyArgs = ReturnType<typeof parseArgs<{ options: typeof PROXY_OPTIONS; allowPositionals: true }>>;

async function proxyCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: PROXY_OPTIONS });
  if (values.help) {
    process.stdout.write(PROXY_HELP);
    return;
  }
  const config = await proxyConfigFrom(values, positionals);
  const port = portFrom(values.port);
  const sdk = sdkFrom(values.sdk);
  const proxy = await createFileProxy({ config, log, upstreamStderr: "inherit", ...(sdk ? { sdk } : {}) });
  if (values.check) {
    const report = await proxy.health();
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (perSessionUploads(config, {})) log(PER_SESSION_NOTE);
    await proxy.close();
    process.exitCode = report.status === "ok" ? 0 : 1;
    return;
  }
  const url = await startProxy(proxy, config, values, port);
  onSignals(() => proxy.close());
  log(`health: ${url}/healthz`);
  if (values.stdio) {
    const { closed } = await proxy.serveStdio();
    log(`${await clientGone(closed)}: shutting down`);
    await proxy.close();
    process.exit(0);
  }
}

/** The proxy's configuration: from exactly one of --config, --upstream-cmd, --upstream-url or `--`. */
async function proxyConfigFrom(values: ProxyArgs["values"], positionals: string[]): Promise<ProxyConfig> {
  const sources = [
    values.config,
    values["upstream-cmd"],
    values["upstream-url"],
    positionals.length ? "--" : undefined,
  ];
  if (sources.filter(Boolean).length !== 1) {
    throw new UsageError(
      'give exactly one of --config, --upstream-cmd, --upstream-url or "-- command args…"',
    );
  }
  let config: ProxyConfig;
  if (values.config) config = await loadProxyConfig(values.config);
  else {
    let upstream: UpstreamServerConfig;
    if (values["upstream-url"])
      upstream = { url: values["upstream-url"], headers: headersFrom(values.header) };
    else {
      const words = values["upstream-cmd"] ? splitCommandLine(values["upstream-cmd"]) : positionals;
      if (words.length === 0) throw new UsageError("--upstream-cmd is empty");
      upstream = { command: words[0] as string, args: words.slice(1) };
    }
    config = parseProxyConfig({ mcpServers: { upstream } }, "the command line");
  }
  if (!values["auth-tokens-env"]) return config;
  return parseProxyConfig(
    { ...config, proxy: { ...config.proxy, auth: { tokensEnv: values["auth-tokens-env"] } } },
    "the command line",
  );
}

function portFrom(value: string | undefined): number | undefined {
  const port = value === undefined ? undefined : Number(value);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new UsageError(`--port must be 0–65535, got ${value}`);
  }
  return port;
}

/**
 * Checks the upstreams, then listens: its URL. An unreachable upstream (unless waiting for it is
 * configured) or a port in use closes the proxy first, so nothing is left behind.
 */
async function startProxy(
  proxy: FileProxy,
  config: ProxyConfig,
  values: ProxyArgs["values"],
  port: number | undefined,
): Promise<string> {
  try {
    const report = await proxy.health();
    const unreachable = unreachableUpstreams(report, config);
    if (unreachable && !values["wait-for-upstreams"] && !config.proxy?.waitForUpstreams) {
      throw new StartupError(unreachable, 1);
    }
    for (const problem of report.problems) log(`${problem.code}: ${problem.message}`);
    const host = values.host ?? config.proxy?.host ?? "127.0.0.1";
    try {
      const { url } = await proxy.listen({
        ...(values.host ? { host: values.host } : {}),
        ...(port !== undefined ? { port } : {}),
      });
      return url;
    } catch (error) {
      throw listenFailure(error, host, port ?? config.proxy?.port) ?? error;
    }
  } catch (error) {
    await proxy.close(); // nothing left behind: the temp folder and the upstream processes go
    throw error;
  }
}

async function connectCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: "string", short: "c" },
      url: { type: "string", short: "u" },
      header: { type: "string", short: "H", multiple: true },
      "allow-dir": { type: "string", short: "a", multiple: true },
      "output-dir": { type: "string", short: "o" },
      "max-bytes": { type: "string" },
      "file-arg": { type: "string", multiple: true },
      sdk: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(CONNECT_HELP);
    return;
  }
  if (Boolean(values.config) === Boolean(values.url))
    throw new UsageError("give exactly one of --config or --url");
  let remote: UpstreamServerConfig;
  let fromFile: ProxyConfig["connect"] = {};
  if (values.config) {
    const config = await loadProxyConfig(values.config);
    const entries = Object.values(config.mcpServers);
    if (entries.length !== 1)
      throw new UsageError(`${values.config}: connect takes exactly one server in mcpServers`);
    remote = entries[0] as UpstreamServerConfig;
    fromFile = config.connect ?? {};
  } else {
    remote = parseProxyConfig(
      { mcpServers: { remote: { url: values.url, headers: headersFrom(values.header) } } },
      "--url",
    ).mcpServers.remote as UpstreamServerConfig;
  }
  const fileArgs: Record<string, string[]> = { ...(fromFile.fileArgs ?? {}) };
  for (const entry of values["file-arg"] ?? []) {
    const [tool, arg] = entry.split("=", 2);
    if (!tool || !arg)
      throw new UsageError(`--file-arg must look like tool=argument, got ${JSON.stringify(entry)}`);
    fileArgs[tool] = [...(fileArgs[tool] ?? []), arg];
  }
  const maxBytes = values["max-bytes"] === undefined ? fromFile.maxBytes : Number(values["max-bytes"]);
  if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)) {
    throw new UsageError(`--max-bytes must be a positive integer, got ${values["max-bytes"]}`);
  }
  const allowDirs = [...(fromFile.allowDirs ?? []), ...(values["allow-dir"] ?? [])];
  if (allowDirs.length === 0) log("no --allow-dir: local paths are refused (files can still come back)");
  const shim = await createConnectShim({
    remote,
    allowDirs,
    ...((values["output-dir"] ?? fromFile.outputDir)
      ? { outputDir: (values["output-dir"] ?? fromFile.outputDir) as string }
      : {}),
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    fileArgs,
    ...(fromFile.callTimeout !== undefined ? { callTimeout: fromFile.callTimeout as never } : {}),
    ...(sdkFrom(values.sdk) ? { sdk: sdkFrom(values.sdk) as "v1" | "v2" } : {}),
    log,
  });
  onSignals(() => shim.close());
  const { closed } = await shim.serveStdio();
  log(`${await clientGone(closed)}: shutting down`);
  await shim.close();
  process.exit(0);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case "proxy":
      return await proxyCommand(rest);
    case "connect":
      return await connectCommand(rest);
    case "--version":
    case "-v":
      process.stdout.write(`${VERSION}\n`);
      return;
    case undefined:
    case "--help":
    case "-h":
    case "help":
      process.stdout.write(MAIN_HELP);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

// A client that has gone away (Gemini CLI exits before its MCP servers) leaves our stderr, and over
// stdio our stdout, a closed pipe: a write then fails with EPIPE, which must not end the process
// before its shutdown has removed the temp storage folder and stopped the upstreams. Logs are
// dropped; over stdio, stdout failing starts that shutdown (see `clientGone`).
for (const stream of [process.stderr, process.stdout]) stream.on("error", () => {});

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error as { code?: string })?.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    process.stderr.write(`mcp-file-bridge: ${(error as Error).message}\nRun "mcp-file-bridge --help".\n`);
    process.exit(2);
  }
  if (error instanceof StartupError) {
    process.stderr.write(`mcp-file-bridge: ${error.message}\n`);
    process.exit(error.exitCode);
  }
  if (isFileBridgeError(error, "INVALID_OPTION")) {
    process.stderr.write(`mcp-file-bridge: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `mcp-file-bridge: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
