/**
 * Tools that wait for a person: the person's 64 MiB resumable upload arrives slower than the
 * client's request timeout, and the tool still gets the file — on the open call through MCP progress
 * (the client's `resetTimeoutOnProgress`), and through the `await_upload` poll path when the client
 * cannot open URLs. An expired link answers a clear `TOKEN_EXPIRED`, on the poll path and on the
 * 2026-07-28 `input_required` retry alike; an upload still receiving bytes at the expiry is waited for.
 */
import { randomBytes } from "node:crypto";
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { serveHttpV2 } from "../../../examples/shared/serve-http-v2.js";
import type { FileRequestOutcome } from "../../../src/uploads/request-files-flow.js";
import { tusEndpointOf } from "../../../src/uploads/upload-handle.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { sha256 } from "../../support/helpers.js";
import { connectInMemory } from "../../support/in-memory-client.js";
import { startTus, type TusHarness } from "./harness.js";

const SCOPE = "chat-1";
const SIZE = 64 * 1024 * 1024;
const CHUNK = 8 * 1024 * 1024;
const TUS = { "tus-resumable": "1.0.0" };
/** The client's request timeout in these tests (the SDK default is 60 s). */
const CLIENT_TIMEOUT_MS = 3000;

let harness: TusHarness;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await harness.close();
});

function resolver(ttl = "10m", roundWait = "25s"): UploadHandleResolver {
  return new UploadHandleResolver({
    store: harness.store,
    state: harness.state,
    minter: harness.minter,
    scope: () => SCOPE,
    maxBytes: SIZE,
    ttl: ttl as "10m",
    fileRequests: { pollInterval: "20ms", roundWait: roundWait as "25s" },
  });
}

/**
 * The person: a tus upload of `bytes` in 8 MiB PATCHes with a pause after each, so the whole upload
 * takes longer than the client's request timeout.
 */
