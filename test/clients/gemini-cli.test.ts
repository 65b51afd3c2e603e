/**
 * Gemini CLI (the real CLI from npm, pinned) driven offline against the output server: a fake
 * Gemini generateContent server on 127.0.0.1 plays the model, calls each tool in turn and keeps the
 * functionResponse Gemini CLI sent back. The assertions are on what the model received.
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
import { type FakeModel, startFakeModel } from "./support/fake-model.js";
import { gemini } from "./support/gemini.js";
import { describeFitted, describeLongText, describeShape, Observations } from "./support/observed.js";
import { fileScenario, type Scenario } from "./support/scenario.js";
import { scenarioTests, tableTest } from "./support/scenario-tests.js";

/** The text Gemini CLI put in a functionResponse (the first part of the turn): its output, or its error. */
function outputOf(part: string, name: string): string {
  const parsed = JSON.parse(part.split("\n")[0] as string) as {
    functionResponse: { name: string; response: { output?: string; error?: unknown } };
  };
  if (parsed.functionResponse.name !== name) {
    throw new Error(`expected a response of ${name}, got ${parsed.functionResponse.name}`);
  }
  // A tool error comes back as `response.error`.
  const { output, error } = parsed.functionResponse.response;
  return output ?? (typeof error === "string" ? error : JSON.stringify(error));
}

/** The version the matrix (and docs/client-compatibility.md) measured. */
const GEMINI_CLI_VERSION = "0.61.0";

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

const installed = await installCli("@google/gemini-cli", GEMINI_CLI_VERSION, "gemini");
if (installed.skip !== undefined) console.warn(`client matrix: Gemini CLI skipped: ${installed.skip}`);

