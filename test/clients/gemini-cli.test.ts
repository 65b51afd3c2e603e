/**
 * Gemini CLI (the real CLI from npm, pinned) driven offline against the output server: a fake
 * Gemini generateContent server on 127.0.0.1 plays the model, calls each tool in turn and keeps the
 * functionResponse Gemini CLI sent back. The assertions are on what the model received.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCli, offlineEnv, outputServerCommand, run, tempHome } from "./support/cli.js";
import { type FakeModel, startFakeModel } from "./support/fake-model.js";
import { gemini } from "./support/gemini.js";

/** The version the matrix (and docs/client-compatibility.md) measured. */
const GEMINI_CLI_VERSION = "0.61.0";

const TOOLS = [
  "whoami",
  "link_structured",
  "legacy_structured",
  "big_text",
  "big_text_raised",
  "blob",
] as const;

const installed = await installCli("@google/gemini-cli", GEMINI_CLI_VERSION, "gemini");
if (installed.skip !== undefined) console.warn(`client matrix: Gemini CLI skipped: ${installed.skip}`);

describe.skipIf(installed.bin === undefined)(
  `Gemini CLI ${GEMINI_CLI_VERSION}: what reaches the model`,
  () => {
    let model: FakeModel;
    let cleanup: () => Promise<void> = async () => undefined;
    /** The text output Gemini CLI put in the functionResponse. */
    const seen = (tool: (typeof TOOLS)[number]): string => {
      const part = model.results.get(tool);
      if (part === undefined) throw new Error(`the model never received ${tool}'s result`);
      const parsed = JSON.parse(part.split("\n")[0] as string) as {
        functionResponse: { name: string; response: { output: string } };
      };
      expect(parsed.functionResponse.name).toBe(`mcp_files_${tool}`);
      return parsed.functionResponse.response.output;
    };

    beforeAll(async () => {
      model = await startFakeModel(gemini);
      const { home, remove } = await tempHome();
      cleanup = remove;
      await mkdir(join(home, ".gemini"));
      const settings = {
        security: { auth: { selectedType: "gemini-api-key" } },
        mcpServers: { files: { ...outputServerCommand(), trust: true } },
      };
      await writeFile(join(home, ".gemini", "settings.json"), JSON.stringify(settings));
      const prompt = TOOLS.map((tool) => `CALL ${tool}`).join("\n");
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
    }, 300_000);

    afterAll(async () => {
      await model?.close();
      await cleanup();
    });

    it("sends clientInfo.name gemini-cli-mcp-client (the key of its inline budget)", () => {
      expect(seen("whoami")).toContain("client=gemini-cli-mcp-client");
    });

    it("ignores structuredContent: the text blocks and the link line carry the file", () => {
      const text = seen("link_structured");
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
      expect(text.length).toBeLessThan(30_000);
      expect(text).not.toContain("Output too large");
      expect(text).toContain("BIG-TEXT-HEAD");
      expect(text).not.toContain("BIG-TEXT-TAIL");
      expect(text).toMatch(/Resource URI: artifact:\/\/sessions\/[^/]+\/[^/]+\/big\.txt/);
      expect(text).toMatch(/Download URL \(valid until [^)]+\): http:\/\/127\.0\.0\.1:9\/files\//);
    });

    it("cuts text over 40,000 characters itself (8,000 head + 32,000 tail): why its budget is 30,000", () => {
      const text = seen("big_text_raised");
      expect(text).toContain("Output too large. Showing first 8,000 and last 32,000 characters.");
      expect(text.length).toBeLessThan(41_000);
    });

    it("gets a stored non-media blob as its URI and download URL, never inlineData", () => {
      const part = model.results.get("blob") ?? "";
      expect(part).not.toContain("inlineData");
      const text = seen("blob");
      expect(text).toMatch(/Resource URI: artifact:\/\/sessions\/[^/]+\/[^/]+\/archive\.bin/);
      expect(text).toContain("Download URL");
    });
  },
);
