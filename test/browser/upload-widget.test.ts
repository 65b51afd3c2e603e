import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  createMcpHandler,
  type McpHttpHandler,
  McpServer as McpServerV2,
} from "@modelcontextprotocol/server";
import type { Frame, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { defaultScope } from "../../src/scope/scope.js";
import { uploadWidgetResource } from "../../src/ui/upload-widget.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { close, listen } from "../http/server-helpers.js";
import { sha256 } from "../support/helpers.js";
import { v1Sessions } from "../support/v1-sessions.js";
import {
  browserAvailable,
  type LaunchedBrowser,
  launchChromium,
  screenshotPath,
} from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";
import { hostAppScript } from "./support/host-bundle.js";

const SCOPE = "widget-chat";
const TOOL = "upload_files";
/** SDK v2: the host's bearer token, standing for the user SCOPE (the v2 server has no session). */
const TOKEN = "widget-host-token-0123456789";

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The host's sandbox origin: serves the app HTML the host posts to it, with a CSP built from the
 * resource's `_meta.ui.csp` (inline code allowed, `connect-src` = connectDomains only).
 */
async function startSandbox(): Promise<{ origin: string; server: Server; csp: string[] }> {
  const csp: string[] = [];
  const server = createServer(async (req, res) => {
    if (req.method !== "POST" || req.url !== "/render") {
      res.writeHead(404).end();
      return;
    }
    const form = new URLSearchParams(await readBody(req));
    const policy = [
      "default-src 'none'",
      "script-src 'unsafe-inline'",
      "style-src 'unsafe-inline'",
      `connect-src ${form.get("connect") || "'none'"}`,
      "img-src data:",
    ].join("; ");
    csp.push(policy);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": policy });
    res.end(form.get("html") ?? "");
  });
  return { origin: await listen(server), server, csp };
}

/**
 * The same widget and host on both SDK generations. v1: a stateful SDK v1 server, the host's v1
 * `Client` forwarded by `AppBridge`. v2: a stateless SDK v2 server (`createMcpHandler`, scope = the
 * bearer token's user), the host's v2 `Client` pinned to 2026-07-28 answering the app's `tools/call`.
 */
describe.runIf(browserAvailable()).each(["v1", "v2"] as const)(
  "MCP App upload widget in Chromium (SDK %s)",
  (sdk) => {
    let browser: LaunchedBrowser;
    let files: FileServer;
    let sandbox: Awaited<ReturnType<typeof startSandbox>>;
    let hostScript: string;
    let page: Page;
    let widgetUploads: UploadHandleResolver;
    let registry: ResourceRegistry;
    const sessions = v1Sessions(() => mcpServer(new McpServer({ name: "widget-test", version: "1.0.0" })));
    let v2Handler: McpHttpHandler | undefined;
    /** v1 keeps the screenshot names of the docs; v2 adds a suffix. */
    const shot = (name: string) => screenshotPath(sdk === "v1" ? name : name.replace(/\.png$/, "-v2.png"));

    /**
     * The server as a package user writes it: the upload tool with the widget (`attach(server, {
     * widget })`), and a resource registry attached afterwards on the same server (both list and read
     * resources through the host port).
     */
    function mcpServer<S extends McpServer | McpServerV2>(server: S): S {
      const widget = uploadWidgetResource({
        uploadOrigin: files.origin,
        toolName: TOOL,
        domain: "widget-test.sandbox.example",
      });
      widgetUploads.attach(server, { widget });
      registry.attach(server);
      return server;
    }

    beforeAll(async () => {
      browser = await launchChromium();
      sandbox = await startSandbox();
      hostScript = await hostAppScript();
      files = await startFileServer({
        maxBytes: 4 * 1024 * 1024,
        maxFiles: 3,
        cors: [sandbox.origin],
        node: async (req, res) => {
          const url = new URL(req.url ?? "/", "http://x");
          if (url.pathname === "/host.html") {
            res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
            res.end(
              '<!doctype html><html lang="en"><title>host</title><body><script src="/host.js"></script></body></html>',
            );
            return true;
          }
          if (url.pathname === "/host.js") {
            res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(hostScript);
            return true;
          }
          if (url.pathname !== "/mcp") return false;
          if (sdk === "v2") {
            v2Handler ??= createMcpHandler(() =>
              mcpServer(new McpServerV2({ name: "widget-test", version: "1.0.0" })),
            );
            const handler = v2Handler;
            const authInfo =
              req.headers.authorization === `Bearer ${TOKEN}`
                ? { token: TOKEN, clientId: "test-host", scopes: [], extra: { sub: SCOPE } }
                : undefined;
            toNodeHandler((request) => handler.fetch(request, authInfo ? { authInfo } : {}))(req, res);
            return true;
          }
          await sessions.handle(req, res);
          return true;
        },
      });
      widgetUploads = new UploadHandleResolver({
        store: files.store,
        state: files.state,
        minter: files.minter,
        maxBytes: 4 * 1024 * 1024,
        maxFiles: 3,
        toolName: TOOL,
        // v2: the authenticated user (SCOPE), carried by every request of the host's client.
        scope: sdk === "v1" ? () => SCOPE : defaultScope,
      });
      registry = new ResourceRegistry({
        store: files.store,
        scope: sdk === "v1" ? () => SCOPE : defaultScope,
      });
    });
    afterAll(async () => {
      await sessions.close();
      await v2Handler?.close();
      await files?.close();
      if (sandbox) await close(sandbox.server);
      await browser?.close();
    });
    afterEach(async () => {
      await page?.close();
    });

    async function openHost(query = ""): Promise<Frame> {
      page = await browser.context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(String(error)));
      await page.goto(
        `${files.origin}/host.html?sandbox=${encodeURIComponent(sandbox.origin)}&tool=${TOOL}&client=${sdk}&token=${TOKEN}${query}`,
      );
      await expect
        .poll(
          async () =>
            page.evaluate(
              () => (window as unknown as { host: { initialized: boolean; error?: string } }).host,
            ),
          {
            timeout: 15_000,
          },
        )
        .toMatchObject({ initialized: true });
      const frame = page.frames().find((candidate) => candidate.url().startsWith(`${sandbox.origin}/render`));
      if (!frame) throw new Error("no widget frame");
      expect(errors).toEqual([]);
      return frame;
    }

    const hostRecord = () =>
      page.evaluate(
        () =>
          (
            window as unknown as {
              host: {
                messages: unknown[];
                contexts: unknown[];
                resourceUri: string;
                toolCalls: number;
                protocolVersion?: string;
              };
            }
          ).host,
      );

    it("renders on another origin, uploads a picked file with the right sha256, and tells the host the handle", async () => {
      const frame = await openHost();
      expect(new URL(frame.url()).origin).toBe(sandbox.origin);
      expect(new URL(frame.url()).origin).not.toBe(files.origin);
      expect(sandbox.csp.at(-1)).toContain(`connect-src ${files.origin}`);
      await expect
        .poll(() => frame.locator("#limits").textContent())
        .toMatch(/Up to 3 files, at most 4 MiB each/);

      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      // The widget says when its link expires (date, time and zone) once it has one, and sizes in the
      // limit's units (MiB next to a MiB limit).
      expect(await frame.locator("#limits").textContent()).toMatch(
        /The link expires (.+ \(.+\), )?\d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/,
      );
      await frame.setInputFiles("#picker", [{ name: "dataset.csv", mimeType: "text/csv", buffer: bytes }]);
      expect(await frame.locator("#files .size").textContent()).toBe("3 MiB");
      await page.screenshot({ path: await shot("upload-widget-chosen.png") });
      await frame.locator("#upload").click();
      await frame.locator("#done").waitFor({ state: "visible" });
      expect(
        await frame.locator("#files progress").evaluate((bar) => (bar as HTMLProgressElement).value),
      ).toBe(100);
      await page.screenshot({ path: await shot("upload-widget-done.png") });

      const stored = await files.files(SCOPE);
      const file = stored.find((candidate) => candidate.name === "dataset.csv");
      expect(file?.sha256).toBe(sha256(bytes));
      expect(file?.size).toBe(bytes.length);
      expect(files.uploadOrigins.at(-1)).toBe(sandbox.origin); // a real cross-origin upload

      await expect.poll(async () => (await hostRecord()).messages.length).toBe(1);
      const host = await hostRecord();
      // One file goes through tus: the handle told is the upload's (it stands for its one file).
      const told = host.contexts[0] as { structuredContent: { uploads: Array<{ handle: string }> } };
      const handle = told.structuredContent.uploads[0]?.handle as string;
      expect(handle.startsWith("upload://sessions/")).toBe(true);
      expect(handle).not.toContain(SCOPE);
      expect(host.resourceUri).toBe("ui://mcp-file-bridge/upload.html");
      if (sdk === "v2") expect(host.protocolVersion).toBe("2026-07-28");
      expect(JSON.stringify(host.messages[0])).toContain(handle);
      expect(host.messages[0]).toMatchObject({ role: "user", content: [{ type: "text" }] });
      expect(host.contexts).toHaveLength(1);
      expect(host.contexts[0]).toMatchObject({
        structuredContent: { uploads: [{ handle, sha256: sha256(bytes), name: "dataset.csv" }] },
      });
      expect(await frame.locator("#done-text").textContent()).toMatch(/The chat now knows about your files/);
      // The handle resolves in the tool's scope.
      expect((await files.uploads.fileFor(handle, { scope: SCOPE }))?.sha256).toBe(sha256(bytes));
    });

    it("falls back to one file at a time when a multiple pick returns no file, and fetches a ticket itself", async () => {
      // No tool result from the host this time: the widget calls the tool through the host on upload.
      const frame = await openHost("&result=0");
      expect(await frame.locator("#limits").textContent()).toBe(
        "Choose files; the upload link is made when you upload.",
      );
      // Claude's mobile apps: `<input type=file multiple>` comes back empty.
      await frame
        .locator("#picker")
        .evaluate((input) => input.dispatchEvent(new Event("change", { bubbles: true })));
      await frame.locator("#pick-hint").waitFor({ state: "visible" });
      expect(await frame.locator("#picker").evaluate((input) => (input as HTMLInputElement).multiple)).toBe(
        false,
      );
      const first = Buffer.from("first file\n");
      const second = randomBytes(70_000);
      await frame.setInputFiles("#picker", [{ name: "one.txt", mimeType: "text/plain", buffer: first }]);
      await frame.setInputFiles("#picker", [
        { name: "two.bin", mimeType: "application/octet-stream", buffer: second },
      ]);
      expect(await frame.locator("#files .name").allTextContents()).toEqual(["one.txt", "two.bin"]);
      await page.screenshot({ path: await shot("upload-widget-single-pick.png") });
      const before = (await hostRecord()).toolCalls;
      expect(before).toBe(0);
      await frame.locator("#upload").click();
      await frame.locator("#done").waitFor({ state: "visible" });
      const byName = new Map((await files.files(SCOPE)).map((file) => [file.name, file]));
      expect(byName.get("one.txt")?.sha256).toBe(sha256(first));
      expect(byName.get("two.bin")?.sha256).toBe(sha256(second));
      const host = await hostRecord();
      expect(JSON.stringify(host.messages.at(-1))).toContain(
        files.uploads.handleFor(byName.get("two.bin") as never),
      );
    });
  },
);