describe.skipIf(installed.bin === undefined)(
  `Gemini CLI ${GEMINI_CLI_VERSION}: what reaches the model`,
  () => {
    let model: FakeModel;
    let scenario: Scenario;
    const observations = new Observations("gemini-cli", `Gemini CLI ${GEMINI_CLI_VERSION}`);
    let cleanup: () => Promise<void> = async () => undefined;
    /** The text output Gemini CLI put in the functionResponse. */
    const seen = (tool: (typeof TOOLS)[number]): string => {
      const part = model.results.get(tool);
      if (part === undefined) throw new Error(`the model never received ${tool}'s result`);
      return outputOf(part, `mcp_files_${tool}`);
    };

    beforeAll(async () => {
      const { home, remove } = await tempHome();
      cleanup = remove;
      scenario = await fileScenario("gemini", home);
      model = await startFakeModel(gemini, { onResult: scenario.onResult });
      const extra: Record<string, unknown> = Object.fromEntries(
        Object.entries(scenario.servers).map(([name, command]) => [name, { ...command, trust: true }]),
      );
      for (const [name, { url, headers }] of Object.entries(scenario.httpServers)) {
        extra[name] = { httpUrl: url, ...(headers ? { headers } : {}), trust: true };
      }
      const pandocCall = `CALL mcp_pandoc_${pandocConverter.tool} ${JSON.stringify(pandocConverter.input)}`;
      if (hasPandoc) {
        extra.pandoc = { ...pandocCommand(home), trust: true };
      }
      await mkdir(join(home, ".gemini"));
      const settings = {
        security: { auth: { selectedType: "gemini-api-key" } },
        mcpServers: { files: { ...outputServerCommand(), trust: true }, ...extra },
      };
      await writeFile(join(home, ".gemini", "settings.json"), JSON.stringify(settings));
      const prompt = [
        ...TOOLS.map((tool) => `CALL ${tool}`),
        ...(hasPandoc ? [pandocCall] : []),
        ...scenario.lines,
      ].join("\n");
      const args = ["-p", prompt, "--yolo", "-m", "gemini-2.5-flash", "--output-format", "json"];
      const exit = await run(installed.bin as string, args, {
        cwd: home,
        timeoutMs: 240_000,
        env: {
          ...offlineEnv(home),
          GEMINI_API_KEY: "offline-test-key",
          GOOGLE_GEMINI_BASE_URL: model.url,
          // Without it Gemini CLI exits 55 in a folder it was never told to trust.
          GEMINI_CLI_TRUST_WORKSPACE: "true",
        },
      });
      if (exit.code !== 0) throw new Error(`gemini exited ${exit.code}:\n${exit.stdout}\n${exit.stderr}`);
      const problems = [...model.missing.map((m) => `not offered: ${m}`), ...model.errors];
      if (problems.length > 0) throw new Error(`gemini: ${problems.join("\n")}\n${exit.stderr.slice(-2000)}`);
    }, 300_000);

    afterAll(async () => {
      await model?.close();
      await scenario?.close();
      await cleanup();
    });

    it("sends clientInfo.name gemini-cli-mcp-client (the key of its inline budget)", () => {
      expect(seen("whoami")).toContain("client=gemini-cli-mcp-client");
      observations.set("clientInfo", "`gemini-cli-mcp-client`");
    });

    it("ignores structuredContent: the text blocks and the link line carry the file", () => {
      const text = seen("link_structured");
      observations.set("structured", describeShape(text, true));
      observations.set("plain", describeShape(seen("link_plain"), false));
      expect(text).toContain("One table.");
      expect(text).not.toContain('"files"');
      expect(text).toMatch(/Resource Link: table\.csv at file:\/\/uploads\/[^/]+\/table\.csv/);
      expect(text).toMatch(/Resource URI: file:\/\/uploads\/[^/]+\/table\.csv/);
    });

    it("keeps the link text of the pre-contract shape (the client that ignores structuredContent)", () => {
      expect(seen("legacy_structured")).toMatch(/Resource URI: file:\/\/uploads\//);
    });

    it("gets a preview, the artifact URI and the download URL for text over its budget", () => {
      const text = seen("big_text");
      expect(observations.set("fitLongText", describeFitted(text))).toBe(
        "a preview, the artifact URI, the download URL",
      );
      expect(text.length).toBeLessThan(30_000);
      expect(text).not.toContain("Output too large");
      expect(text).toContain("BIG-TEXT-HEAD");
      expect(text).not.toContain("BIG-TEXT-TAIL");
      expect(text).toMatch(/Resource URI: artifact:\/\/sessions\/[^/]+\/[^/]+\/big\.txt/);
      expect(text).toMatch(/Download URL \(valid until [^)]+\): http:\/\/127\.0\.0\.1:9\/files\//);
    });

    it("cuts text over 40,000 characters itself (8,000 head + 32,000 tail): why its budget is 30,000", () => {
      expect(observations.set("rawLongText", describeLongText(seen("big_text_raw")))).toMatch(/^cut to /);
      const text = seen("big_text_raised");
      observations.set("raisedLongText", describeLongText(text));
      expect(text).toContain("Output too large. Showing first 8,000 and last 32,000 characters.");
      expect(text.length).toBeLessThan(41_000);
    });

    it("gets a stored non-media blob as its URI and download URL, never inlineData", () => {
      const part = model.results.get("blob") ?? "";
      expect(part).not.toContain("inlineData");
      const text = seen("blob");
      expect(observations.set("fitBlob", describeFitted(part, "BwcHBwcH"))).toBe(
        "the artifact URI, the download URL; no bytes",
      );
      expect(text).toMatch(/Resource URI: artifact:\/\/sessions\/[^/]+\/[^/]+\/archive\.bin/);
      expect(text).toContain("Download URL");
    });

    it.skipIf(!hasPandoc)("gets pandoc-converter's HTML in the text", () => {
      const name = `mcp_pandoc_${pandocConverter.tool}`;
      const text = outputOf(model.results.get(name) ?? "", name);
      expect(text).toContain("<em>twelve</em>");
      observations.set("pandoc", "the HTML (in the text block)");
    });

    scenarioTests(
      () => ({
        scenario,
        observations,
        receivedImages: (call) => model.images.get(scenario.calls[call]) ?? [],
        clientInfo: "gemini-cli-mcp-client",
        received: (call) => {
          const name = scenario.calls[call];
          const part = model.results.get(name);
          if (part === undefined) throw new Error(`the model never received ${call}'s result`);
          return outputOf(part, name.split("#")[0] as string);
        },
      }),
      true,
    );

    tableTest(() => ({ observations }));
  },
);
