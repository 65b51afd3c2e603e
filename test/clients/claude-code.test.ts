/**
 * Claude Code (the real CLI from npm, pinned) driven offline against the output server: a fake
 * Anthropic Messages server on 127.0.0.1 plays the model, calls each tool in turn and keeps what
 * Claude Code forwarded to the model as that tool's result. The assertions are on what the model
 * received.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropic } from "./support/anthropic.js";
import {
  hasPandoc,
  installCli,
  offlineEnv,
  outputServerCommand,
  pandocCommand,
  pandocConverter,
  run,
  tempHome,
} from "./support/cli.js";
import { type FakeModel, startFakeModel } from "./support/fake-model.js";
import { describeFitted, describeLongText, describeShape, Observations } from "./support/observed.js";
import { fileScenario, type Scenario } from "./support/scenario.js";
import { scenarioTests, tableTest } from "./support/scenario-tests.js";

/** The version the matrix (and docs/client-compatibility.md) measured. */
const CLAUDE_CODE_VERSION = "2.1.331";

const TOOLS = [
  "whoami",
  "link_structured",
  "link_plain",
  "link_schema",
  "legacy_structured",
  "big_text",
  "big_text_raw",
  "big_text_raised",
  "blob",
] as const;

const installed = await installCli("@anthropic-ai/claude-code", CLAUDE_CODE_VERSION, "claude");
if (installed.skip !== undefined) console.warn(`client matrix: Claude Code skipped: ${installed.skip}`);

