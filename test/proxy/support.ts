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

/** The fixture as an `mcpServers` stdio entry. */
export function fixtureCommand(env: Record<string, string>) {
  return { command: process.execPath, args: ["--import", "tsx", FIXTURE], env, cwd: repoRoot };
}

/** Starts the fixture over Streamable HTTP; resolves with its MCP URL. */
export async function startHttpFixture(
  env: Record<string, string>,
  port = 0,
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE, "--http"], {
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
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
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
