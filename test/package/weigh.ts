/**
 * Weighs a packed `mcp-file-bridge` as a user meets it (issue 39): what a server bundle grows by,
 * which heavy packages a bundle reaches, and what `npm install` of the tarball adds to a project.
 * Used by `budgets.test.ts`; `npx tsx test/package/weigh.ts <package dir>` prints the same figures
 * for any built checkout (how the "before" column of the issue was measured).
 */
import { execFile } from "node:child_process";
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";

const run = promisify(execFile);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Packages that must not reach a bundle of the core (the list). */
export const HEAVY = [
  "@fastify/busboy",
  "busboy",
  "yaml",
  "@aws-sdk/",
  "@smithy/",
  "ioredis",
  "@modelcontextprotocol/ext-apps",
  "async-mutex",
  "jose",
  "mime-db",
] as const;

/** The SDK v1 stdio server of the README quick start, without and with `FileBridge`. */
export const SERVER_WITHOUT = `
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import * as z from "zod/v4";
const server = new McpServer({ name: "word-counter", version: "1.0.0" });
server.registerTool("count_words", { description: "Counts.", inputSchema: { file: z.string() } },
  async ({ file }) => ({ content: [{ type: "text", text: String(file.length) }] }));
await server.connect(new StdioServerTransport());
`;

export const SERVER_WITH = `
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { readFile } from "node:fs/promises";
import { FileBridge } from "mcp-file-bridge";
const server = new McpServer({ name: "word-counter", version: "1.0.0" });
const bridge = new FileBridge({ roots: [process.cwd()] });
server.registerTool("count_words", { description: "Counts.", inputSchema: { file: bridge.fileInput() } },
  bridge.withFiles(async ({ file }) => {
    const words = (await readFile(file, "utf8")).split(/\\s+/).filter(Boolean).length;
    return { content: [{ type: "text", text: words + " words" }] };
  }, { fields: ["file"] }));
await server.connect(new StdioServerTransport());
`;

export const MINTER_ALONE = `
import { SignedUrlMinter } from "mcp-file-bridge";
const minter = new SignedUrlMinter({ secret: process.env.SECRET, baseUrl: "https://files.example.com" });
console.log(await minter.downloadUrl({ scope: "s", id: "f" }));
`;

/**
 * A project folder whose `node_modules` holds the package (`package.json` and `dist` copied from
 * `packageDir`), its own `dependencies`, and `peers` — linked from this repository's node_modules,
 * nothing else (so a bundle that needs an optional peer fails to resolve it).
 */
export async function bundleProject(packageDir: string, peers: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-weigh-"));
  const modules = join(dir, "node_modules");
  const own = join(modules, "mcp-file-bridge");
  await mkdir(own, { recursive: true });
  await cp(join(packageDir, "package.json"), join(own, "package.json"));
  await cp(join(packageDir, "dist"), join(own, "dist"), { recursive: true });
  const manifest = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const name of new Set([...Object.keys(manifest.dependencies ?? {}), ...peers])) {
    const target = join(modules, name);
    await mkdir(dirname(target), { recursive: true });
    await symlink(join(repoRoot, "node_modules", name), target, "dir");
  }
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  return dir;
}

export interface Bundle {
  /** Minified bytes. */
  bytes: number;
  /** Packages (`name` or `@scope/name`) whose files are in the bundle. */
  packages: string[];
  /** Bundle errors (an unresolved import), empty when it built. */
  errors: string[];
}

/** The packages `dist/lib/vendor/` holds bundled (tsup.config.ts), by file name. */
const VENDORED: Record<string, string> = { "busboy.cjs": "@fastify/busboy", "yaml.cjs": "yaml" };

function packageOf(input: string): string | undefined {
  const vendored = /\/dist\/lib\/vendor\/([^/]+)$/.exec(input)?.[1];
  if (vendored !== undefined) return VENDORED[vendored] ?? vendored;
  const at = input.lastIndexOf("node_modules/");
  if (at < 0) return undefined;
  const rest = input.slice(at + "node_modules/".length).split("/");
  return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
}

/** Bundles `code` in `dir` as a user's server would be (esbuild, minified, tree-shaken, Node ESM). */
export async function bundle(dir: string, code: string, external: string[] = []): Promise<Bundle> {
  try {
    const result = await build({
      stdin: { contents: code, resolveDir: dir, loader: "ts", sourcefile: "server.ts" },
      bundle: true,
      minify: true,
      treeShaking: true,
      platform: "node",
      format: "esm",
      target: "node20",
      write: false,
      outdir: "out",
      metafile: true,
      logLevel: "silent",
      external,
    });
    const packages = new Set<string>();
    // Only the files that put bytes into the output: esbuild also parses what it then shakes off.
    for (const output of Object.values(result.metafile.outputs)) {
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
        const name = bytesInOutput > 0 ? packageOf(input) : undefined;
        if (name) packages.add(name);
      }
    }
    return {
      bytes: result.outputFiles[0]?.contents.byteLength ?? 0,
      packages: [...packages].sort(),
      errors: [],
    };
  } catch (error) {
    const errors = (error as { errors?: Array<{ text: string }> }).errors?.map((e) => e.text) ?? [
      String(error),
    ];
    return { bytes: 0, packages: [], errors };
  }
}

