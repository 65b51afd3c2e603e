/**
 * A tool that waits for a person's 64 MiB upload through the upload page in Chromium (tus) gets the
 * file after the client's request timeout would have passed: on the open call, kept alive by MCP
 * progress while the bytes arrive (the client's `resetTimeoutOnProgress`; the bytes go through a
 * proxy at a fixed rate so the upload lasts longer than the timeout), and through the `await_upload`
 * poll path while the page's bytes are held until the test has polled past the timeout. On
 * 2026-07-28 (SDK v2 over HTTP) the first round answers `input_required`; while the page's bytes are
 * held, each retry ends after `roundWait` with a state-only `input_required` (this era's poll path),
 * then the paced bytes keep the last retry alive by progress, and the tool gets the file through its
 * `FileBridge`.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningV2Server, serveHttpV2 } from "../../examples/shared/serve-http-v2.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { FileRequestOutcome } from "../../src/uploads/request-files-flow.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { sha256 } from "../support/helpers.js";
import { connectInMemory } from "../support/in-memory-client.js";
import { browserAvailable, type LaunchedBrowser, launchChromium } from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";
import { startTusProxy, type TusProxy } from "./support/tus-proxy.js";

const MiB = 1024 * 1024;
const SIZE = 64 * MiB;
/** The client's request timeout here (the SDK's default is 60 s). */
const CLIENT_TIMEOUT_MS = 2000;
/**
 * The open call's timeout: it also covers the person opening the page and picking the file before a
 * byte (and so the first progress) arrives, which takes a few seconds on a loaded machine.
 */
const OPEN_CALL_TIMEOUT_MS = 4000;
/** The proxy's rate for the page's bytes: 64 MiB take at least 5.3 s, longer than that timeout. */
const RATE = 12 * MiB;

