/** Shared by the proxy tests: the fixture upstream (stdio or HTTP), temp folders, SDK clients. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { repoRoot } from "../support/helpers.js";

export const FIXTURE = join(import.meta.dirname, "fixtures", "upstream-server.ts");

/** The fixture's `write_file` as an artifact tool: its "Saved to <path>" line names the file. */
export const WRITE_FILE_ARTIFACTS = {
  write_file: { artifacts: { locator: "regex", pattern: "Saved to (?<path>\\S+)" } },
};

/** The fixture's file tools: `read_file`'s `path` takes an upload, `write_file` makes an artifact. */
export const FILE_TOOLS = { read_file: { upload: { args: ["path"] } }, ...WRITE_FILE_ARTIFACTS };

/** The fixture as an `mcpServers` stdio entry. */
export function fixtureCommand(env: Record<string, string>) {
  return { command: process.execPath, args: ["--import", "tsx", FIXTURE], env, cwd: repoRoot };
}

/** The SDK v2 upstream fixture (both eras over stdio; `--http`: 2026-07-28 only, `--legacy` adds 2025). */
export const V2_FIXTURE = join(import.meta.dirname, "fixtures", "v2-upstream-server.ts");

/** A fixture server running over Streamable HTTP as a child process. */
export interface HttpFixture {
  /** Its MCP URL, from the fixture's `LISTENING <url>` line. */
  url: string;
  child: ChildProcess;
  /** Ends it with SIGTERM and waits for the exit (nothing when it has exited already). */
  stop(): Promise<void>;
}

/**
 * Starts a fixture (the SDK v1 one unless `fixture` names another) with `--http` and `args`, on `port`
 * (0: any), with `env` added to this process's environment; resolves once it prints its URL.
 */
export async function startHttpFixture(
  env: Record<string, string>,
  port = 0,
  { fixture = FIXTURE, args = [] }: { fixture?: string; args?: string[] } = {},
): Promise<HttpFixture> {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, "--http", ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /LISTENING (\S+)/.exec(buffered);
      if (match) resolve(match[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`fixture exited with ${code}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A fresh temp folder (real path); removed by the returned function. */
export async function tempDir(prefix: string): Promise<string> {
  return await realpath(await mkdtemp(join(tmpdir(), prefix)));
}

export async function removeDirs(...dirs: string[]): Promise<void> {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
}

/** An SDK client over Streamable HTTP. */
export async function httpClient(url: string): Promise<Client> {
  const client = new Client({ name: "proxy-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** An SDK client straight to the fixture over stdio (to compare with the proxy). */
export async function directClient(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "proxy-test-direct", version: "1.0.0" });
  const command = fixtureCommand(env);
  await client.connect(
    new StdioClientTransport({
      ...command,
      env: { ...process.env, ...env } as Record<string, string>,
      stderr: "ignore",
    }),
  );
  return client;
}

/** The text of a tool result's content blocks, joined. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}
