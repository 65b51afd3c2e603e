/** Shared by the CLI tests: `mcp-file-bridge proxy` as a child process, and its YAML config. */
import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { FIXTURE } from "../proxy/support.js";
import { repoRoot } from "../support/helpers.js";

/** The CLI's entry point, run with `node --import tsx`. */
export const CLI = join(repoRoot, "src/cli/main.ts");

/** A running `mcp-file-bridge proxy`. */
export interface StartedCli {
  child: ChildProcess;
  /** The proxy's origin (for `/healthz`). */
  url: string;
  /** The MCP endpoint from the "listening on" line. */
  mcpUrl: string;
  /** Everything the process wrote to stderr so far. */
  stderr: () => string;
  /** Resolves with the exit code once the process exits. */
  exited: Promise<number | null>;
}

/**
 * Starts `mcp-file-bridge proxy <args>` as a child process (with `env` added to this process's
 * environment) and waits for its "listening on" line; rejects with its stderr if it exits first.
 */
export async function startCli(args: string[], env: Record<string, string> = {}): Promise<StartedCli> {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "proxy", ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const mcpUrl = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (\S+)/.exec(stderr);
      if (match) resolve(match[1] as string);
    });
    void exited.then((code) => reject(new Error(`proxy exited with ${code}: ${stderr}`)));
  });
  return { child, url: new URL(mcpUrl).origin, mcpUrl, stderr: () => stderr, exited };
}

/**
 * A proxy config in YAML: the fixture upstream (stdio) as `up`, its handoff and output folders, and
 * an upload and an artifact adapter; `extra` lines (e.g. a `proxy:` section) go before `servers:`.
 */
export function yamlConfig(handoff: string, out: string, extra: string[] = []): string {
  return [
    "mcpServers:",
    "  up:",
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ["--import", "tsx", ${JSON.stringify(FIXTURE)}]`,
    `    cwd: ${JSON.stringify(repoRoot)}`,
    `    env: { OUTPUT_DIR: ${JSON.stringify(out)} }`,
    ...extra,
    "servers:",
    "  up:",
    `    handoffDir: ${JSON.stringify(handoff)}`,
    `    outputDirs: [${JSON.stringify(out)}]`,
    "    tools:",
    "      read_file: { upload: { args: [path] } }",
    '      write_file: { artifacts: { locator: regex, pattern: "Saved to (?<path>\\\\S+)" } }',
    "",
  ].join("\n");
}

/** Sends JSON-RPC requests over the child's stdin and reads the answers from its stdout. */
export function rpc(child: ChildProcessWithoutNullStreams) {
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (typeof message.id === "number") waiting.get(message.id)?.(message);
  });
  let next = 0;
  const request = (method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const id = ++next;
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return new Promise((resolve) => waiting.set(id, resolve));
  };
  return {
    request,
    /** The MCP handshake (`initialize`, then `notifications/initialized`); resolves with the server's answer. */
    async initialize(): Promise<Record<string, unknown>> {
      const answer = await request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "stdio-test-client", version: "1.0.0" },
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      return answer;
    },
  };
}