describe.runIf(browserAvailable())("a tool waiting for a person's 64 MiB upload through the page", () => {
  let browser: LaunchedBrowser;
  let server: FileServer;
  let proxy: TusProxy;
  let uploads: UploadHandleResolver;
  let bridge: FileBridge;
  let dir: string;
  let path: string;
  let bytes: Buffer;

  beforeAll(async () => {
    browser = await launchChromium();
    server = await startFileServer({ maxBytes: SIZE, maxFiles: 1 });
    proxy = await startTusProxy(server.origin);
    dir = await mkdtemp(join(tmpdir(), "waiting-tool-"));
    bridge = new FileBridge({ tmpDir: join(dir, "bridge"), maxBytes: SIZE });
    uploads = new UploadHandleResolver({
      bridge,
      store: server.store,
      state: server.state,
      minter: server.minter,
      maxBytes: SIZE,
      maxFiles: 1,
      scope: () => "waiting",
      // roundWait: 2026-07-28 only (a retry that sees no bytes for 1 s answers the next round).
      fileRequests: { pollInterval: "50ms", roundWait: "1s" },
    });
    bytes = randomBytes(SIZE);
    path = join(dir, "video.mp4");
    await writeFile(path, bytes);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    await browser?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  function mcpServer(): McpServer {
    const mcp = new McpServer({ name: "waiting", version: "1.0.0" });
    mcp.registerTool("needs_video", { description: "Needs a video" }, async (extra) => {
      const outcome = await uploads.requestFiles(mcp, extra, { message: "Upload the video", timeout: "5m" });
      return outcome.result;
    });
    uploads.attachAwaitTool(mcp);
    return mcp;
  }

  async function connect(capabilities: ConstructorParameters<typeof Client>[1]): Promise<Client> {
    const { client } = await connectInMemory(
      mcpServer(),
      { name: "waiting-client", version: "1.0.0" },
      capabilities,
    );
    return client;
  }

  /** The person: opens the link (through the proxy), picks the file, uploads, waits for done. */
  async function personUploads(url: string, tab?: Page): Promise<void> {
    const page = tab ?? (await browser.context.newPage());
    try {
      await page.goto(url.replace(server.origin, proxy.origin));
      await page.setInputFiles("#picker", path);
      await page.locator("#upload").click();
      await page.locator("#done").waitFor({ state: "visible", timeout: 60_000 });
    } finally {
      await page.close();
    }
  }

  function expectVideo(result: CallToolResult): void {
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as {
      status: string;
      files: Array<{ size: number; sha256: string }>;
    };
    expect(structured.status).toBe("uploaded");
    expect(structured.files.map((file) => [file.size, file.sha256])).toEqual([[SIZE, sha256(bytes)]]);
  }

  it("on the open call: progress while the bytes arrive keeps the call alive past the timeout", async () => {
    const client = await connect({ capabilities: { elicitation: { url: {} } } });
    // The person's browser tab is open already; the link arrives with the elicitation.
    const tab = await browser.context.newPage();
    let person: Promise<void> | undefined;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      person = personUploads((request.params as { url: string }).url, tab);
      return { action: "accept" };
    });
    proxy.throttle(RATE);
    const progress: number[] = [];
    const started = Date.now();
    try {
      const result = (await client.callTool({ name: "needs_video", arguments: {} }, CallToolResultSchema, {
        timeout: OPEN_CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        onprogress: (update) => progress.push(update.progress),
      })) as CallToolResult;
      await person;
      expect(Date.now() - started).toBeGreaterThan(OPEN_CALL_TIMEOUT_MS);
      expectVideo(result);
      expect(progress.length).toBeGreaterThanOrEqual(4);
      expect([...progress].sort((x, y) => x - y)).toEqual(progress);
    } finally {
      proxy.throttle(undefined);
      await client.close();
    }
  }, 90_000);

  it("through await_upload: pending past the timeout while the page's bytes are held, then the file", async () => {
    const client = await connect({});
    const asked = (await client.callTool({ name: "needs_video", arguments: {} })) as CallToolResult;
    const { request_id, url } = asked.structuredContent as { request_id: string; url: string };
    const held = proxy.hold();
    const person = personUploads(url);
    await held;
    const statuses: string[] = [];
    let last: CallToolResult | undefined;
    for (let call = 0; call < 200; call++) {
      last = (await client.callTool(
        { name: "await_upload", arguments: { request_id, wait_seconds: 1 } },
        CallToolResultSchema,
        { timeout: CLIENT_TIMEOUT_MS },
      )) as CallToolResult;
      const status = (last.structuredContent as { status: string }).status;
      statuses.push(status);
      // Three pending answers of 1 s each: the wait is past the client's 2 s timeout; let go.
      if (statuses.length === 3) proxy.release();
      if (status !== "pending") break;
    }
    proxy.release(); // (already released unless the loop ended early)
    await person;
    expect(statuses.slice(0, 3)).toEqual(["pending", "pending", "pending"]);
    expect(statuses.at(-1)).toBe("uploaded");
    expectVideo(last as CallToolResult);
    await client.close();
  }, 90_000);

  /**
   * SDK v2 over HTTP (2026-07-28 clients get no session): `needs_video` asks through `requestFiles`
   * and, once uploaded, resolves the handle through the bridge and hashes the local copy it got.
   */
  async function modernServer(seen: FileRequestOutcome[], onOutcome: () => void): Promise<RunningV2Server> {
    return serveHttpV2({
      createServer: () => {
        const mcp = new McpServerV2({ name: "waiting", version: "1.0.0" });
        mcp.registerTool("needs_video", { description: "Needs a video" }, async (ctx) => {
          const outcome = await uploads.requestFiles(mcp, ctx, {
            message: "Upload the video",
            timeout: "5m",
          });
          seen.push(outcome);
          onOutcome();
          if (outcome.status !== "uploaded") return outcome.result;
          const file = await bridge.resolve(outcome.handles[0], { scope: "waiting" });
          try {
            const hash = createHash("sha256");
            await pipeline(createReadStream(file.path), hash);
            return { content: [{ type: "text", text: `${file.name} ${file.size} ${hash.digest("hex")}` }] };
          } finally {
            await file.dispose();
          }
        });
        return mcp;
      },
    });
  }

  it("2026-07-28: input_required; while the page's bytes are held the retries go round past the timeout, then live on progress; the tool gets the file through the bridge", async () => {
    const seen: FileRequestOutcome[] = [];
    // Resolves once `count` outcomes were seen (each a call of the tool: the first, then each retry).
    const waiters: Array<{ count: number; done: () => void }> = [];
    const outcomes = (count: number) => new Promise<void>((done) => waiters.push({ count, done }));
    const running = await modernServer(seen, () => {
      for (const waiter of waiters) if (seen.length >= waiter.count) waiter.done();
    });
    const client = new ClientV2(
      { name: "modern", version: "1.0.0" },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(running.mcpUrl));
    const tab = await browser.context.newPage();
    const opened: string[] = [];
    let person: Promise<void> | undefined;
    client.setRequestHandler("elicitation/create", async (request) => {
      const { url } = request.params as { url: string };
      opened.push(url);
      person = personUploads(url, tab);
      return { action: "accept" };
    });
    const held = proxy.hold();
    const progress: number[] = [];
    const started = Date.now();
    try {
      const call = client.callTool(
        { name: "needs_video", arguments: {} },
        {
          timeout: OPEN_CALL_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          onprogress: (update) => progress.push(update.progress),
        },
      );
      // The page is uploading and its bytes are held: three more rounds of 1 s go by with no byte.
      await held;
      await outcomes(seen.length + 3);
      proxy.throttle(RATE);
      proxy.release();
      const result = (await call) as CallToolResult;
      await person;
      expect(Date.now() - started).toBeGreaterThan(OPEN_CALL_TIMEOUT_MS);
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: "text", text: `video.mp4 ${SIZE} ${sha256(bytes)}` }]);
      // One link, asked once; every round waited for that request's upload.
      expect(opened).toHaveLength(1);
      const statuses = seen.map((outcome) => outcome.status);
      expect(statuses.slice(0, 4)).toEqual(Array(4).fill("input_required"));
      expect(statuses.at(-1)).toBe("uploaded");
      expect(new Set(seen.map((outcome) => outcome.requestId)).size).toBe(1);
      // The bytes (5.3 s at the proxy's rate) kept the last retry alive past its 4 s timeout.
      expect(progress.length).toBeGreaterThanOrEqual(4);
      expect([...progress].sort((x, y) => x - y)).toEqual(progress);
    } finally {
      proxy.release();
      proxy.throttle(undefined);
      await client.close();
      await running.close();
    }
  }, 90_000);
});
