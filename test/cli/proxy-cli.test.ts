import { execFile } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE, httpClient, removeDirs, tempDir, textOf } from "../proxy/support.js";
import { repoRoot, sha256 } from "../support/helpers.js";
import { inspectJson } from "../support/inspector.js";
import { CLI, startCli, yamlConfig } from "./support.js";

const run = promisify(execFile);
const SLOW = { timeout: 150_000 };

describe("mcp-file-bridge proxy (CLI)", () => {
  let dir: string;
  let handoff: string;
  let out: string;
  let home: string;
  let config: string;

  beforeAll(async () => {
    dir = await tempDir("proxy-cli-");
    handoff = join(dir, "handoff");
    out = join(dir, "out");
    home = await tempDir("proxy-cli-home-");
    config = join(dir, "proxy.yaml");
    await writeFile(config, yamlConfig(handoff, out));
  });

  afterAll(async () => {
    await removeDirs(dir, home);
  });

  it("prints useful help", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", CLI, "proxy", "--help"], {
      cwd: repoRoot,
    });
    for (const word of ["--config", "--upstream-cmd", "--upstream-url", "--port", "/healthz", "mcpServers"]) {
      expect(stdout).toContain(word);
    }
    const connect = await run(process.execPath, ["--import", "tsx", CLI, "connect", "--help"], {
      cwd: repoRoot,
    });
    for (const word of ["--allow-dir", "--output-dir", "--url", "claude_desktop_config.json"]) {
      expect(connect.stdout).toContain(word);
    }
  });

  it("exits 2 with the bad key named for an invalid config", async () => {
    const bad = join(dir, "bad.json");
    await writeFile(
      bad,
      JSON.stringify({ mcpServers: { up: { command: "x" } }, servers: { up: { prefix: "bad prefix!" } } }),
    );
    const failure = await run(process.execPath, ["--import", "tsx", CLI, "proxy", "--config", bad], {
      cwd: repoRoot,
    }).catch((error: { code: number; stderr: string }) => error);
    expect((failure as { code: number }).code).toBe(2);
    expect((failure as { stderr: string }).stderr).toContain("servers.up.prefix");
  });

  it(
    "serves a config file to the SDK client and to the MCP Inspector CLI; SIGTERM finishes calls in flight",
    SLOW,
    async () => {
      const cli = await startCli(["--config", config]);
      let client: Client | undefined;
      try {
        client = await httpClient(cli.mcpUrl);
        const bytes = Buffer.from("bytes through the CLI proxy");
        const read = await client.callTool({
          name: "read_file",
          arguments: { path: `data:text/plain;name=a.txt;base64,${bytes.toString("base64")}` },
        });
        expect((read.structuredContent as { sha256: string }).sha256).toBe(sha256(bytes));
        const written = await client.callTool({
          name: "write_file",
          arguments: { name: "w.txt", text: "written" },
        });
        expect(await (await fetch((written._meta as { download_url: string }).download_url)).text()).toBe(
          "written",
        );
        expect((await fetch(`${cli.url}/healthz`)).status).toBe(200);

        const inspect = async (args: string[]) =>
          (await inspectJson([cli.mcpUrl, "--transport", "http", ...args], { home, timeout: 90_000 })).json;
        const [listed, called] = await Promise.all([
          inspect(["--method", "tools/list"]),
          inspect(["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=from the inspector"]),
        ]);
        const names = (listed.tools as Array<{ name: string }>).map((tool) => tool.name);
        expect(names).toEqual(expect.arrayContaining(["echo", "read_file", "write_file", "get_upload_url"]));
        expect(textOf(called)).toBe("echo: from the inspector");

        // a call in flight when SIGTERM arrives still completes; then the process exits 0
        const slow = client.callTool({ name: "slow", arguments: { steps: 10, delayMs: 50 } });
        await new Promise((resolve) => setTimeout(resolve, 100));
        cli.child.kill("SIGTERM");
        expect(textOf(await slow)).toBe("done after 10 steps");
        expect(await cli.exited).toBe(0);
        expect(cli.stderr()).toMatch(/SIGTERM: finishing calls in flight/);
        expect(cli.stderr()).toMatch(/closed/);
        expect(await readdir(handoff)).toEqual([]);
      } finally {
        await client?.close().catch(() => undefined);
        if (cli.child.exitCode === null) cli.child.kill("SIGKILL");
      }
    },
  );

  it("zero-config: --upstream-cmd, and --check reports wiring problems with exit code 1", SLOW, async () => {
    const cli = await startCli([
      "--upstream-cmd",
      `${JSON.stringify(process.execPath)} --import tsx '${FIXTURE}'`,
    ]);
    try {
      const client = await httpClient(cli.mcpUrl);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "zero" } }))).toBe("echo: zero");
      await client.close();
    } finally {
      cli.child.kill("SIGINT");
      expect(await cli.exited).toBe(0);
    }
    const bad = join(dir, "misnamed.yaml");
    await writeFile(bad, yamlConfig(handoff, out).replace("read_file:", "read_fiel:"));
    const check = await run(process.execPath, ["--import", "tsx", CLI, "proxy", "--config", bad, "--check"], {
      cwd: repoRoot,
    }).catch((error: { code: number; stdout: string }) => error);
    expect((check as { code: number }).code).toBe(1);
    const report = JSON.parse((check as { stdout: string }).stdout) as {
      status: string;
      problems: Array<{ tool: string }>;
    };
    expect(report.status).toBe("adapter_wiring_incomplete");
    expect(report.problems.map((p) => p.tool)).toEqual(["read_fiel"]);
  });
});
