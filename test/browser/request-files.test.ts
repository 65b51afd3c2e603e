import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileRequests } from "../../src/ui/request-files.js";
import { sha256 } from "../support/helpers.js";
import {
  browserAvailable,
  type LaunchedBrowser,
  launchChromium,
  screenshotPath,
} from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";

const SCOPE = "elicit-chat";

/**
 * What src/mcp will hold (the SDK-facing half, see docs/people-in-the-loop.md): check the client's
 * URL-elicitation capability, send elicitation/create (mode "url"), wait for the upload, send
 * notifications/elicitation/complete, return the files — or the fallback without the capability.
 */
function registerReviewTool(server: McpServer, requests: FileRequests): void {
  server.registerTool(
    "review_contract",
    { description: "Reviews a contract the user uploads" },
    async (extra) => {
      const request = await requests.create(SCOPE, { message: "Upload the contract to review", maxFiles: 2 });
      if (!server.server.getClientCapabilities()?.elicitation?.url) {
        return request.fallbackResult() as CallToolResult;
      }
      const answer = await extra.sendRequest(
        { method: "elicitation/create", params: request.elicitation },
        ElicitResultSchema,
        {
          signal: extra.signal,
          timeout: request.expiresAt - Date.now(),
        },
      );
      if (answer.action !== "accept") return request.declinedResult(answer.action) as CallToolResult;
      const files = await request.wait({ signal: extra.signal });
      await extra.sendNotification({
        method: "notifications/elicitation/complete",
        params: { elicitationId: request.id },
      });
      return request.resultFor(files) as CallToolResult;
    },
  );
}

describe.runIf(browserAvailable())("URL-mode elicitation for files, end to end in Chromium", () => {
  let browser: LaunchedBrowser;
  let files: FileServer;
  let requests: FileRequests;

  beforeAll(async () => {
    browser = await launchChromium();
    files = await startFileServer({ maxBytes: 4 * 1024 * 1024, maxFiles: 4 });
    requests = new FileRequests({
      store: files.store,
      state: files.state,
      minter: files.minter,
      pollInterval: "50ms",
    });
  });
  afterAll(async () => {
    await files?.close();
    await browser?.close();
  });

  async function connect(capabilities: ConstructorParameters<typeof Client>[1]): Promise<Client> {
    const server = new McpServer({ name: "elicit-test", version: "1.0.0" });
    registerReviewTool(server, requests);
    const client = new Client({ name: "elicit-client", version: "1.0.0" }, capabilities);
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

  it("asks the client to open the upload page, waits for the upload, and returns the files", async () => {
    const client = await connect({ capabilities: { elicitation: { url: {} } } });
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
        "elicitation-page.png",
      );
      return { action: "accept" };
    });
    const result = (await client.callTool({ name: "review_contract", arguments: {} })) as CallToolResult;
    expect(await person).toBe("Upload the contract to review");
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as {
      files: Array<{ name: string; sha256: string; handle: string }>;
    };
    expect(structured.files.map((file) => [file.name, file.sha256])).toEqual([
      ["contract.pdf", sha256(contract)],
      ["annex.txt", sha256(annex)],
    ]);
    expect(elicited?.message).toBe("Upload the contract to review");
    expect(completed).toEqual([elicited?.elicitationId]);
    const stored = await files.uploads.fileFor(structured.files[0]?.handle as string, { scope: SCOPE });
    expect(stored?.sha256).toBe(sha256(contract));
    await client.close();
  });

  it("returns a declined result when the person says no", async () => {
    const client = await connect({ capabilities: { elicitation: { url: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    const result = (await client.callTool({ name: "review_contract", arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: "declined" });
    await client.close();
  });

  it("gives a client without URL elicitation the link as a result; the upload then resolves", async () => {
    const client = await connect({ capabilities: { elicitation: { form: {} } } });
    const result = (await client.callTool({ name: "review_contract", arguments: {} })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const fallback = result.structuredContent as {
      status: string;
      url: string;
      handle: string;
      request_id: string;
    };
    expect(fallback.status).toBe("upload_required");
    expect((result.content[0] as { text: string }).text).toContain(fallback.url);
    expect(await requests.filesOf(SCOPE, fallback.request_id)).toBeNull();
    const bytes = randomBytes(1000);
    await personUploads(fallback.url, [{ name: "later.bin", buffer: bytes }]);
    const uploaded = await requests.filesOf(SCOPE, fallback.request_id);
    expect(uploaded?.map((file) => file.sha256)).toEqual([sha256(bytes)]);
    expect((await files.uploads.fileFor(fallback.handle, { scope: SCOPE }))?.sha256).toBe(sha256(bytes));
    await client.close();
  });
});
