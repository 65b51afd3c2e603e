/**
 * `mcp-file-bridge proxy` in front of an upstream that starts and never answers `initialize`: the
 * upstream is named, with the command that was run, after a few seconds (not ~2 minutes of
 * silence), and `limits.initializeTimeout` gives up sooner. `--check` on the default set-up says
 * that upload handles live per MCP session until callers authenticate.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE, removeDirs, tempDir } from "../proxy/support.js";
import { repoRoot } from "../support/helpers.js";
import { CLI } from "./support.js";

/** An upstream that reads its stdin and never writes a byte. */
const SILENT = `  mute: { command: ${JSON.stringify(process.execPath)}, args: ["-e", "process.stdin.resume()"] }`;

let dir: string;
const children = new Set<import("node:child_process").ChildProcess>();

beforeAll(async () => {
  dir = await tempDir("cli-silent-");
});

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await removeDirs(dir);
});

function run(
  args: string[],
  until?: RegExp,
): Promise<{ code: number | null; stderr: string; stdout: string; matched: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "proxy", ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TMPDIR: dir, SILENT_TEST_TOKENS: `alice:${"ab".repeat(24)}` },
    });
    children.add(child);
    let stderr = "";
    let stdout = "";
    let matched = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (until && !matched && until.test(stderr)) {
        matched = true;
        child.kill("SIGTERM");
      }
    });
    child.once("exit", (code) => resolve({ code, stderr, stdout, matched }));
  });
}

async function config(name: string, lines: string[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

describe("mcp-file-bridge proxy and a silent upstream", () => {
  it("names the upstream and its command while it stays silent", { timeout: 90_000 }, async () => {
    const path = await config("silent.yaml", ["mcpServers:", SILENT]);
    const outcome = await run(["--config", path], /no answer to initialize/);
    expect(outcome.matched).toBe(true);
    expect(outcome.stderr).toMatch(/no answer to initialize from upstream "mute" after 5s/);
    expect(outcome.stderr).toContain(`command: ${process.execPath} -e 'process.stdin.resume()'`);
  });

  it("gives up after limits.initializeTimeout: exit 1 naming the command", { timeout: 90_000 }, async () => {
    const path = await config("silent-limit.yaml", [
      "mcpServers:",
      SILENT,
      "proxy:",
      "  limits: { initializeTimeout: 1s }",
    ]);
    const outcome = await run(["--config", path]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/upstream "mute" did not answer initialize within 1s/);
    expect(outcome.stderr).toContain("process.stdin.resume()");
  });

  it("--check says handles live per MCP session until callers authenticate", {
    timeout: 90_000,
  }, async () => {
    const upstream = `  up: { command: ${JSON.stringify(process.execPath)}, args: ["--import", "tsx", ${JSON.stringify(FIXTURE)}], cwd: ${JSON.stringify(repoRoot)} }`;
    const rules = [
      "servers:",
      "  up:",
      `    handoffDir: ${JSON.stringify(join(dir, "in"))}`,
      "    tools:",
      "      read_file: { upload: { args: [path] } }",
    ];
    const open = await config("open.yaml", ["mcpServers:", upstream, ...rules]);
    const anonymous = await run(["--config", open, "--check"]);
    expect(anonymous.code).toBe(0);
    expect(anonymous.stderr).toMatch(/each MCP session is its own scope/);
    expect(anonymous.stderr).toContain("proxy.auth.tokensEnv");
    const authed = await config("authed.yaml", [
      "mcpServers:",
      upstream,
      "proxy:",
      "  auth: { tokensEnv: SILENT_TEST_TOKENS }",
      ...rules,
    ]);
    const signedIn = await run(["--config", authed, "--check"]);
    expect(signedIn.stderr).not.toMatch(/each MCP session is its own scope/);
  });
});
