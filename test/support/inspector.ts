/** The MCP Inspector CLI (`mcp-inspector --cli`) as a child process, shared by the tests that drive it. */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./helpers.js";

const run = promisify(execFile);
const inspector = join(repoRoot, "node_modules/.bin/mcp-inspector");

/** One run of the Inspector CLI: its exit code and output. */
export interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** How to run the Inspector CLI. */
export interface InspectorOptions {
  /** `HOME` for the run: a temp folder, so the CLI writes nothing into the real home. */
  home: string;
  /** Kills the run after this many milliseconds. */
  timeout?: number;
}

/**
 * Runs `mcp-inspector --cli --connect-timeout 60000 <args>` with `HOME` set to `home` and update
 * notices off; resolves with the exit code and output (never throws on a non-zero exit).
 */
export async function runInspector(
  args: string[],
  { home, timeout = 120_000 }: InspectorOptions,
): Promise<InspectorRun> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [inspector, "--cli", "--connect-timeout", "60000", ...args],
      {
        cwd: repoRoot,
        env: { ...process.env, HOME: home, NO_UPDATE_NOTIFIER: "1", npm_config_update_notifier: "false" },
        timeout,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

/**
 * Runs the Inspector CLI and parses its JSON output; fails (with the exit code and stderr) when it
 * exits non-zero.
 */
export async function inspectJson<T = Record<string, unknown>>(
  args: string[],
  options: InspectorOptions,
): Promise<{ json: T; stderr: string }> {
  const result = await runInspector(args, options);
  if (result.code !== 0) {
    throw new Error(`mcp-inspector exited with ${result.code}: ${result.stderr}${result.stdout}`);
  }
  return { json: JSON.parse(result.stdout) as T, stderr: result.stderr };
}

/**
 * The arguments that reach `url` over Streamable HTTP as a 2026-07-28 client with a bearer token,
 * printing JSON (`--format json`: the output is `{ result }`).
 */
export function modernHttpArgs(url: string | URL, token: string): string[] {
  return [
    "--server-url",
    String(url),
    "--transport",
    "http",
    "--header",
    `Authorization: Bearer ${token}`,
    "--protocol-era",
    "modern",
    "--format",
    "json",
  ];
}