/** Heavy packages among a bundle's. */
export function heavyIn(packages: readonly string[]): string[] {
  return packages.filter((name) =>
    HEAVY.some((heavy) => (heavy.endsWith("/") ? name.startsWith(heavy) : name === heavy)),
  );
}

/** Apparent bytes and package count of a `node_modules` tree. */
export async function weighModules(modules: string): Promise<{ bytes: number; packages: number }> {
  let bytes = 0;
  let packages = 0;
  const walk = async (dir: string, packageLevel: boolean): Promise<void> => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (packageLevel && entry.name.startsWith("@")) await walk(path, true);
        else if (packageLevel && entry.name !== ".bin" && !entry.name.startsWith(".")) {
          packages++;
          await walk(path, false);
        } else await walk(path, entry.name === "node_modules");
      } else bytes += (await lstat(path)).size;
    }
  };
  await walk(modules, true);
  return { bytes, packages };
}

export interface InstallWeight {
  /** Bytes and packages the tarball added to a project that already had SDK v1. */
  addedBytes: number;
  addedPackages: number;
  /** `EBADENGINE` lines npm printed installing the tarball, and those naming a package of ours. */
  ebadengine: string[];
}

/** Installs SDK v1 in a fresh `npm init -y` project, then the tarball, and weighs what it added. */
export async function weighInstall(tarball: string): Promise<InstallWeight> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-install-weight-"));
  const npm = (args: string[]) =>
    run("npm", args, {
      cwd: dir,
      timeout: 240_000,
      maxBuffer: 32 << 20,
      env: { ...process.env, npm_config_loglevel: "warn" },
    });
  try {
    await npm(["init", "-y"]);
    await npm(["install", "--no-audit", "--no-fund", "--prefer-offline", "@modelcontextprotocol/sdk@1.32.2"]);
    const before = await weighModules(join(dir, "node_modules"));
    const { stderr } = await npm(["install", "--no-audit", "--no-fund", "--prefer-offline", tarball]);
    const after = await weighModules(join(dir, "node_modules"));
    return {
      addedBytes: after.bytes - before.bytes,
      addedPackages: after.packages - before.packages,
      ebadengine: stderr.split("\n").filter((line) => line.includes("EBADENGINE")),
    };
  } finally {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** `npm pack` of `packageDir` into a temp folder; the tarball's path. */
export async function pack(packageDir = repoRoot, ignoreScripts = false): Promise<string> {
  const dest = await mkdtemp(join(tmpdir(), "mfb-pack-"));
  const args = ["pack", "--silent", "--pack-destination", dest];
  if (ignoreScripts) args.push("--ignore-scripts");
  const { stdout } = await run("npm", args, { cwd: packageDir, timeout: 300_000, maxBuffer: 16 << 20 });
  return join(dest, stdout.trim().split("\n").at(-1) as string);
}

/** Every figure, for a built package folder. */
export async function weighAll(packageDir: string, tarball: string) {
  const project = await bundleProject(packageDir, ["@modelcontextprotocol/sdk", "zod"]);
  try {
    const without = await bundle(project, SERVER_WITHOUT);
    const withBridge = await bundle(project, SERVER_WITH);
    const minter = await bundle(project, MINTER_ALONE);
    // What the bundles weigh when the unresolvable optional peers are left external (the "today"
    // figures of the issue were taken this way).
    const peersOut = ["@aws-sdk/*", "ioredis", "@modelcontextprotocol/ext-apps"];
    const withBridgeOut = await bundle(project, SERVER_WITH, peersOut);
    const minterOut = await bundle(project, MINTER_ALONE, peersOut);
    const install = await weighInstall(tarball);
    return { without, withBridge, minter, withBridgeOut, minterOut, install };
  } finally {
    await rm(project, { recursive: true, force: true, maxRetries: 3 });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const packageDir = process.argv[2] ?? repoRoot;
  const tarball = process.argv[3] ?? (await pack(packageDir, true));
  const w = await weighAll(packageDir, tarball);
  const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
  console.log(`SDK v1 stdio server alone: ${kb(w.without.bytes)} ${w.without.errors.join("; ")}`);
  console.log(
    `+ FileBridge: ${kb(w.withBridge.bytes)} (+${kb(w.withBridge.bytes - w.without.bytes)}) ${w.withBridge.errors.join("; ")}`,
  );
  console.log(`  heavy packages reached: ${heavyIn(w.withBridge.packages).join(", ") || "none"}`);
  console.log(`  packages: ${w.withBridge.packages.join(", ")}`);
  console.log(`SignedUrlMinter alone: ${kb(w.minter.bytes)} ${w.minter.errors.join("; ")}`);
  console.log(`  heavy: ${heavyIn(w.minter.packages).join(", ") || "none"}`);
  console.log(
    `with optional peers external: + FileBridge +${kb(w.withBridgeOut.bytes - w.without.bytes)} (heavy: ${heavyIn(w.withBridgeOut.packages).join(", ") || "none"}); SignedUrlMinter ${kb(w.minterOut.bytes)} (heavy: ${heavyIn(w.minterOut.packages).join(", ") || "none"})`,
  );
  console.log(
    `install over SDK v1: +${(w.install.addedBytes / 2 ** 20).toFixed(2)} MiB, +${w.install.addedPackages} packages, ${w.install.ebadengine.length} EBADENGINE lines`,
  );
}
