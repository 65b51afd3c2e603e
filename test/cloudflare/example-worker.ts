/**
 * Runs examples/cloudflare-worker in workerd through miniflare (the repo's dev dependency), with
 * local R2 and Durable Objects. The example's own dependencies (`agents`, the MCP SDK it pins) are
 * installed from npm once into a folder under the OS temp folder (kept between runs, like the client
 * CLIs of test/clients; `MCP_FILE_BRIDGE_CLIENTS_DIR` moves it), never into the project's
 * node_modules. The Worker is bundled with esbuild the way wrangler would (ESM, `node:*` left to
 * `nodejs_compat`, `sharp` aliased away), with `mcp-file-bridge` taken from this repo's `src/`.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build, type Plugin } from "esbuild";
import { Miniflare } from "miniflare";
import { run } from "../clients/support/cli.js";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "./workerd.js";

const repoRoot = resolve(import.meta.dirname, "..", "..");
export const EXAMPLE_DIR = join(repoRoot, "examples", "cloudflare-worker");

/** The example's runtime dependencies as its package.json pins them (`mcp-file-bridge` is this repo). */
function exampleDependencies(): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(EXAMPLE_DIR, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const { "mcp-file-bridge": _self, ...rest } = manifest.dependencies;
  return rest;
}

/** Where the example's dependencies are, or why they could not be installed. */
export interface InstalledDependencies {
  /** The folder whose node_modules holds them. */
  dir?: string;
  /** Set only when the npm registry could not be reached. */
  skip?: string;
}

/**
 * Installs the example's dependencies (once per set of versions). An install that fails because
 * the registry cannot be reached is reported as `skip` (as the client CLIs are); any other failure
 * throws with npm's output.
 */
export async function installExampleDependencies(): Promise<InstalledDependencies> {
  const deps = exampleDependencies();
  const specs = Object.entries(deps).map(([name, version]) => `${name}@${version}`);
  const key = createHash("sha256").update(specs.sort().join(" ")).digest("hex").slice(0, 12);
  const root = resolve(process.env.MCP_FILE_BRIDGE_CLIENTS_DIR ?? join(tmpdir(), "mcp-file-bridge-clients"));
  const prefix = join(root, `cloudflare-worker-example-${key}`);
  if (
    specs.every((spec) =>
      existsSync(join(prefix, "node_modules", spec.slice(0, spec.lastIndexOf("@")), "package.json")),
    )
  )
    return { dir: prefix };
  await mkdir(prefix, { recursive: true });
  await writeFile(join(prefix, "package.json"), '{ "private": true }\n');
  const { NODE_OPTIONS: _, ...env } = process.env;
  const exit = await run("npm", ["install", "--no-audit", "--no-fund", "--no-save", ...specs], {
    cwd: prefix,
    env,
    timeoutMs: 600_000,
  });
  const output = `${exit.stdout}\n${exit.stderr}`;
  if (exit.code === 0) return { dir: prefix };
  if (/E(AI_AGAIN|NOTFOUND|CONNREFUSED|CONNRESET|TIMEDOUT)|ETIMEDOUT|network/i.test(output)) {
    return { skip: `${specs.join(" ")} could not be installed: the npm registry is not reachable` };
  }
  throw new Error(`npm install ${specs.join(" ")} failed (exit ${exit.code}):\n${output.slice(-4000)}`);
}

/**
 * esbuild resolution of the example: `mcp-file-bridge` from this repo's sources, `agents` and the
 * MCP SDK from the installed folder, one zod (the repo's, the version the example pins) for all.
 */
function examplePlugin(installed: string): Plugin {
  return {
    name: "cloudflare-worker-example",
    setup(b) {
      b.onResolve({ filter: /^mcp-file-bridge(\/cloudflare)?$/ }, (args) => ({
        path: join(repoRoot, "src", args.path.endsWith("/cloudflare") ? "cloudflare/index.ts" : "index.ts"),
      }));
      // What wrangler does for `nodejs_compat`: a CommonJS `require("node:stream")` (busboy's) becomes
      // a module that imports the built-in, since an ESM Worker has no `require`.
      b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) =>
        args.kind === "require-call" && (args.path.startsWith("node:") || builtinModules.includes(args.path))
          ? { path: args.path, namespace: "node-require" }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: "node-require" }, (args) => ({
        contents: `import builtin from ${JSON.stringify(args.path.startsWith("node:") ? args.path : `node:${args.path}`)}; module.exports = builtin;`,
        loader: "js",
      }));
      b.onResolve({ filter: /^sharp$/ }, () => ({ path: join(EXAMPLE_DIR, "src", "no-sharp.ts") }));
      b.onResolve(
        { filter: /^(agents|@modelcontextprotocol\/(?:sdk|server|client|core)|zod)(\/|$)/ },
        async (args) => {
          if (args.pluginData === "redirected") return undefined;
          const resolveDir = args.path.startsWith("zod") ? repoRoot : installed;
          const found = await b.resolve(args.path, { kind: args.kind, resolveDir, pluginData: "redirected" });
          return found.errors.length > 0 ? { errors: found.errors } : { path: found.path };
        },
      );
    },
  };
}

/** The example Worker bundled for workerd. */
export async function bundleExample(installed: string): Promise<string> {
  const result = await build({
    entryPoints: [join(EXAMPLE_DIR, "src", "worker.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    external: ["node:*", "cloudflare:*", ...builtinModules],
    plugins: [examplePlugin(installed)],
    logLevel: "silent",
  });
  return (result.outputFiles[0] as { text: string }).text;
}

/** The example running in workerd. */
export interface ExampleWorker {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  mf: Miniflare;
  dispose(): Promise<void>;
}

/**
 * Starts the example in workerd on 127.0.0.1 (port 0) with local R2 and Durable Objects, the
 * bindings its wrangler.jsonc declares, and the given secrets.
 */
export async function startExampleWorker(
  script: string,
  secrets: { SIGNING_SECRET: string; USER_TOKENS: string },
): Promise<ExampleWorker> {
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    host: "127.0.0.1",
    port: 0,
    r2Buckets: ["FILES"],
    durableObjects: {
      MCP_OBJECT: { className: "FilesAgent", useSQLite: true },
      STATE: { className: "FileBridgeStateObject", useSQLite: true },
    },
    bindings: secrets,
  });
  const url = await mf.ready;
  return { origin: url.origin, mf, dispose: () => mf.dispose() };
}
