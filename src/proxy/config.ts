/**
 * The proxy's config file: upstreams in the `mcpServers` shape MCP clients already use, and our
 * additions beside it (`proxy`, `servers`, `connect`). JSON or YAML, validated with zod; every error
 * names the bad key (`servers.files.tools.convert.upload.args[0]: …`).
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, extname, isAbsolute, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import * as z from "zod/v4";
import { FileBridgeError } from "../errors/file-bridge-error.js";

/** The message of a union none of whose branches fits: what is expected, with an example. */
const unionError = (expected: string) => ({
  error: (issue: { code?: string }) => (issue.code === "invalid_union" ? expected : undefined),
});

const duration = z.union(
  [
    z.number().nonnegative(),
    z.string().regex(/^\d+(?:\.\d+)?(?:ms|s|m|h|d)$/, 'a duration like "90s", "5m", "1h" or seconds'),
  ],
  unionError('a duration like "90s", "5m", "1h", or a number of seconds'),
);
const positiveInt = z.number().int().positive();
const nonEmpty = z.string().min(1);
const fieldPath = z
  .string()
  .regex(
    /^[A-Za-z0-9_$-]+(?:\[\])?(?:\.[A-Za-z0-9_$-]+(?:\[\])?)*$/,
    'a field path like "file", "files[]" or "input.doc"',
  );

/** A stdio upstream, as in a client's `mcpServers`. */
const stdioServer = z.strictObject({
  type: z.literal("stdio").optional(),
  command: nonEmpty,
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: nonEmpty.optional(),
});

/** A Streamable HTTP upstream, as in a client's `mcpServers`. */
const httpServer = z.strictObject({
  type: z.enum(["http", "streamable-http", "streamableHttp"]).optional(),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
});

/** What an `mcpServers` entry with neither `command` nor `url` is told. */
export const UPSTREAM_ENTRY_HELP =
  'needs "command" (a stdio server, e.g. {"command": "npx", "args": ["-y", "some-mcp-server"]}) ' +
  'or "url" (a Streamable HTTP server, e.g. {"url": "https://mcp.example.com/mcp"})';

const upstreamServer = z.union([stdioServer, httpServer], unionError(UPSTREAM_ENTRY_HELP));

const uploadRule = z.strictObject({
  /** Argument paths that take a file. */
  args: z.array(fieldPath).min(1),
  /** What the upstream gets in place of each file. */
  as: z.enum(["path", "base64", "data_url"]).default("path"),
  /**
   * Values the upstream itself understands that still reach it unchanged: `relative-paths` passes a
   * plain relative path (no scheme, no `..`, not absolute) as it is, for the upstream to read inside
   * its own folder. Off by default: every value is a file the proxy resolves.
   */
  passThrough: z.enum(["relative-paths"]).optional(),
});

/** A top-level argument name the proxy fills. */
const argName = z.string().regex(/^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/, "an argument name");

const artifactRule = z.discriminatedUnion(
  "locator",
  [
    z.strictObject({
      locator: z.literal("regex"),
      pattern: nonEmpty.refine((source) => {
        try {
          new RegExp(source);
          return true;
        } catch {
          return false;
        }
      }, "an invalid regular expression"),
      /**
       * Folder that relative paths the tool names are relative to (absolute, or relative to the config
       * file). Without it a relative path is refused. Paths must still be inside an output folder.
       */
      relativeTo: nonEmpty.optional(),
      /**
       * The argument the proxy fills with a fresh folder of the call's own (inside the first output
       * folder; hidden from callers). Only files in it are captured, relative paths are relative to
       * it, and it is removed after the call: concurrent callers cannot capture each other's files.
       */
      outputDirArg: argName.optional(),
    }),
    z.strictObject({
      locator: z.literal("structured"),
      pointer: z.union(
        [nonEmpty, z.array(nonEmpty).min(1)],
        unionError('a JSON pointer like "/file" or a list of them, e.g. ["/result/path"]'),
      ),
      /**
       * Folder that relative paths the tool names are relative to (absolute, or relative to the config
       * file). Without it a relative path is refused. Paths must still be inside an output folder.
       */
      relativeTo: nonEmpty.optional(),
      /**
       * The argument the proxy fills with a fresh folder of the call's own (inside the first output
       * folder; hidden from callers). Only files in it are captured, relative paths are relative to
       * it, and it is removed after the call: concurrent callers cannot capture each other's files.
       */
      outputDirArg: argName.optional(),
    }),
    z.strictObject({ locator: z.literal("embedded") }),
    z.strictObject({
      locator: z.literal("none"),
      /** The argument the proxy fills with a path inside an output folder. */
      outputArg: argName,
      /** File name used when the caller gave none. */
      outputName: nonEmpty.optional(),
    }),
  ],
  unionError(
    'needs "locator": "regex" (with "pattern"), "structured" (with "pointer"), "embedded", or "none" (with "outputArg")',
  ),
);

