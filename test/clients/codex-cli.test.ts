/**
 * Codex CLI (the real CLI from npm, pinned) driven offline against the output server: a fake OpenAI
 * Responses server on 127.0.0.1 (`wire_api = "responses"`, a custom provider `base_url`) plays the
 * model, calls each tool in turn (`namespace: "mcp__files"`) and keeps the `function_call_output`
 * Codex sent back. The assertions are on what the model received.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import type { HttpServerEntry } from "./support/example-servers.js";
import { type FakeModel, startFakeModel } from "./support/fake-model.js";
import { describeFitted, describeLongText, describeShape, Observations } from "./support/observed.js";
import { openaiResponses } from "./support/openai-responses.js";
import { fileScenario, type Scenario } from "./support/scenario.js";
import { scenarioTests, tableTest } from "./support/scenario-tests.js";

/** The version the matrix (and docs/client-compatibility.md) measured. */
const CODEX_VERSION = "0.169.0";

const TOOLS = [
  "whoami",
  "link_structured",
  "link_plain",
  "legacy_structured",
  "big_text",
  "big_text_raw",
  "big_text_raised",
  "blob",
] as const;

const installed = await installCli("@openai/codex", CODEX_VERSION, "codex");
if (installed.skip !== undefined) console.warn(`client matrix: Codex CLI skipped: ${installed.skip}`);

function serverEntry(name: string, command: { command: string; args: string[] }): string[] {
  return [
    `[mcp_servers.${name}]`,
    `command = ${JSON.stringify(command.command)}`,
    `args = ${JSON.stringify(command.args)}`,
    "required = true",
    // The default (10 s) is short for a server tsx compiles on a busy machine.
    "startup_timeout_sec = 120",
  ];
}

/** A server Codex reaches by URL (Streamable HTTP), its headers sent on every request. */
function httpServerEntry(name: string, entry: HttpServerEntry): string[] {
  const headers = Object.entries(entry.headers ?? {}).map(
    ([key, value]) => `${JSON.stringify(key)} = ${JSON.stringify(value)}`,
  );
  return [
    `[mcp_servers.${name}]`,
    `url = ${JSON.stringify(entry.url)}`,
    ...(headers.length > 0 ? [`http_headers = { ${headers.join(", ")} }`] : []),
    "required = true",
    "startup_timeout_sec = 120",
  ];
}

function config(url: string, scenario: Scenario, home: string): string {
  const server = outputServerCommand();
  return [
    'model = "gpt-5-codex"',
    'model_provider = "offline"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    "[model_providers.offline]",
    'name = "offline"',
    `base_url = "${url}/v1"`,
    'wire_api = "responses"',
    'env_key = "OFFLINE_OPENAI_KEY"',
    // `required = true`: without it `codex exec` may start the turn before the server's tools are listed.
    ...serverEntry("files", server),
    ...(hasPandoc ? serverEntry("pandoc", pandocCommand(home)) : []),
    ...Object.entries(scenario.servers).flatMap(([name, command]) => serverEntry(name, command)),
    ...Object.entries(scenario.httpServers).flatMap(([name, entry]) => httpServerEntry(name, entry)),
    "",
  ].join("\n");
}