async function personUploads(endpoint: string, bytes: Buffer, pauseMs: number): Promise<void> {
  const created = await fetch(endpoint, {
    method: "POST",
    headers: {
      ...TUS,
      "upload-length": String(bytes.length),
      "upload-metadata": `filename ${btoa("video.mp4")}`,
    },
  });
  expect(created.status).toBe(201);
  const url = created.headers.get("location") as string;
  for (let offset = 0; offset < bytes.length; offset += CHUNK) {
    const response = await fetch(url, {
      method: "PATCH",
      headers: { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": String(offset) },
      body: new Uint8Array(bytes.subarray(offset, offset + CHUNK)),
    });
    expect(response.status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

async function connect(
  server: McpServer,
  capabilities: ConstructorParameters<typeof Client>[1],
): Promise<Client> {
  const { client, close } = await connectInMemory(server, { name: "t", version: "1.0.0" }, capabilities);
  cleanups.push(close);
  return client;
}

/** A request body of `count` copies of `chunk`, one every 100 ms. */
function pacedBody(chunk: Buffer, count: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === count) return controller.close();
      if (sent > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      sent += 1;
      controller.enqueue(new Uint8Array(chunk));
    },
  });
}

/** A tus harness, a file request whose link lasts `ttl`, and a client of a server with `await_upload`. */
async function awaitToolFor(ttl: string) {
  harness = await startTus();
  const uploads = resolver(ttl);
  const request = await uploads.fileRequests.create(SCOPE, { message: "Upload it" });
  const server = new McpServer({ name: "t", version: "1.0.0" });
  uploads.attachAwaitTool(server);
  return { uploads, request, client: await connect(server, {}) };
}

describe("a tool that waits for a person's resumable upload", () => {
  it("gets the 64 MiB file on the open call after the client's timeout passed, kept alive by tus progress", async () => {
    harness = await startTus();
    const uploads = resolver();
    const bytes = randomBytes(SIZE);
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.registerTool("needs_video", { description: "needs a video" }, async (extra) => {
      const outcome = await uploads.requestFiles(server, extra, {
        message: "Upload the video",
        timeout: "5m",
      });
      return outcome.result;
    });
    const client = await connect(server, { capabilities: { elicitation: { url: {} } } });
    let person: Promise<void> | undefined;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { url: string };
      // The page URL is the ticket's upload URL; its tus endpoint takes the same ticket.
      person = personUploads(tusEndpointOf(params.url), bytes, 700);
      return { action: "accept" };
    });
    const progress: number[] = [];
    const started = Date.now();
    const result = (await client.callTool({ name: "needs_video", arguments: {} }, CallToolResultSchema, {
      timeout: CLIENT_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
      onprogress: (update) => progress.push(update.progress),
    })) as CallToolResult;
    await person;
    expect(Date.now() - started).toBeGreaterThan(CLIENT_TIMEOUT_MS);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: "uploaded" });
    const [file] = (result.structuredContent as { files: Array<{ sha256: string; size: number }> }).files;
    expect(file).toMatchObject({ sha256: sha256(bytes), size: SIZE });
    expect(progress.length).toBeGreaterThanOrEqual(4);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    expect(progress.at(-1)).toBeLessThanOrEqual(SIZE);
  }, 60_000);

  it("without URL elicitation, await_upload polls across calls shorter than the timeout: pending, then the file", async () => {
    harness = await startTus();
    const uploads = resolver();
    const bytes = randomBytes(SIZE);
    const server = new McpServer({ name: "t", version: "1.0.0" });
    server.registerTool("needs_video", { description: "needs a video" }, async (extra) => {
      const outcome = await uploads.requestFiles(server, extra, { message: "Upload the video" });
      return outcome.result;
    });
    uploads.attachAwaitTool(server);
    const client = await connect(server, {});
    const asked = (await client.callTool({ name: "needs_video", arguments: {} })) as CallToolResult;
    const { request_id, upload_url } = asked.structuredContent as { request_id: string; upload_url: string };
    const person = personUploads(tusEndpointOf(upload_url), bytes, 300);
    const statuses: string[] = [];
    let last: CallToolResult | undefined;
    for (let call = 0; call < 100; call++) {
      last = (await client.callTool(
        { name: "await_upload", arguments: { request_id, wait_seconds: 1 } },
        CallToolResultSchema,
        { timeout: CLIENT_TIMEOUT_MS },
      )) as CallToolResult;
      const status = (last.structuredContent as { status: string }).status;
      statuses.push(status);
      if (status !== "pending") break;
    }
    await person;
    expect(statuses[0]).toBe("pending");
    expect(statuses.at(-1)).toBe("uploaded");
    const [file] = ((last as CallToolResult).structuredContent as { files: Array<{ sha256: string }> }).files;
    expect(file?.sha256).toBe(sha256(bytes));
  }, 60_000);

  it("an await_upload pending past the expiry, while a PATCH begun before it still arrives, says the link expired but the upload goes on", async () => {
    const { uploads, request, client } = await awaitToolFor("2s");
    const chunk = randomBytes(64 * 1024);
    const chunks = 40;
    const created = await fetch(tusEndpointOf(request.uploadUrl), {
      method: "POST",
      headers: { ...TUS, "upload-length": String(chunk.length * chunks) },
    });
    expect(created.status).toBe(201);
    // One PATCH, begun before the expiry, sending a chunk every 100 ms until well past it.
    const body = pacedBody(chunk, chunks);
    const patch = fetch(
      created.headers.get("location") as string,
      {
        method: "PATCH",
        headers: { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": "0" },
        body,
        duplex: "half",
      } as RequestInit,
    );
    const expiresAt = (await uploads.fileRequests.expiryOf(SCOPE, request.id)) as number;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 200));
    const pending = (await client.callTool({
      name: "await_upload",
      arguments: { request_id: request.id, wait_seconds: 1 },
    })) as CallToolResult;
    expect(pending.isError).toBeFalsy();
    expect(pending.structuredContent).toMatchObject({ status: "pending", link_expired: true });
    const text = (pending.content as Array<{ text: string }>)[0]?.text ?? "";
    expect(text).toContain("the link expired at");
    expect(text).toContain("is still arriving");
    expect(text).not.toContain("works until");
    expect((await patch).status).toBe(204);
    const done = (await client.callTool({
      name: "await_upload",
      arguments: { request_id: request.id, wait_seconds: 5 },
    })) as CallToolResult;
    expect(done.structuredContent).toMatchObject({
      status: "uploaded",
      files: [{ sha256: sha256(Buffer.concat(Array(chunks).fill(chunk))) }],
    });
  }, 30_000);

  it("another scope's request is unknown, and an expired link answers TOKEN_EXPIRED", async () => {
    const { request, client } = await awaitToolFor("1s");
    const other = new UploadHandleResolver({
      store: harness.store,
      state: harness.state,
      minter: harness.minter,
      scope: () => "chat-2",
    });
    const otherServer = new McpServer({ name: "t", version: "1.0.0" });
    other.attachAwaitTool(otherServer);
    const otherClient = await connect(otherServer, {});
    const foreign = (await otherClient.callTool({
      name: "await_upload",
      arguments: { request_id: request.id, wait_seconds: 1 },
    })) as CallToolResult;
    expect(foreign.isError).toBe(true);
    expect(foreign.structuredContent).toMatchObject({ error: { code: "NOT_FOUND" } });
    const expired = (await client.callTool({
      name: "await_upload",
      arguments: { request_id: request.id, wait_seconds: 5 },
    })) as CallToolResult;
    expect(expired.isError).toBe(true);
    expect(expired.structuredContent).toMatchObject({ error: { code: "TOKEN_EXPIRED" } });
  }, 30_000);
});