/**
 * How the tool's image outputs reach the model (docs/uploads-and-artifacts.md): `false` only links
 * them; an object sets this tool's image budget and requires `sharp`. Unset: shaped with the
 * default budget when `sharp` is installed.
 */
const imagesRule = z.union(
  [
    z.literal(false),
    z.strictObject({
      maxEdge: positiveInt.optional(),
      maxBytes: positiveInt.optional(),
      inline: z.enum(["shaped", "original-only"]).optional(),
      animated: z.enum(["first-frame", "link"]).optional(),
      svg: z.enum(["rasterize", "link"]).optional(),
      maxInputPixels: positiveInt.optional(),
    }),
  ],
  unionError("false, or { maxEdge, maxBytes, inline, animated, svg, maxInputPixels }"),
);

const toolRule = z.strictObject({
  upload: uploadRule.optional(),
  artifacts: artifactRule.optional(),
  images: imagesRule.optional(),
});

const serverRules = z.strictObject({
  /** Prefix for this upstream's tool and prompt names downstream, e.g. `"fs_"`. */
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{0,32}$/, "letters, digits, _ . - (at most 32)")
    .optional(),
  /** Folder the upstream can read, where upload consumers' files are put. */
  handoffDir: nonEmpty.optional(),
  /** Folders the upstream writes outputs to; paths it names must be inside one of them. */
  outputDirs: z.array(nonEmpty).optional(),
  tools: z.record(z.string(), toolRule).optional(),
});

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name");

const gatewayOptions = z.strictObject({
  /**
   * The MCP SDK generation of the downstream server: `"v1"` (`@modelcontextprotocol/sdk`, 2025-11-25
   * with sessions) or `"v2"` (`@modelcontextprotocol/server`: 2026-07-28 stateless, and 2025
   * clients on sessions beside it). Default: v1 when installed, else v2.
   */
  sdk: z.enum(["v1", "v2"]).optional(),
  /**
   * Who may call over HTTP. `tokensEnv` names an environment variable of bearer tokens and the user
   * each stands for (`alice:token1,bob:token2`); a caller's files are then its user's (the scope).
   * Stateless (2026-07-28) callers need this to use files.
   */
  auth: z.strictObject({ tokensEnv: envName }).optional(),
  /**
   * Host names the HTTP endpoint answers to (the DNS-rebinding guard). Default: localhost names on a
   * loopback bind; not checked on any other bind unless given.
   */
  allowedHosts: z.array(nonEmpty).min(1).optional(),
  /**
   * Relay the upstreams' log messages to HTTP clients. An upstream's log is about every caller's
   * calls, so it is off by default over HTTP (stdio has one client and always gets it).
   */
  relayUpstreamLogs: z.boolean().optional(),
  /** Path of the MCP endpoint. */
  mount: z
    .string()
    .regex(/^\/[A-Za-z0-9_./-]*$/, 'a path starting with "/"')
    .optional(),
  host: nonEmpty.optional(),
  port: z.number().int().min(0).max(65535).optional(),
  /** Public URL of this gateway (for signed links), e.g. behind a reverse proxy. */
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** Environment variable holding the signing secret (at least 32 bytes). */
  secretEnv: envName.optional(),
  /**
   * Start the CLI even when an upstream cannot be reached at start-up (calls retry it, `/healthz` is
   * 503 until it answers). Without it, `mcp-file-bridge proxy` exits 1 naming the upstream.
   */
  waitForUpstreams: z.boolean().optional(),
  storage: z.strictObject({ dir: nonEmpty.optional() }).optional(),
  limits: z
    .strictObject({
      maxBytes: positiveInt.optional(),
      maxFiles: positiveInt.optional(),
      artifactMaxBytes: positiveInt.optional(),
      callTimeout: duration.optional(),
      /** How long an upstream may take to answer `initialize` (default 60s; it is named in the log after 5s). */
      initializeTimeout: duration.optional(),
      /** SDK v2: `subscriptions/listen` streams one user may hold open. */
      listenStreams: positiveInt.optional(),
      /** 2025-era MCP sessions one verified user may hold open (429 past it). */
      sessionsPerUser: positiveInt.optional(),
      /** 2025-era MCP sessions all anonymous callers together may hold open (429 past it). */
      anonymousSessions: positiveInt.optional(),
      /** A session with no request or stream in progress for this long is closed. */
      sessionIdle: duration.optional(),
    })
    .optional(),
  ttl: z
    .strictObject({
      uploads: duration.optional(),
      uploadUrls: duration.optional(),
      artifacts: duration.optional(),
      downloadUrls: duration.optional(),
    })
    .optional(),
});

