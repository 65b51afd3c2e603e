/**
 * Tools that wait for a person: the person's 64 MiB resumable upload arrives slower than the
 * client's request timeout, and the tool still gets the file — on the open call through MCP progress
 * (the client's `resetTimeoutOnProgress`), and through the `await_upload` poll path when the client
 * cannot open URLs. An expired link answers a clear `TOKEN_EXPIRED`.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { tusEndpointOf } from "../../../src/uploads/upload-handle.js";
import { UploadHandleResolver } from "../../../src/uploads/upload-handle-resolver.js";
import { sha256 } from "../../support/helpers.js";
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

function resolver(ttl = "10m"): UploadHandleResolver {
  return new UploadHandleResolver({
    store: harness.store,
    state: harness.state,
    minter: harness.minter,
    scope: () => SCOPE,
    maxBytes: SIZE,
    ttl: ttl as "10m",
    fileRequests: { pollInterval: "20ms" },
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
  const client = new Client({ name: "t", version: "1.0.0" }, capabilities);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
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

  it("another scope's request is unknown, and an expired link answers TOKEN_EXPIRED", async () => {
    harness = await startTus();
    const uploads = resolver("1s");
    const request = await uploads.fileRequests.create(SCOPE, { message: "Upload it" });
    const server = new McpServer({ name: "t", version: "1.0.0" });
    uploads.attachAwaitTool(server);
    const client = await connect(server, {});
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