describe.skipIf(installed.bin === undefined)(
  `Claude Code ${CLAUDE_CODE_VERSION}: what reaches the model`,
  () => {
    let model: FakeModel;
    let scenario: Scenario;
    const observations = new Observations("claude-code", `Claude Code ${CLAUDE_CODE_VERSION}`);
    let cleanup: () => Promise<void> = async () => undefined;
    const seen = (tool: (typeof TOOLS)[number]): string => {
      const text = model.results.get(`mcp__files__${tool}`);
      if (text === undefined) throw new Error(`the model never received ${tool}'s result`);
      return text;
    };

    beforeAll(async () => {
      const { home, remove } = await tempHome();
      cleanup = remove;
      scenario = await fileScenario("claude", home);
      model = await startFakeModel(anthropic, { onResult: scenario.onResult });
      const config = join(home, "mcp.json");
      const servers: Record<string, unknown> = { files: { type: "stdio", ...outputServerCommand() } };
      const lines = TOOLS.map((tool) => `CALL mcp__files__${tool}`);
      for (const [name, command] of Object.entries(scenario.servers)) {
        servers[name] = { type: "stdio", ...command };
      }
      for (const [name, entry] of Object.entries(scenario.httpServers)) {
        servers[name] = { type: "http", ...entry };
      }
      if (hasPandoc) {
        const { tool } = pandocConverter;
        servers.pandoc = { type: "stdio", ...pandocCommand(home) };
        lines.push(`CALL mcp__pandoc__${tool} ${JSON.stringify(pandocConverter.input)}`);
      }
      lines.push(...scenario.lines);
      await writeFile(config, JSON.stringify({ mcpServers: servers }));
      const prompt = lines.join("\n");
      const args = ["-p", prompt, "--mcp-config", config, "--strict-mcp-config"];
      args.push(
        "--allowedTools",
        "mcp__files",
        "mcp__pandoc",
        "mcp__shim",
        "mcp__proxy",
        "mcp__demo",
        "mcp__container",
        "mcp__shots",
        "--output-format",
        "json",
        "--model",
        "claude-sonnet-4-5",
      );
      const exit = await run(installed.bin as string, args, {
        cwd: home,
        timeoutMs: 240_000,
        env: {
          ...offlineEnv(home),
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_API_KEY: "sk-ant-offline-test",
          // -p would otherwise offer only WaitForMcpServers while the server starts.
          MCP_CONNECTION_NONBLOCKING: "false",
          // Five stdio servers start at once (tsx compiles each): the 30-second default is short on a busy machine.
          MCP_TIMEOUT: "120000",
          // Otherwise MCP tools are deferred behind ToolSearch and absent from the first request.
          ENABLE_TOOL_SEARCH: "false",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_TELEMETRY: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        },
      });
      if (exit.code !== 0) throw new Error(`claude exited ${exit.code}:\n${exit.stdout}\n${exit.stderr}`);
      const problems = [...model.missing.map((m) => `not offered: ${m}`), ...model.errors];
      if (problems.length > 0) throw new Error(`claude: ${problems.join("\n")}\n${exit.stderr.slice(-2000)}`);
    }, 300_000);

    afterAll(async () => {
      // Debugging aid: MFB_CLIENTS_DUMP=file writes what the model received and when each request came.
      if (process.env.MFB_CLIENTS_DUMP) {
        await writeFile(
          process.env.MFB_CLIENTS_DUMP,
          JSON.stringify(
            {
              times: model.requests.map((r) => [r.at - (model.requests[0]?.at ?? 0), r.path]),
              results: Object.fromEntries(model.results),
            },
            null,
            1,
          ),
        );
      }
      await model?.close();
      await scenario?.close();
      await cleanup();
    });

    it("sends clientInfo.name claude-code (the key of its inline budget)", () => {
      expect(seen("whoami")).toContain("client=claude-code");
      observations.set("clientInfo", "`claude-code`");
    });

    it("drops text blocks when a result has structuredContent: the file is in structuredContent.files", () => {
      const text = seen("link_structured");
      observations.set("structured", describeShape(text, true));
      expect(text).not.toContain("One table.");
      const files = /(\{"rows":1,"files":.*\})/.exec(text)?.[1];
      const [file] = (JSON.parse(files ?? "{}") as { files: Array<Record<string, unknown>> }).files;
      expect(file).toMatchObject({ name: "table.csv", mimeType: "text/csv", size: 8 });
      expect(String(file?.uri)).toMatch(/^file:\/\/uploads\/[^/]+\/table\.csv$/);
      // resource_link is still rendered, as a line.
      expect(text).toContain(`[Resource link: table.csv] ${file?.uri}`);
    });

    it("shows every text block and the link line when there is no structuredContent", () => {
      const text = seen("link_plain");
      observations.set("plain", describeShape(text, false));
      expect(text).toContain("One table.");
      expect(text).toMatch(/Resource URI: file:\/\/uploads\/[^/]+\/table\.csv/);
    });

    it("accepts a result whose outputSchema spreads fileOutputFields", () => {
      const text = seen("link_schema");
      expect(text).toMatch(/"files":\[\{"uri":"file:\/\/uploads\//);
      expect(text).not.toMatch(/error|invalid/i);
    });

    it("loses the link text of the pre-contract shape (why files go into structuredContent)", () => {
      const text = seen("legacy_structured");
      expect(text).toContain('{"rows":1}');
      expect(text).not.toContain("Resource URI:");
    });

    it("gets a preview, the artifact URI and the download URL for text over its budget, not a persisted file", () => {
      const text = seen("big_text");
      expect(observations.set("fitLongText", describeFitted(text))).toBe(
        "a preview, the artifact URI, the download URL",
      );
      expect(text.length).toBeLessThan(50_000);
      expect(text).not.toContain("<persisted-output>");
      expect(text).toContain("BIG-TEXT-HEAD");
      expect(text).not.toContain("BIG-TEXT-TAIL");
      expect(text).toMatch(/Resource URI: artifact:\/\/sessions\/[^/]+\/[^/]+\/big\.txt/);
      expect(text).toMatch(/Download URL \(valid until [^)]+\): http:\/\/127\.0\.0\.1:9\/files\//);
    });

    it("persists 60,000 characters of text to a file of its own (its 50,000-character cap)", () => {
      const text = seen("big_text_raw");
      expect(observations.set("rawLongText", describeLongText(text))).toMatch(/^persisted to a local file/);
      expect(text).not.toContain("BIG-TEXT-TAIL");
    });

    it("shows 60,000 characters whole for a tool that raised its cap with anthropic/maxResultSizeChars", () => {
      const text = seen("big_text_raised");
      expect(observations.set("raisedLongText", describeLongText(text))).toBe("shown whole");
      expect(text).not.toContain("<persisted-output>");
      expect(text).toContain("BIG-TEXT-HEAD");
      expect(text).toContain("BIG-TEXT-TAIL");
    });

    it.skipIf(!hasPandoc)("gets pandoc-converter's HTML: structuredContent carries the text too", () => {
      const text = model.results.get(`mcp__pandoc__${pandocConverter.tool}`) ?? "";
      expect(text).toContain('"format":"html"');
      expect(text).toContain("<em>twelve</em>");
      observations.set("pandoc", "the HTML (in `structuredContent.text`)");
    });

    it("gets a stored non-media blob as its URI and download URL, never its bytes", () => {
      const text = seen("blob");
      expect(observations.set("fitBlob", describeFitted(text, "BwcHBwcH"))).toBe(
        "the artifact URI, the download URL; no bytes",
      );
      expect(text.length).toBeLessThan(5_000);
      expect(text).toMatch(/"uri":"artifact:\/\/sessions\/[^"]+\/archive\.bin"/);
      expect(text).toMatch(/"downloadUrl":"http:\/\/127\.0\.0\.1:9\/files\//);
      expect(text).not.toContain("BwcHBwcH"); // base64 of the blob's bytes
    });

    scenarioTests(
      () => ({
        scenario,
        observations,
        receivedImages: (call) => model.images.get(scenario.calls[call]) ?? [],
        clientInfo: "claude-code",
        received: (call) => {
          const text = model.results.get(scenario.calls[call]);
          if (text === undefined) throw new Error(`the model never received ${call}'s result`);
          return text;
        },
      }),
      false,
    );

    tableTest(() => ({ observations }));
  },
);