const connectOptions = z.strictObject({
  /** Local folders whose files may be sent to the remote. */
  allowDirs: z.array(nonEmpty).optional(),
  /** Local folder remote outputs are saved to. */
  outputDir: nonEmpty.optional(),
  /** Largest file sent or saved, in bytes. */
  maxBytes: positiveInt.optional(),
  /** File arguments by tool name, on top of those the remote marks with `x-mcp-file`. */
  fileArgs: z.record(z.string(), z.array(fieldPath).min(1)).optional(),
  callTimeout: duration.optional(),
});

/** The zod schema of a proxy config file. */
export const proxyConfigSchema = z
  .strictObject({
    mcpServers: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "a server name"), upstreamServer),
    proxy: gatewayOptions.optional(),
    servers: z.record(z.string(), serverRules).optional(),
    connect: connectOptions.optional(),
  })
  .superRefine((config, ctx) => {
    const names = Object.keys(config.mcpServers);
    if (names.length === 0) {
      ctx.addIssue({ code: "custom", path: ["mcpServers"], message: "lists no server" });
    }
    for (const name of Object.keys(config.servers ?? {})) {
      if (!names.includes(name)) {
        ctx.addIssue({
          code: "custom",
          path: ["servers", name],
          message: `names no server of mcpServers (${names.join(", ")})`,
        });
      }
    }
    for (const [name, rules] of Object.entries(config.servers ?? {})) {
      for (const [tool, rule] of Object.entries(rules.tools ?? {})) {
        if (rule.upload?.as === "path" && !rules.handoffDir) {
          ctx.addIssue({
            code: "custom",
            path: ["servers", name, "handoffDir"],
            message: `is required: tool ${tool} hands files over as paths`,
          });
        }
        const artifacts = rule.artifacts;
        if (artifacts && "outputDirArg" in artifacts && artifacts.outputDirArg && artifacts.relativeTo) {
          ctx.addIssue({
            code: "custom",
            path: ["servers", name, "tools", tool, "artifacts", "relativeTo"],
            message:
              "cannot be combined with outputDirArg: relative paths are relative to the call's own folder",
          });
        }
        const locator = artifacts?.locator;
        if (
          (locator === "regex" || locator === "structured" || locator === "none") &&
          !rules.outputDirs?.length
        ) {
          ctx.addIssue({
            code: "custom",
            path: ["servers", name, "outputDirs"],
            message: `is required: tool ${tool} finds its outputs as paths`,
          });
        }
      }
    }
  });

/**
 * A parsed proxy config file.
 *
 * @example
 * ```ts
 * const config: ProxyConfig = {
 *   mcpServers: { files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] } },
 *   servers: { files: { handoffDir: "/srv/inbox", tools: { read_text_file: { upload: { args: ["path"] } } } } },
 * };
 * ```
 */
export type ProxyConfig = z.output<typeof proxyConfigSchema>;
/**
 * One upstream of a proxy config (`mcpServers.<name>`).
 *
 * @example
 * ```ts
 * const upstream: UpstreamServerConfig = { url: "https://mcp.example.com/mcp", headers: { authorization: "Bearer …" } };
 * ```
 */
export type UpstreamServerConfig = z.output<typeof upstreamServer>;
/**
 * The rules of one upstream (`servers.<name>`).
 *
 * @example
 * ```ts
 * const rules: ServerRules = { prefix: "fs_", outputDirs: ["/srv/out"], tools: {} };
 * ```
 */
export type ServerRules = z.output<typeof serverRules>;
/**
 * The rules of one tool: which arguments take files, and how its outputs are found.
 *
 * @example
 * ```ts
 * const rule: ToolRule = { artifacts: { locator: "regex", pattern: "Saved to (?<path>\\S+)" } };
 * ```
 */
export type ToolRule = z.output<typeof toolRule>;
/**
 * How an artifact producer's outputs are found.
 *
 * @example
 * ```ts
 * const rule: ArtifactRule = { locator: "structured", pointer: "/output/path" };
 * ```
 */
export type ArtifactRule = z.output<typeof artifactRule>;
/**
 * Options of the `connect` shim in a config file.
 *
 * @example
 * ```ts
 * const connect: ConnectConfig = { allowDirs: ["~/Documents"], outputDir: "~/Downloads/mcp" };
 * ```
 */
