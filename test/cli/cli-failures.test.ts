/**
 * The CLI fails like a good CLI: the built binary (`dist/cli.js`, what `npx mcp-file-bridge` runs)
 * answers each start-up mistake with one message naming the fix, exit code 2 for a usage or config
 * mistake (1 for an upstream that cannot start), no stack trace, and nothing left in the temp folder.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE, removeDirs, tempDir } from "../proxy/support.js";
import { repoRoot } from "../support/helpers.js";

const BIN = join(repoRoot, "dist", "cli.js");
const SLOW = { timeout: 60_000 };

/** Builds the package when `dist/cli.js` is missing or older than any source file. */
function ensureFreshBuild(): void {
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...execFileSync("find", [dir, "-type", "f", "-name", "*.ts", "-printf", "%T@\\n"], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean)
        .map((line) => Number(line) * 1000),
    );
  if (!existsSync(BIN) || statSync(BIN).mtimeMs < newest(join(repoRoot, "src"))) {
    execFileSync("npx", ["tsup"], { cwd: repoRoot, stdio: "ignore" });
  }
}

interface Outcome {
  code: number | null;
  stderr: string;
}

let tmp: string;
let dir: string;

/** Runs the binary to its end with TMPDIR pointing at a private folder. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, TMPDIR: tmp, ...env },
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("exit", (code) => resolve({ code, stderr }));
  });
}

/** The fixture upstream as a config entry. */
const fixture = `  up: { command: ${JSON.stringify(process.execPath)}, args: ["--import", "tsx", ${JSON.stringify(FIXTURE)}] }`;

async function config(name: string, lines: string[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

function expectOneMessage(outcome: Outcome, code: number): string {
  expect(outcome.code).toBe(code);
  // Log lines are "[mcp-file-bridge] …"; the failure is what follows them.
  const message = outcome.stderr
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("[mcp-file-bridge]"))
    .join("\n");
  expect(message).toMatch(/^mcp-file-bridge: /);
  expect(outcome.stderr).not.toMatch(/^\s+at /m); // no stack trace
  return message;
}

beforeAll(async () => {
  ensureFreshBuild();
  dir = await tempDir("cli-failures-");
  tmp = join(dir, "tmp");
  await mkdir(tmp);
}, 180_000);

afterAll(async () => {
  await removeDirs(dir);
});

describe("mcp-file-bridge proxy: start-up mistakes", () => {
  it(
    "an mcpServers entry with neither command nor url: names what is missing and shows valid entries",
    SLOW,
    async () => {
      const path = await config("no-target.yaml", ["mcpServers:", "  files: { args: [x] }"]);
      const message = expectOneMessage(await cli(["proxy", "--config", path]), 2);
      expect(message).toContain('mcpServers.files: needs "command" (a stdio server, e.g. {"command": "npx"');
      expect(message).toContain(
        'or "url" (a Streamable HTTP server, e.g. {"url": "https://mcp.example.com/mcp"})',
      );
      const locator = await config("no-locator.yaml", [
        "mcpServers:",
        fixture,
        "servers:",
        "  up:",
        "    tools:",
        "      t: { artifacts: { pattern: x } }",
      ]);
      const rule = expectOneMessage(await cli(["proxy", "--config", locator]), 2);
      expect(rule).toContain(
        'servers.up.tools.t.artifacts.locator: needs "locator": "regex" (with "pattern")',
      );
    },
  );

  it("a port in use: one line with the fix, exit 2, no temp folder left", SLOW, async () => {
    const busy: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      busy.listen(0, "127.0.0.1", () => resolve((busy.address() as { port: number }).port)),
    );
    try {
      const outcome = await cli([
        "proxy",
        "--port",
        String(port),
        "--",
        process.execPath,
        "--import",
        "tsx",
        FIXTURE,
      ]);
      const message = expectOneMessage(outcome, 2);
      expect(message).toBe(
        `mcp-file-bridge: port 127.0.0.1:${port} is already in use: choose another with --port <n> (or proxy.port), or --port 0 for a free one`,
      );
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it(
    "an empty secretEnv: names the variable and how to set it, exit 2, no temp folder left",
    SLOW,
    async () => {
      const path = await config("secret.yaml", [
        "mcpServers:",
        fixture,
        "proxy:",
        "  secretEnv: FB_TEST_SECRET",
      ]);
      const message = expectOneMessage(await cli(["proxy", "--config", path], { FB_TEST_SECRET: "" }), 2);
      expect(message).toContain(
        "proxy.secretEnv names FB_TEST_SECRET, but that environment variable is empty",
      );
      expect(message).toContain("export FB_TEST_SECRET=$(openssl rand -hex 32)");
      expect(await readdir(tmp)).toEqual([]);
    },
  );

  it(
    "an upstream command that does not exist: exits 1 at once naming it, unless asked to wait",
    SLOW,
    async () => {
      const message = expectOneMessage(await cli(["proxy", "--", "no-such-mcp-server-xyz", "--flag"]), 1);
      expect(message).toContain(
        'upstream "upstream": the command "no-such-mcp-server-xyz" was not found; install it or fix mcpServers.upstream.command',
      );
      expect(await readdir(tmp)).toEqual([]);

      // --wait-for-upstreams starts anyway: /healthz says 503 until the upstream answers.
      const child: ChildProcess = spawn(
        process.execPath,
        [BIN, "proxy", "--wait-for-upstreams", "--", "no-such-mcp-server-xyz"],
        { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, TMPDIR: tmp } },
      );
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let stderr = "";
          child.stderr?.on("data", (chunk: Buffer) => {
            stderr += chunk.toString();
            const match = /health: (\S+)/.exec(stderr);
            if (match) resolve(match[1] as string);
          });
          child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
        });
        expect((await fetch(url)).status).toBe(503);
      } finally {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      expect(await readdir(tmp)).toEqual([]);
    },
  );

  it("--help names the options, and an unknown option exits 2 pointing at --help", SLOW, async () => {
    const help = execFileSync(process.execPath, [BIN, "proxy", "--help"], { encoding: "utf8" });
    for (const word of ["--wait-for-upstreams", "--port", "--config", "secretEnv"])
      expect(help).toContain(word);
    const unknown = await cli(["proxy", "--no-such-option"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Run "mcp-file-bridge --help".');
  });
});
