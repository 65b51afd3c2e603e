/**
 * `mcp-file-bridge proxy --sdk v2` as a child process: the MCP Inspector CLI 2.x over 2026-07-28
 * (`--protocol-era modern`, `--strict`) with a bearer token from `--auth-tokens-env`, and SDK v2
 * clients of both eras over stdio (`--stdio`).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDirs, tempDir, textOf } from "../proxy/support.js";
import { repoRoot, sha256 } from "../support/helpers.js";
import { inspectJson, modernHttpArgs, runInspector } from "../support/inspector.js";
import { CLI, startCli, yamlConfig } from "./support.js";

const SLOW = { timeout: 180_000 };
const TOKEN = "cli-alice-token-0123456789";

let dir: string;
let home: string;
let config: string;

beforeAll(async () => {
  dir = await tempDir("proxy-cli-v2-");
  home = await tempDir("proxy-cli-v2-home-");
  config = join(dir, "proxy.yaml");
  await writeFile(config, yamlConfig(join(dir, "handoff"), join(dir, "out"), ["proxy:", "  sdk: v2"]));
});

afterAll(async () => {
  await removeDirs(dir, home);
});

describe("mcp-file-bridge proxy --sdk v2 (CLI)", () => {
  it(
    "serves the Inspector over 2026-07-28: --strict is clean, tools and files work with a token",
    SLOW,
    async () => {
      const cli = await startCli(["--config", config, "--auth-tokens-env", "PROXY_TOKENS"], {
        PROXY_TOKENS: `alice:${TOKEN}`,
      });
      try {
        expect(cli.stderr()).toContain("serving with MCP SDK v2");
        const inspect = async (args: string[]) => {
          const { json, stderr } = await inspectJson<{ result: Record<string, unknown> }>(
            [...modernHttpArgs(cli.mcpUrl, TOKEN), ...args],
            { home },
          );
          return { result: json.result, warnings: stderr };
        };
        const listed = await inspect(["--method", "tools/list", "--strict"]);
        expect(listed.warnings).not.toMatch(/Warning|Error|portability/);
        const names = (listed.result.tools as Array<{ name: string }>).map((tool) => tool.name);
        expect(names).toEqual(expect.arrayContaining(["echo", "read_file", "write_file", "get_upload_url"]));

        const bytes = Buffer.from("bytes through the v2 CLI proxy");
        const read = await inspect([
          "--method",
          "tools/call",
          "--tool-name",
          "read_file",
          "--tool-arg",
          `path=data:text/plain;name=a.txt;base64,${bytes.toString("base64")}`,
        ]);
        expect((read.result.structuredContent as { sha256: string }).sha256).toBe(sha256(bytes));
        const ticket = await inspect(["--method", "tools/call", "--tool-name", "get_upload_url"]);
        expect(ticket.result.isError).toBeFalsy();
        expect((ticket.result.structuredContent as { handle: string }).handle).toMatch(/^upload:\/\//);

        // A wrong token is refused outright.
        const refused = await runInspector(
          [...modernHttpArgs(cli.mcpUrl, "wrong-token-0000000000"), "--method", "tools/list"],
          { home },
        );
        expect(refused.code).not.toBe(0);
      } finally {
        cli.child.kill("SIGTERM");
        expect(await cli.exited).toBe(0);
      }
    },
  );

  it.each(["modern", "legacy"] as const)(
    "serves an SDK v2 client over --stdio, %s era",
    SLOW,
    async (era) => {
      const client = new Client(
        { name: "stdio-v2", version: "1.0.0" },
        era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
      );
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ["--import", "tsx", CLI, "proxy", "--config", config, "--stdio", "--sdk", "v2"],
          cwd: repoRoot,
          stderr: "ignore",
        }),
      );
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(textOf(await client.callTool({ name: "echo", arguments: { text: era } }))).toBe(
          `echo: ${era}`,
        );
        // Over stdio the one client is the scope: files work without a token.
        const bytes = Buffer.from(`stdio ${era}`);
        const read = await client.callTool({
          name: "read_file",
          arguments: { path: `data:text/plain;name=s.txt;base64,${bytes.toString("base64")}` },
        });
        expect((read.structuredContent as { sha256: string }).sha256).toBe(sha256(bytes));
      } finally {
        await client.close();
      }
    },
  );
});