export type ConnectConfig = z.output<typeof connectOptions>;

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out || "(root)";
}

/**
 * Validates a config object. Throws `INVALID_OPTION` whose message lists every problem, each led by
 * the bad key (`data.issues` holds them as `{ key, message }`).
 *
 * @example
 * ```ts
 * const config = parseProxyConfig(JSON.parse(text));
 * ```
 */
export function parseProxyConfig(input: unknown, source = "config"): ProxyConfig {
  const parsed = proxyConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => {
    const keys = issue.code === "unrecognized_keys" ? (issue.keys ?? []) : [];
    const base = formatPath(issue.path);
    if (keys.length > 0) {
      const key = keys.map((k) => (base === "(root)" ? k : `${base}.${k}`)).join(", ");
      return { key, message: "unknown key" };
    }
    return { key: base, message: issue.message };
  });
  throw new FileBridgeError(
    "INVALID_OPTION",
    `${source} is invalid:\n${issues.map(({ key, message }) => `  ${key}: ${message}`).join("\n")}`,
    { data: { issues } },
  );
}

/** The tool rules with each artifacts rule's `relativeTo` made absolute. */
function absoluteTools(
  tools: Record<string, ToolRule>,
  abs: (path: string) => string,
): Record<string, ToolRule> {
  const out: Record<string, ToolRule> = {};
  for (const [name, rule] of Object.entries(tools)) {
    const artifacts = rule.artifacts;
    out[name] =
      artifacts && "relativeTo" in artifacts && artifacts.relativeTo
        ? { ...rule, artifacts: { ...artifacts, relativeTo: abs(artifacts.relativeTo) } }
        : rule;
  }
  return out;
}

/** Makes the folders of a config absolute, relative to the config file's folder. */
function absolutize(config: ProxyConfig, base: string): ProxyConfig {
  const abs = (path: string) => {
    if (path === "~" || path.startsWith("~/")) return join(homedir(), path.slice(1));
    return isAbsolute(path) ? path : resolve(base, path);
  };
  const servers: NonNullable<ProxyConfig["servers"]> = {};
  for (const [name, rules] of Object.entries(config.servers ?? {})) {
    servers[name] = {
      ...rules,
      ...(rules.handoffDir ? { handoffDir: abs(rules.handoffDir) } : {}),
      ...(rules.outputDirs ? { outputDirs: rules.outputDirs.map(abs) } : {}),
      ...(rules.tools ? { tools: absoluteTools(rules.tools, abs) } : {}),
    };
  }
  const storageDir = config.proxy?.storage?.dir;
  const mcpServers: ProxyConfig["mcpServers"] = {};
  for (const [name, server] of Object.entries(config.mcpServers)) {
    mcpServers[name] = "command" in server && server.cwd ? { ...server, cwd: abs(server.cwd) } : server;
  }
  return {
    ...config,
    mcpServers,
    ...(config.servers ? { servers } : {}),
    ...(config.proxy
      ? { proxy: { ...config.proxy, ...(storageDir ? { storage: { dir: abs(storageDir) } } : {}) } }
      : {}),
    ...(config.connect
      ? {
          connect: {
            ...config.connect,
            ...(config.connect.allowDirs ? { allowDirs: config.connect.allowDirs.map(abs) } : {}),
            ...(config.connect.outputDir ? { outputDir: abs(config.connect.outputDir) } : {}),
          },
        }
      : {}),
  };
}

/**
 * Reads and validates a config file: `.yaml`/`.yml` as YAML, anything else as JSON. Relative
 * folders in it (including a stdio server's `cwd`) are taken relative to the file's folder; `~/` is
 * the home folder.
 *
 * @example
 * ```ts
 * const config = await loadProxyConfig("./proxy.yaml");
 * const proxy = await createFileProxy({ config });
 * ```
 */
export async function loadProxyConfig(file: string): Promise<ProxyConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (cause) {
    throw new FileBridgeError("INVALID_OPTION", `cannot read the config file ${file}`, { cause });
  }
  const yaml = [".yaml", ".yml"].includes(extname(file).toLowerCase());
  let raw: unknown;
  try {
    raw = yaml ? parseYaml(text) : JSON.parse(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new FileBridgeError("INVALID_OPTION", `${file} is not valid ${yaml ? "YAML" : "JSON"}: ${detail}`, {
      cause,
    });
  }
  return absolutize(parseProxyConfig(raw, file), dirname(resolve(file)));
}
