/**
 * `request_document` of the upload-page example on SDK v2, with a person in Chromium: the client is
 * asked to open the upload page (2026-07-28: an `input_required` URL elicitation, then the retry;
 * 2025: `elicitation/create` on the example's MCP session), the page is opened in a real browser, the
 * file is picked and uploaded there, and the tool returns it.
 */
import { randomBytes } from "node:crypto";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start, type UploadPageServer } from "../../examples/upload-page/server.js";
import { scopeRef } from "../../src/scope/scope.js";
import { sha256 } from "../support/helpers.js";
import {
  browserAvailable,
  type LaunchedBrowser,
  launchChromium,
  screenshotPath,
} from "./support/chromium.js";

const TOKEN = "token-carol-0123456789";
const requestInit = { headers: { authorization: `Bearer ${TOKEN}` } };

describe.runIf(browserAvailable())(
  "upload-page on SDK v2: request_document with a person in Chromium",
  () => {
    let browser: LaunchedBrowser;
    let app: UploadPageServer;
    beforeAll(async () => {
      browser = await launchChromium();
      app = await start({ sdk: "v2", tokens: { [TOKEN]: "carol" } });
    });
    afterAll(async () => {
      await app?.close();
      await browser?.close();
    });

    /** Opens the link, checks the request text, picks the file, uploads, waits for the done state. */
    async function personUploads(url: string, name: string, buffer: Buffer, shot: string): Promise<void> {
      const page = await browser.context.newPage();
      try {
        await page.goto(url);
        expect(await page.locator("#message").textContent()).toBe("Please upload the document to work on.");
        await page.setInputFiles("#picker", [{ name, mimeType: "application/octet-stream", buffer }]);
        await page.locator("#upload").click();
        await page.locator("#done").waitFor({ state: "visible" });
        await page.screenshot({ path: await screenshotPath(shot), fullPage: true });
      } finally {
        await page.close();
      }
    }

    function expectFile(result: unknown, name: string, bytes: Buffer): void {
      const call = result as CallToolResult;
      expect(call.isError).toBeFalsy();
      const structured = call.structuredContent as { status: string; files: Array<Record<string, unknown>> };
      expect(structured.status).toBe("uploaded");
      expect(structured.files).toEqual([
        expect.objectContaining({ name, size: bytes.length, sha256: sha256(bytes) }),
      ]);
      expect(
        String(structured.files[0]?.handle).startsWith(`upload://sessions/${scopeRef("carol", app.minter)}/`),
      ).toBe(true);
    }

    it("2026-07-28: the v2 Client gets input_required, the person uploads in Chromium, the retry returns the file", async () => {
      const client = new ClientV2(
        { name: "modern", version: "1.0.0" },
        { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new StreamableHTTPClientTransportV2(app.mcpUrl, { requestInit }));
      const bytes = randomBytes(1024 * 1024 + 3);
      let person: Promise<void> | undefined;
      client.setRequestHandler("elicitation/create", async (request) => {
        const params = request.params as { mode?: string; url: string };
        if (params.mode !== "url") return { action: "decline" };
        person = personUploads(params.url, "report.pdf", bytes, "elicitation-page-v2-modern.png");
        return { action: "accept" };
      });
      try {
        const result = await client.callTool({ name: "request_document", arguments: {} });
        await person;
        expectFile(result, "report.pdf", bytes);
      } finally {
        await client.close();
      }
    });

    it("2025 era: a v1 Client on its MCP session is asked, the person uploads in Chromium, the tool returns the file", async () => {
      const client = new Client(
        { name: "legacy", version: "1.0.0" },
        { capabilities: { elicitation: { url: {} } } },
      );
      await client.connect(new StreamableHTTPClientTransport(app.mcpUrl, { requestInit }));
      const bytes = randomBytes(700_000);
      let person: Promise<void> | undefined;
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        if (request.params.mode !== "url") return { action: "decline" };
        person = personUploads(request.params.url, "scan.png", bytes, "elicitation-page-v2-legacy.png");
        return { action: "accept" };
      });
      try {
        const result = await client.callTool({ name: "request_document", arguments: {} });
        await person;
        expectFile(result, "scan.png", bytes);
      } finally {
        await client.close();
      }
    });
  },
);
