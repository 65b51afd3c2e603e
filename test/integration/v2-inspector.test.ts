/**
 * A real third-party client against the v2 example: the MCP Inspector CLI 2.x, speaking 2026-07-28
 * (`--protocol-era modern`) to the demo app served statelessly on SDK v2, and linting the tool
 * schemas with `--strict`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDemoApp } from "../../examples/demo/app.js";
import { type RunningHttpServer, serveHttp } from "../../examples/shared/serve-http.js";
import { type RunningV2Server, serveHttpV2, staticTokens } from "../../examples/shared/serve-http-v2.js";
import { modernHttpArgs, runInspector } from "../support/inspector.js";

const SLOW = { timeout: 150_000 };

let home: string;
let dataDir: string;
let baseUrl = "";
let app: ReturnType<typeof createDemoApp>;
let v2: RunningV2Server;
let v1: RunningHttpServer;
let loose: RunningV2Server;
const eras: string[] = [];

/** Runs `mcp-inspector --cli` and returns its exit code and output (never throws on a non-zero exit). */
const cli = (args: string[]) => runInspector(args, { home });
const modern = (url: URL, token = "demo-token") => modernHttpArgs(url, token);

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "v2-inspector-"));
  dataDir = await mkdtemp(join(tmpdir(), "v2-inspector-data-"));
  app = createDemoApp({ dataDir, baseUrl: () => baseUrl });
  v2 = await serveHttpV2({
    createServer: (context) => {
      eras.push(context.era);
      return app.createServerV2();
    },
    routes: app.routes,
    authenticate: staticTokens({ "demo-token": "demo-user" }),
  });
  baseUrl = v2.url;
  v1 = await serveHttp({ createServer: app.createServer });
  // A control server whose one tool has the schema shape strict linters flag.
  loose = await serveHttpV2({
    createServer: () => {
      const server = new McpServerV2({ name: "loose", version: "1.0.0" });
      server.registerTool(
        "loose",
        { inputSchema: z.object({ file: z.looseObject({ name: z.string() }) }) },
        async () => ({
          content: [],
        }),
      );
      return server;
    },
  });
});

afterAll(async () => {
  await v2.close();
  await v1.close();
  await loose.close();
  await app.close();
  await rm(home, { recursive: true, force: true, maxRetries: 3 });
  await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
});

describe("MCP Inspector CLI 2.x against the v2 example", () => {
  it("lists the tools over 2026-07-28, and --strict finds nothing to report", SLOW, async () => {
    eras.length = 0;
    const listed = await cli([...modern(v2.mcpUrl), "--method", "tools/list", "--strict"]);
    expect(listed.stderr).not.toMatch(/Warning|Error|portability/);
    expect(listed.code).toBe(0);
    const tools = (
      JSON.parse(listed.stdout) as { result: { tools: Array<{ name: string; inputSchema: object }> } }
    ).result.tools;
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "check_upload",
      "get_upload_url",
      "inspect_file",
      "summarize_files",
    ]);
    expect(JSON.stringify(tools)).not.toContain('"additionalProperties":{}');
    expect(
      tools.every((tool) => (tool.inputSchema as { $schema?: string }).$schema?.includes("2020-12")),
    ).toBe(true);
    // Every request reached the server as a 2026-07-28 (stateless) one.
    expect(eras.length).toBeGreaterThan(0);
    expect(new Set(eras)).toEqual(new Set(["modern"]));
  });

  it("calls a file tool and reads resources over 2026-07-28", SLOW, async () => {
    const dataUrl = `data:text/plain;name=hello.txt;base64,${Buffer.from("hello inspector\n").toString("base64")}`;
    const called = await cli([
      ...modern(v2.mcpUrl),
      "--method",
      "tools/call",
      "--tool-name",
      "inspect_file",
      "--tool-args-json",
      JSON.stringify({ file: dataUrl }),
    ]);
    expect(called.code).toBe(0);
    const text = (JSON.parse(called.stdout) as { result: { content: Array<{ text: string }> } }).result
      .content[0]?.text;
    expect(text).toMatch(/^hello\.txt: text\/plain, 16 bytes/);

    const templates = await cli([...modern(v2.mcpUrl), "--method", "resources/templates/list"]);
    expect(templates.code).toBe(0);
    expect(templates.stdout).toContain("file://uploads/{scope}/{+path}");
    const missing = await cli([
      ...modern(v2.mcpUrl),
      "--method",
      "resources/read",
      "--uri",
      "file://uploads/demo-user/missing.txt",
    ]);
    expect(missing.code).not.toBe(0);
    // The CLI prints the JSON-RPC error's message (not its code), said once.
    expect(`${missing.stdout}${missing.stderr}`).toContain("missing.txt not found");
    expect(`${missing.stdout}${missing.stderr}`).not.toContain("MCP error");
  });

  it("--strict flags a schema with additionalProperties {} (the check can fail)", SLOW, async () => {
    const linted = await cli([...modern(loose.mcpUrl), "--method", "tools/list", "--strict"]);
    expect(linted.stderr).toMatch(/Warning: tool "loose"/);
    expect(linted.stderr).toContain("additionalProperties");
  });

  it("--strict is clean on the v1 example too (fileInput is the same schema)", SLOW, async () => {
    const linted = await cli([
      "--server-url",
      v1.mcpUrl.href,
      "--transport",
      "http",
      "--method",
      "tools/list",
      "--strict",
      "--format",
      "json",
    ]);
    expect(linted.code).toBe(0);
    expect(linted.stderr).not.toMatch(/Warning|Error|portability/);
  });
});
