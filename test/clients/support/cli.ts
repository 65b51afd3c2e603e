/**
 * Installing and running a real agent CLI for the client matrix. Each CLI is installed from npm at
 * its pinned version into its own prefix under the OS temp folder (kept between runs, so only the
 * first run downloads it; `MCP_FILE_BRIDGE_CLIENTS_DIR` moves that cache, e.g. to a CI cache
 * folder), never into the project's node_modules, so `npm install` of the project stays small.
 * Each run gets a fresh HOME, proxies pointing at a dead loopback port (only 127.0.0.1 is reachable)
 * and a fake model on 127.0.0.1.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

const repoRoot = join(here, "..", "..", "..");

/** Command line of a TypeScript MCP server: node running tsx's CLI, absolute paths, so any cwd works. */
export function tsxCommand(script: string): { command: string; args: string[] } {
  const tsx = join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs");
  return { command: process.execPath, args: [tsx, join(repoRoot, script)] };
}

/** Whether the `pandoc` binary runs here (the pandoc-converter example needs it). */
export const hasPandoc = spawnSync("pandoc", ["--version"], { stdio: "ignore" }).status === 0;

/** The pandoc-converter example's command line, and a call of its text conversion (Markdown → HTML). */
export const pandocConverter = {
  ...tsxCommand("examples/pandoc-converter/server.ts"),
  tool: "convert-contents-base64",
  input: {
    filename: "report.md",
    content_base64: Buffer.from("# Q3\n\nSales rose *twelve* percent.\n").toString("base64"),
    to: "html",
  },
};

/** The `mcp-file-bridge connect` shim's command line, in front of `url`, saving into `outputDir`. */
export function shimCommand(
  url: string,
  allowDir: string,
  outputDir: string,
): { command: string; args: string[] } {
  const { command, args } = tsxCommand("src/cli/main.ts");
  return {
    command,
    args: [...args, "connect", "--url", url, "--allow-dir", allowDir, "--output-dir", outputDir],
  };
}

/** The output server's command line (`test/clients/support/output-server.ts`). */
export function outputServerCommand(): { command: string; args: string[] } {
  return tsxCommand("test/clients/support/output-server.ts");
}

export interface Installed {
  /** Absolute path of the CLI's executable, or undefined when it could not be installed. */
  bin?: string;
  /** Why it is not installed (the registry was not reachable, …). */
  skip?: string;
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (killed after `timeoutMs`), collecting its output. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/**
 * Installs `pkg@version` (once) and returns the path of its `bin`. A failed install is reported as
 * `skip` only when the registry cannot be reached; any other failure throws.
 */
export async function installCli(pkg: string, version: string, bin: string): Promise<Installed> {
  const root = resolve(process.env.MCP_FILE_BRIDGE_CLIENTS_DIR ?? join(tmpdir(), "mcp-file-bridge-clients"));
  const prefix = join(root, `${pkg.replace("/", "+")}@${version}`);
  const path = join(prefix, "node_modules", ".bin", bin);
  if (existsSync(path)) return { bin: path };
  await mkdir(prefix, { recursive: true });
  await writeFile(join(prefix, "package.json"), '{ "private": true }\n');
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const { NODE_OPTIONS: _, ...env } = process.env;
  const exit = await run(npm, ["install", "--no-audit", "--no-fund", "--no-save", `${pkg}@${version}`], {
    cwd: prefix,
    env,
    timeoutMs: 600_000,
  });
  if (exit.code === 0 && existsSync(path)) return { bin: path };
  const output = `${exit.stdout}\n${exit.stderr}`;
  if (/E(AI_AGAIN|NOTFOUND|CONNREFUSED|CONNRESET|TIMEDOUT)|ETIMEDOUT|network/i.test(output)) {
    return { skip: `${pkg}@${version} could not be installed: the npm registry is not reachable` };
  }
  throw new Error(`npm install ${pkg}@${version} failed (exit ${exit.code}):\n${output.slice(-4000)}`);
}

/** A fresh HOME for one CLI run, removed by the returned function. */
export async function tempHome(): Promise<{ home: string; remove: () => Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), "mfb-client-home-"));
  return { home, remove: () => rm(home, { recursive: true, force: true }) };
}

/** The environment every CLI run starts from: nothing of ours but PATH, no route off 127.0.0.1. */
export function offlineEnv(home: string): NodeJS.ProcessEnv {
  const dead = "http://127.0.0.1:9";
  return {
    PATH: process.env.PATH,
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    HTTP_PROXY: dead,
    HTTPS_PROXY: dead,
    http_proxy: dead,
    https_proxy: dead,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    TERM: "dumb",
    CI: "1",
  };
}