describe("on 2026-07-28 (SDK v2): the input_required retry waits until the link expires", () => {
  /** A v2 server whose `needs_video` tool asks through `requestFiles`, recording each round's outcome. */
  async function modern(
    uploads: UploadHandleResolver,
    seen: FileRequestOutcome[],
    onOutcome: () => void = () => {},
  ): Promise<ClientV2> {
    const running = await serveHttpV2({
      createServer: () => {
        const server = new McpServerV2({ name: "t", version: "1.0.0" });
        server.registerTool("needs_video", { description: "needs a video" }, async (ctx) => {
          const outcome = await uploads.requestFiles(server, ctx, {
            message: "Upload the video",
            timeout: "5m",
          });
          seen.push(outcome);
          onOutcome();
          return outcome.result;
        });
        return server;
      },
    });
    const client = new ClientV2(
      { name: "modern", version: "1.0.0" },
      { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(running.mcpUrl));
    cleanups.push(async () => {
      await client.close();
      await running.close();
    });
    return client;
  }

  it("the retried call answers TOKEN_EXPIRED once the link expired with nothing uploaded (not the tool's 5 min timeout)", async () => {
    harness = await startTus();
    const seen: FileRequestOutcome[] = [];
    const client = await modern(resolver("1s"), seen);
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept" }));
    const result = (await client.callTool(
      { name: "needs_video", arguments: {} },
      { timeout: 30_000 },
    )) as CallToolResult;
    expect(seen.map((outcome) => outcome.status)).toEqual(["input_required", "expired"]);
    expect(seen[1]?.requestId).toBe(seen[0]?.requestId);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      status: "expired",
      request_id: seen[0]?.requestId,
      error: { code: "TOKEN_EXPIRED" },
    });
  }, 30_000);

  it("a resumable upload still receiving bytes when the link expires is waited for: the retry gets the file", async () => {
    harness = await startTus();
    const seen: FileRequestOutcome[] = [];
    const client = await modern(resolver("2s"), seen);
    const chunk = randomBytes(64 * 1024);
    const chunks = 25;
    let person: Promise<Response> | undefined;
    let patched = 0;
    client.setRequestHandler("elicitation/create", async (request) => {
      const endpoint = tusEndpointOf((request.params as { url: string }).url);
      person = (async () => {
        const created = await fetch(endpoint, {
          method: "POST",
          headers: { ...TUS, "upload-length": String(chunk.length * chunks) },
        });
        // One PATCH that starts before the expiry and sends a chunk every 100 ms, past it.
        const body = pacedBody(chunk, chunks);
        const patch = { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": "0" };
        const url = created.headers.get("location") as string;
        const response = await fetch(url, {
          method: "PATCH",
          headers: patch,
          body,
          duplex: "half",
        } as RequestInit);
        patched = Date.now();
        return response;
      })();
      return { action: "accept" };
    });
    const result = (await client.callTool(
      { name: "needs_video", arguments: {} },
      { timeout: 30_000 },
    )) as CallToolResult;
    expect((await person)?.status).toBe(204);
    const expiresAt = await resolver().fileRequests.expiryOf(SCOPE, seen[0]?.requestId as string);
    // The PATCH began before the link expired (the ticket was accepted) and ended after it.
    expect(patched).toBeGreaterThan(expiresAt as number);
    expect(seen.map((outcome) => outcome.status)).toEqual(["input_required", "uploaded"]);
    const [file] = (result.structuredContent as { files: Array<{ sha256: string; size: number }> }).files;
    expect(file).toMatchObject({
      size: chunk.length * chunks,
      sha256: sha256(Buffer.concat(Array(chunks).fill(chunk))),
    });
  }, 30_000);

  it("while no bytes arrive, each retry ends after roundWait with a state-only input_required; the client retries past its timeout and gets the file", async () => {
    harness = await startTus();
    const seen: FileRequestOutcome[] = [];
    // The person starts only once the retries have waited 3 rounds of 1 s: past the client's 3 s.
    let rounds: () => void = () => {};
    const waited = new Promise<void>((resolve) => {
      rounds = resolve;
    });
    const client = await modern(resolver("10m", "1s"), seen, () => {
      if (seen.length === 4) rounds();
    });
    const bytes = randomBytes(1024 * 1024);
    const opened: string[] = [];
    let person: Promise<void> | undefined;
    client.setRequestHandler("elicitation/create", async (request) => {
      const { url } = request.params as { url: string };
      opened.push(url);
      person = waited.then(() => personUploads(tusEndpointOf(url), bytes, 0));
      return { action: "accept" };
    });
    const started = Date.now();
    const result = (await client.callTool(
      { name: "needs_video", arguments: {} },
      { timeout: CLIENT_TIMEOUT_MS },
    )) as CallToolResult;
    await person;
    expect(Date.now() - started).toBeGreaterThan(CLIENT_TIMEOUT_MS);
    expect(opened).toHaveLength(1);
    const statuses = seen.map((outcome) => outcome.status);
    expect(statuses.slice(0, 4)).toEqual([
      "input_required",
      "input_required",
      "input_required",
      "input_required",
    ]);
    expect(statuses.at(-1)).toBe("uploaded");
    expect(new Set(seen.map((outcome) => outcome.requestId)).size).toBe(1);
    // The later rounds carry only the state, which seals the accepted answer: nothing is asked again.
    expect(seen[1]?.result).toEqual({
      resultType: "input_required",
      requestState: expect.stringMatching(/^mfb1\..+\.a$/),
    });
    expect(result.isError).toBeFalsy();
    const [file] = (result.structuredContent as { files: Array<{ sha256: string; size: number }> }).files;
    expect(file).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
  }, 30_000);
});
