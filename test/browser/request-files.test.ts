import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { sha256 } from "../support/helpers.js";
import { v1Sessions } from "../support/v1-sessions.js";
import {
  browserAvailable,
  type LaunchedBrowser,
  launchChromium,
  screenshotPath,
} from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";

const SCOPE = "elicit-chat";

describe.runIf(browserAvailable())(
  "uploads.requestFiles: URL-mode elicitation end to end in Chromium",
  () => {
    let browser: LaunchedBrowser;
    let files: FileServer;
    let uploads: UploadHandleResolver;
    const sessions = v1Sessions(() => mcpServer());
    const outcomes: Array<{ status: string; handles?: string[] }> = [];

    /** A tool that needs a contract from the person: the helper does the asking. */
    function mcpServer(): McpServer {
      const server = new McpServer({ name: "elicit-test", version: "1.0.0" });
      server.registerTool(
        "review_contract",
        { description: "Reviews a contract the user uploads" },
        async (extra) => {
          const outcome = await uploads.requestFiles(server, extra, {
            message: "Upload the contract to review",
            maxFiles: 2,
          });
          outcomes.push({ status: outcome.status, ...(outcome.handles ? { handles: outcome.handles } : {}) });
          if (outcome.status !== "uploaded") return outcome.result;
          const names = outcome.files.map((file) => file.name).join(", ");
          return {
            content: [...outcome.result.content, { type: "text", text: `Reviewed: ${names}` }],
            structuredContent: outcome.result.structuredContent,
          } as CallToolResult;
        },
      );
      return server;
    }

    beforeAll(async () => {
      browser = await launchChromium();
      files = await startFileServer({
        maxBytes: 4 * 1024 * 1024,
        maxFiles: 4,
        node: async (req, res) => {
          if (!req.url?.startsWith("/mcp")) return false;
          await sessions.handle(req, res);
          return true;
        },
      });
      uploads = new UploadHandleResolver({
        store: files.store,
        state: files.state,
        minter: files.minter,
        maxBytes: 4 * 1024 * 1024,
        maxFiles: 4,
        scope: () => SCOPE,
        fileRequests: { pollInterval: "50ms" },
      });
    });
    afterAll(async () => {
      await sessions.close();
      await files?.close();
      await browser?.close();
    });

    async function connect(
      capabilities: ConstructorParameters<typeof Client>[1],
      over: "memory" | "http" = "memory",
    ): Promise<Client> {
      const client = new Client({ name: "elicit-client", version: "1.0.0" }, capabilities);
      if (over === "http") {
        await client.connect(new StreamableHTTPClientTransport(new URL(`${files.origin}/mcp`)));
        return client;
      }
      const server = mcpServer();
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
      return client;
    }

    /** A person in Chromium: opens the link, picks the files, uploads, waits for the done state. */
    async function personUploads(url: string, picks: Array<{ name: string; buffer: Buffer }>, shot?: string) {
      const page = await browser.context.newPage();
      try {
        await page.goto(url);
        await page.setInputFiles(
          "#picker",
          picks.map((pick) => ({ ...pick, mimeType: "application/octet-stream" })),
        );
        if (shot) await page.screenshot({ path: await screenshotPath(shot), fullPage: true });
        await page.locator("#upload").click();
        await page.locator("#done").waitFor({ state: "visible" });
        return await page.locator("#message").textContent();
      } finally {
        await page.close();
      }
    }

    for (const over of ["memory", "http"] as const) {
      it(`asks the client to open the upload page, waits for the upload, and returns the files (${over})`, async () => {
        const client = await connect({ capabilities: { elicitation: { url: {} } } }, over);
        const completed: string[] = [];
        client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
          completed.push(notification.params.elicitationId);
        });
        const contract = randomBytes(2 * 1024 * 1024);
        const annex = Buffer.from("annex A\n");
        let elicited: { url: string; elicitationId: string; message: string } | undefined;
        let person: Promise<string | null> | undefined;
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          if (request.params.mode !== "url") return { action: "decline" };
          elicited = request.params;
          // The client shows the message, the person agrees; the browser work happens afterwards.
          person = personUploads(
            request.params.url,
            [
              { name: "contract.pdf", buffer: contract },
              { name: "annex.txt", buffer: annex },
            ],
            over === "memory" ? "elicitation-page.png" : undefined,
          );
          return { action: "accept" };
        });
        const result = (await client.callTool({ name: "review_contract", arguments: {} })) as CallToolResult;
        expect(await person).toBe("Upload the contract to review");
        expect(result.isError).toBeFalsy();
        expect((result.content.at(-1) as { text: string }).text).toBe("Reviewed: contract.pdf, annex.txt");
        const structured = result.structuredContent as {
          status: string;
          request_id: string;
          files: Array<{ name: string; sha256: string; handle: string }>;
        };
        expect(structured.status).toBe("uploaded");
        expect(structured.files.map((file) => [file.name, file.sha256])).toEqual([
          ["contract.pdf", sha256(contract)],
          ["annex.txt", sha256(annex)],
        ]);
        expect(elicited?.message).toBe("Upload the contract to review");
        expect(elicited?.elicitationId).toBe(structured.request_id);
        // The page was the upload URL itself, served by the routes.
        expect(elicited?.url.startsWith(`${files.origin}/files/upload/`)).toBe(true);
        await expect.poll(() => completed).toEqual([elicited?.elicitationId]);
        expect(outcomes.at(-1)).toEqual({
          status: "uploaded",
          handles: structured.files.map((file) => file.handle),
        });
        const stored = await uploads.fileFor(structured.files[0]?.handle as string, { scope: SCOPE });
        expect(stored?.sha256).toBe(sha256(contract));
        await client.close();
      });
    }

    it("returns a declined result when the person says no, and nothing waits", async () => {
      const client = await connect({ capabilities: { elicitation: { url: {} } } });
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
      const result = (await client.callTool({ name: "review_contract", arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ status: "declined" });
      expect(outcomes.at(-1)).toEqual({ status: "declined" });
      await client.close();
    });

    it("gives a client without URL elicitation the link as a result; the upload then resolves", async () => {
      const client = await connect({ capabilities: { elicitation: { form: {} } } });
      let asked = 0;
      client.setRequestHandler(ElicitRequestSchema, async () => {
        asked += 1;
        return { action: "cancel" };
      });
      const result = (await client.callTool({ name: "review_contract", arguments: {} })) as CallToolResult;
      expect(asked).toBe(0); // never sent elicitation/create to a client that cannot open URLs
      expect(result.isError).toBeFalsy();
      const fallback = result.structuredContent as {
        status: string;
        url: string;
        handle: string;
        request_id: string;
      };
      expect(fallback.status).toBe("upload_required");
      expect(outcomes.at(-1)).toEqual({ status: "upload_required" });
      expect((result.content[0] as { text: string }).text).toContain(fallback.url);
      expect(await uploads.fileRequests.filesOf(SCOPE, fallback.request_id)).toBeNull();
      const bytes = randomBytes(1000);
      await personUploads(fallback.url, [{ name: "later.bin", buffer: bytes }]);
      const uploaded = await uploads.fileRequests.filesOf(SCOPE, fallback.request_id);
      expect(uploaded?.map((file) => file.sha256)).toEqual([sha256(bytes)]);
      expect((await uploads.fileFor(fallback.handle, { scope: SCOPE }))?.sha256).toBe(sha256(bytes));
      await client.close();
    });
  },
);