describe.skipIf(installed.bin === undefined)(`Codex CLI ${CODEX_VERSION}: what reaches the model`, () => {
  let model: FakeModel;
  let scenario: Scenario;
  const observations = new Observations("codex-cli", `Codex CLI ${CODEX_VERSION}`);
  let cleanup: () => Promise<void> = async () => undefined;
  const seen = (tool: (typeof TOOLS)[number]): string => {
    const text = model.results.get(tool);
    if (text === undefined) throw new Error(`the model never received ${tool}'s result`);
    return text;
  };

  beforeAll(async () => {
    const { home, remove } = await tempHome();
    cleanup = remove;
    scenario = await fileScenario("codex", home);
    model = await startFakeModel(openaiResponses, { onResult: scenario.onResult });
    await mkdir(join(home, ".codex"));
    await writeFile(join(home, ".codex", "config.toml"), config(model.url, scenario, home));
    const lines = TOOLS.map((tool) => `CALL ${tool}`);
    // Codex turns the hyphens of MCP tool names into underscores.
    const pandocTool = pandocConverter.tool.replaceAll("-", "_");
    if (hasPandoc) lines.push(`CALL ${pandocTool} ${JSON.stringify(pandocConverter.input)}`);
    lines.push(...scenario.lines);
    const prompt = lines.join("\n");
    const args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt];
    const exit = await run(installed.bin as string, args, {
      cwd: home,
      timeoutMs: 240_000,
      env: { ...offlineEnv(home), CODEX_HOME: join(home, ".codex"), OFFLINE_OPENAI_KEY: "sk-offline-test" },
    });
    if (exit.code !== 0) throw new Error(`codex exited ${exit.code}:\n${exit.stdout}\n${exit.stderr}`);
    const problems = [...model.missing.map((m) => `not offered: ${m}`), ...model.errors];
    if (problems.length > 0) throw new Error(`codex: ${problems.join("\n")}\n${exit.stderr.slice(-2000)}`);
  }, 300_000);

  afterAll(async () => {
    await model?.close();
    await scenario?.close();
    await cleanup();
  });

  it("sends clientInfo.name codex-mcp-client (the key of its inline budget)", () => {
    expect(seen("whoami")).toContain("client=codex-mcp-client");
    observations.set("clientInfo", "`codex-mcp-client`");
  });

  it("shows only structuredContent when a result has it: the file is in structuredContent.files", () => {
    const text = seen("link_structured");
    observations.set("structured", describeShape(text, true));
    expect(text).not.toContain("One table.");
    expect(text).not.toContain("resource_link");
    const json = /(\{"rows":1,"files":.*\})/.exec(text)?.[1];
    const [file] = (JSON.parse(json ?? "{}") as { files: Array<Record<string, unknown>> }).files;
    expect(file).toMatchObject({ name: "table.csv", mimeType: "text/csv", size: 8 });
    expect(String(file?.uri)).toMatch(/^file:\/\/uploads\/[^/]+\/table\.csv$/);
  });

  it("shows each block as text without structuredContent, the resource_link as raw JSON", () => {
    const text = seen("link_plain");
    observations.set("plain", describeShape(text, false));
    expect(text).toContain("One table.");
    expect(text).toContain('{"type":"resource_link","uri":"file://uploads/');
    expect(text).toMatch(/Resource URI: file:\/\/uploads\/[^/]+\/table\.csv/);
  });

  it("loses the link (text and resource_link) of the pre-contract shape", () => {
    const text = seen("legacy_structured");
    expect(text).toContain('{"rows":1}');
    expect(text).not.toContain("file://uploads/");
  });

  it("gets a preview, the artifact URI and the download URL for text over its budget", () => {
    const text = seen("big_text");
    expect(observations.set("fitLongText", describeFitted(text))).toBe(
      "a preview, the artifact URI, the download URL",
    );
    expect(text.length).toBeLessThan(10_000);
    expect(text).toContain("BIG-TEXT-HEAD");
    expect(text).toMatch(/Resource URI: artifact:\/\/sessions\/[^/]+\/[^/]+\/big\.txt/);
    expect(text).toMatch(/Download URL \(valid until [^)]+\): http:\/\/127\.0\.0\.1:9\/files\//);
  });

  it("cuts 60,000 characters of inline text itself: why its budget is 10,000", () => {
    expect(observations.set("rawLongText", describeLongText(seen("big_text_raw")))).toMatch(/^cut to /);
    const text = seen("big_text_raised");
    observations.set("raisedLongText", describeLongText(text));
    expect(text.length).toBeLessThan(15_000);
    expect(text).toContain("BIG-TEXT-HEAD");
  });

  it.skipIf(!hasPandoc)("gets pandoc-converter's HTML: structuredContent carries the text too", () => {
    const text = model.results.get(pandocConverter.tool.replaceAll("-", "_")) ?? "";
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
  });

  scenarioTests(
    () => ({
      scenario,
      observations,
      receivedImages: (call) => model.images.get(scenario.calls[call]) ?? [],
      clientInfo: "codex-mcp-client",
      received: (call) => {
        const text = model.results.get(scenario.calls[call]);
        if (text === undefined) throw new Error(`the model never received ${call}'s result`);
        return text;
      },
    }),
    false,
  );

  tableTest(() => ({ observations }));
});
