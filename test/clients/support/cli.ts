/**
 * Installing and running a real agent CLI for the client matrix. Each CLI is installed from npm at
 * its pinned version into its own prefix under the OS temp folder (kept between runs, so only the
 * first run downloads it; `MCP_FILE_BRIDGE_CLIENTS_DIR` moves that cache, e.g. to a CI cache
 * folder), never into the project's node_modules, so `npm install` of the project stays small.
 * Each run gets a fresh HOME, proxies pointing at a dead loopback port (only 127.0.0.1 is reachable)
 * and a fake model on 127.0.0.1.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
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

/** A call of the pandoc-converter example's text conversion (Markdown → HTML). */
export const pandocConverter = {
  tool: "convert-contents-base64",
  input: {
    filename: "report.md",
    content_base64: Buffer.from("# Q3\n\nSales rose *twelve* percent.\n").toString("base64"),
    to: "html",
  },
};

/** The pandoc-converter example's command line, its file store inside `home` (removed with it). */
export function pandocCommand(home: string): { command: string; args: string[] } {
  const { command, args } = tsxCommand("test/clients/support/pandoc-server.ts");
  return { command, args: [...args, join(home, "pandoc-data")] };
}

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

const HOME_PREFIX = "mfb-client-home-";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the HOMEs earlier runs left in the temp folder (a worker killed by a timeout never runs
 * its `afterAll`): those of a process that is gone, and unnamed ones (before the pid was in the
 * name) older than an hour. A running matrix's HOMEs (its pid is alive) are left alone.
 *
 * @returns the folders removed.
 */
export function removeStaleHomes(root = tmpdir()): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(root)) {
    if (!name.startsWith(HOME_PREFIX)) continue;
    const path = join(root, name);
    const pid = /^(\d+)-/.exec(name.slice(HOME_PREFIX.length))?.[1];
    const stale = pid !== undefined ? !alive(Number(pid)) : Date.now() - statSync(path).mtimeMs > 3_600_000;
    if (!stale) continue;
    rmSync(path, { recursive: true, force: true, maxRetries: 3 });
    removed.push(path);
  }
  return removed;
}

/**
 * A fresh HOME for one CLI run (`mfb-client-home-<pid>-…`), removed by the returned function, and
 * at the latest when the worker exits.
 */
export async function tempHome(): Promise<{ home: string; remove: () => Promise<void> }> {
  removeStaleHomes();
  const home = await mkdtemp(join(tmpdir(), `${HOME_PREFIX}${process.pid}-`));
  const onExit = () => rmSync(home, { recursive: true, force: true, maxRetries: 3 });
  process.once("exit", onExit);
  return {
    home,
    remove: async () => {
      process.off("exit", onExit);
      await rm(home, { recursive: true, force: true, maxRetries: 3 });
    },
  };
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

/**
 * `mcp-file-bridge proxy --stdio` in front of the proxy tests' stdio upstream (which knows nothing of
 * this package), its config written into `home`: `read_file` is an upload consumer (its `path` takes
 * a `data:` URL, `{filename, content}` or an upload handle; the upstream hashes what it gets),
 * `write_file` an artifact producer (the upstream's `structuredContent.output.path`, a temp path the
 * proxy removes, becomes an artifact).
 */
export async function proxyCommand(home: string): Promise<{ command: string; args: string[] }> {
  const out = join(home, "proxy-out");
  const inbox = join(home, "proxy-in");
  await mkdir(out);
  await mkdir(inbox);
  const upstream = tsxCommand("test/proxy/fixtures/upstream-server.ts");
  const config = {
    mcpServers: { up: { ...upstream, env: { OUTPUT_DIR: out } } },
    servers: {
      up: {
        handoffDir: inbox,
        outputDirs: [out],
        tools: {
          read_file: { upload: { args: ["path"] } },
          write_file: { artifacts: { locator: "structured", pointer: "/output/path" } },
        },
      },
    },
  };
  const file = join(home, "proxy.json");
  await writeFile(file, JSON.stringify(config));
  const { command, args } = tsxCommand("src/cli/main.ts");
  return { command, args: [...args, "proxy", "--config", file, "--stdio"] };
}

/** Puts `bytes` to the upload URL a model was given (answers the upload's reply). */
export async function uploadTo(text: string, bytes: Uint8Array, filename: string): Promise<string> {
  const found = /http:\/\/127\.0\.0\.1:\d+\/files\/upload\/[^\s"\\]+/.exec(text)?.[0];
  if (found === undefined) throw new Error(`no upload URL in what the model received: ${text.slice(0, 500)}`);
  const url = new URL(found);
  url.searchParams.set("filename", filename);
  const response = await fetch(url, { method: "PUT", body: Buffer.from(bytes) });
  const reply = await response.text();
  if (!response.ok) throw new Error(`upload answered ${response.status}: ${reply}`);
  return reply;
}
