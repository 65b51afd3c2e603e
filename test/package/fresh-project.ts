/**
 * Fresh `npm init -y` projects that install the packed tarball, as a new user makes them (issue 42):
 * shell helpers, the one `npm pack` of a test file, a project with its own installs, a type-check per
 * TypeScript major, a server started from a project (stdio command or HTTP on a free 127.0.0.1 port),
 * and the docs' marked code blocks (`<!-- docs-test: <id> -->` on the line before a fence).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../support/helpers.js";

const run = promisify(execFile);

/** The versions fresh projects are checked against: both SDK generations, both TypeScript majors. */
export const PEERS = ["@modelcontextprotocol/sdk@1.32.2", "@modelcontextprotocol/server@2.4.0", "zod@4"];
export const TYPESCRIPTS = { "5.9": "typescript@5.9.3", "7": "typescript7@npm:typescript@7.0.2" } as const;

/** Runs `command args` in `cwd`; resolves with its stdout. */
export async function sh(cwd: string, command: string, args: string[]): Promise<string> {
  const { stdout } = await run(command, args, { cwd, timeout: 240_000, maxBuffer: 16 << 20 });
  return stdout;
}

/**
 * Packs this checkout once into `dir` and resolves with the tarball's path. `--ignore-scripts`: dist/
 * is fresh (ensureBuilt), and `prepack` would rebuild it under the feet of the other package tests;
 * prepack-build.test.ts checks that a plain `npm pack` builds.
 */
export async function packInto(dir: string): Promise<string> {
  const name = (
    await sh(repoRoot, "npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", dir])
  ).trim();
  return join(dir, name);
}

/**
 * `npm init -y && npm pkg set type=module` in a new folder `dir`, then one `npm install` of the
 * tarball and `packages` (one resolution, one pass over the npm cache, no revalidation of what the
 * cache holds).
 */
export async function freshProject(
  dir: string,
  tarball: string,
  packages: readonly string[],
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await sh(dir, "npm", ["init", "-y"]);
  await sh(dir, "npm", ["pkg", "set", "type=module"]);
  await sh(dir, "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...packages]);
  return dir;
}

/** Runs `tsc -p project` of one TypeScript major from `dir`; resolves with its output, "" when it passes. */
export async function typecheck(
  dir: string,
  major: keyof typeof TYPESCRIPTS,
  project = ".",
): Promise<string> {
  const bin = join(dir, "node_modules", major === "7" ? "typescript7" : "typescript", "bin", "tsc");
  try {
    await run(process.execPath, [bin, "-p", project], { cwd: dir, timeout: 240_000 });
    return "";
  } catch (error) {
    const failed = error as { stdout?: string; message: string };
    return failed.stdout || failed.message;
  }
}

/** The text of a tool result's text blocks, joined. */
export const text = (result: Record<string, unknown>) =>
  (result.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("");

/** A free TCP port on 127.0.0.1 (bound on port 0, then released for the server under test). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A server process started from a fresh project. */
export interface Started {
  child: ChildProcess;
  /** What it printed on stderr so far. */
  stderr: () => string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and waits for its exit. */
  stop: () => Promise<void>;
}

/** The `tsx` command line of a project: `node <dir>/node_modules/tsx/dist/cli.mjs file`. */
export function tsxCommand(dir: string, file: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [join(dir, "node_modules", "tsx", "dist", "cli.mjs"), file] };
}

/**
 * Starts `command args` in `cwd` and resolves once it is ready: `http://127.0.0.1:<port>/` answers
 * anything (any status) when `ready` is a port, or its stderr has a line matching `ready` (a RegExp;
 * `match` is that match). Rejects, with its stderr, when the process exits first or is not ready in
 * 60 s.
 */
export async function startServer(
  cwd: string,
  { command, args }: { command: string; args: string[] },
  ready: number | RegExp,
  env: Record<string, string> = {},
): Promise<Started & { match?: RegExpMatchArray }> {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.resume();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`server exited with ${child.exitCode} before it was ready:\n${stderr}`);
    if (typeof ready === "number") {
      try {
        await fetch(`http://127.0.0.1:${ready}/`, { signal: AbortSignal.timeout(2000) });
        return { child, stderr: () => stderr, stop };
      } catch {}
    } else {
      const match = ready.exec(stderr);
      if (match) return { child, stderr: () => stderr, stop, match };
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server was not ready in 60 s:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** A fenced block of the docs marked runnable with `<!-- docs-test: <id> -->` on the line before it. */
export interface MarkedBlock {
  id: string;
  /** The Markdown file, relative to the repository root, and the fence's line. */
  where: string;
  /** The fence's info string (`ts`, `sh`, `json`, `yaml`). */
  lang: string;
  code: string;
}

const MARKER = /^<!-- docs-test: (\S+) -->\n```(\w*)\n([\s\S]*?)^```$/gm;

/** Every marked block of README.md and docs/*.md, in file order. */
export async function markedBlocks(): Promise<MarkedBlock[]> {
  const files = [
    "README.md",
    ...(await readdir(join(repoRoot, "docs")))
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  const found: MarkedBlock[] = [];
  for (const file of files) {
    const markdown = await readFile(join(repoRoot, file), "utf8");
    // A marker not followed by a fence is a mistake the test must name, not skip.
    const markers = markdown.match(/<!-- docs-test:[^>]*-->/g) ?? [];
    const matched = [...markdown.matchAll(MARKER)];
    if (markers.length !== matched.length)
      throw new Error(`${file}: a docs-test marker is not on the line right before a fenced block`);
    for (const match of matched) {
      const line = markdown.slice(0, match.index).split("\n").length + 1;
      found.push({
        id: match[1] as string,
        where: `${file}:${line}`,
        lang: match[2] as string,
        code: match[3] as string,
      });
    }
  }
  return found;
}
