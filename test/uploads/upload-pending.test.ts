/**
 * A handle used before the person finished uploading is a state, not an error: `UPLOAD_PENDING`
 * while the ticket is live and unused, the bytes so far while a resumable upload runs, the files
 * once stored — and exactly "not found" for an expired ticket or another scope's handle. The
 * status path (`check_upload`) is driven with the real SDK `Client` of both generations.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as V2Client, InMemoryTransport as V2InMemory } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as V1InMemory } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { fileInput } from "../../src/bridge/file-input.js";
import { isFileBridgeError } from "../../src/errors/file-bridge-error.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { uploadPageRenderer } from "../../src/ui/index.js";
import { fsTusStaging } from "../../src/uploads/tus/fs-staging.js";
import { UploadHandleResolver, type UploadTicket } from "../../src/uploads/upload-handle-resolver.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const BASE = "http://127.0.0.1:9";

let dir: string;
let clock: number;
let store: FileStore;
let state: StateStore;
let minter: SignedUrlMinter;
let routes: FileRoutes;
let bridge: FileBridge;
let uploads: UploadHandleResolver;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-pending-"));
  clock = Date.now();
  store = fsStore(join(dir, "store"), { sweepInterval: 0, now: () => clock });
  state = memoryState({ now: () => clock });
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, state, now: () => clock });
  routes = createFileRoutes({
    store,
    minter,
    state,
    uploadPage: uploadPageRenderer(),
    tus: { staging: fsTusStaging(join(dir, "staging")), now: () => clock },
  });
  bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
  uploads = new UploadHandleResolver({ store, minter, state, bridge, ttl: "10m", tmpDir: join(dir, "tmp") });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function uploadWith(ticket: UploadTicket, name: string, text: string): Promise<Response> {
  const form = new FormData();
  form.append(ticket.field, new Blob([text]), name);
  return (await routes(new Request(ticket.upload_url, { method: "POST", body: form }))) as Response;
}

/** Starts a tus upload of `length` bytes on the ticket and sends the first `bytes`. */
async function partialTus(ticket: UploadTicket, length: number, bytes: Uint8Array): Promise<void> {
  const endpoint = ticket.upload_url.replace(/\/upload\/([^/]+)$/, "/tus/$1");
  const created = (await routes(
    new Request(endpoint, {
      method: "POST",
      headers: { "tus-resumable": "1.0.0", "upload-length": String(length) },
    }),
  )) as Response;
  expect(created.status).toBe(201);
  const location = new URL(created.headers.get("location") as string, endpoint).href;
  const patched = (await routes(
    new Request(location, {
      method: "PATCH",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-offset": "0",
        "content-type": "application/offset+octet-stream",
      },
      body: new Uint8Array(bytes),
    }),
  )) as Response;
  expect(patched.status).toBe(204);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isFileBridgeError(error)) return error.code;
    throw error;
  }
  return "resolved";
}

describe("a handle used before its upload", () => {
  it("is UPLOAD_PENDING while the ticket is live, receiving n of m bytes mid-upload, then the file", async () => {
    const ticket = await uploads.createTicket("alice");
    expect(await codeOf(bridge.resolve(ticket.handle, { scope: "alice" }))).toBe("UPLOAD_PENDING");
    expect(await uploads.statusOf(ticket.handle, { scope: "alice" })).toMatchObject({ status: "pending" });

    await partialTus(ticket, 10, new TextEncoder().encode("abcd"));
    // The progress record is written best effort, without being awaited by the PATCH.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await uploads.statusOf(ticket.handle, { scope: "alice" })).toMatchObject({
      status: "receiving",
      received: 4,
      length: 10,
    });
    let pending: unknown;
    await bridge.resolve(ticket.handle, { scope: "alice" }).catch((error) => {
      pending = error;
    });
    expect(pending).toMatchObject({ code: "UPLOAD_PENDING", data: { received: 4, length: 10 } });
  });

  it("resolves once uploaded, and the status says ready with the files", async () => {
    const ticket = await uploads.createTicket("alice");
    expect((await uploadWith(ticket, "a.csv", "x,y\n1,2\n")).status).toBe(201);
    const status = await uploads.statusOf(ticket.handle, { scope: "alice" });
    expect(status).toMatchObject({ status: "ready", files: [{ name: "a.csv", size: 8 }] });
    const file = await bridge.resolve(ticket.handle, { scope: "alice" });
    try {
      expect(await readFile(file.path as string, "utf8")).toBe("x,y\n1,2\n");
    } finally {
      await file.dispose();
    }
  });

  it("is NOT_FOUND in another scope and after the ticket expired unused, exactly like an unknown handle", async () => {
    const ticket = await uploads.createTicket("alice");
    const unknown = ticket.handle.replace(/[^/]+$/, "no-such-id");
    expect(await codeOf(bridge.resolve(ticket.handle, { scope: "bob" }))).toBe("NOT_FOUND");
    expect(await uploads.statusOf(ticket.handle, { scope: "bob" })).toEqual({ status: "unknown" });
    expect(await uploads.statusOf(unknown, { scope: "alice" })).toEqual({ status: "unknown" });
    expect(await codeOf(uploads.rewrite({ file: ticket.handle }, ["file"], { scope: "bob" }))).toBe(
      "NOT_FOUND",
    );
    expect(await codeOf(uploads.rewrite({ file: ticket.handle }, ["file"], { scope: "alice" }))).toBe(
      "UPLOAD_PENDING",
    );
    clock += 11 * 60_000;
    expect(await codeOf(bridge.resolve(ticket.handle, { scope: "alice" }))).toBe("NOT_FOUND");
    expect(await uploads.statusOf(ticket.handle, { scope: "alice" })).toEqual({ status: "unknown" });
  });

  it("takes what it asks for: message, accept and one file reach the upload page", async () => {
    const ticket = await uploads.createTicket("alice", {
      message: "The sales figures to summarize",
      accept: [".csv", "text/csv"],
      maxFiles: 1,
    });
    expect(ticket.max_files).toBe(1);
    const page = (await routes(
      new Request(ticket.upload_url, { headers: { accept: "text/html" } }),
    )) as Response;
    const html = await page.text();
    expect(html).toContain("Upload a file");
    expect(html).toContain("The sales figures to summarize");
    expect(html).toContain(".csv,text/csv");
    expect(await codeOf(uploads.createTicket("alice", { maxFiles: 1000 }))).toBe("INVALID_INPUT");
    expect(await codeOf(uploads.createTicket("alice", { accept: ["a,b"] }))).toBe("INVALID_INPUT");
    expect(await codeOf(uploads.createTicket("alice", { message: "x".repeat(2000) }))).toBe("INVALID_INPUT");
  });
});

type ToolResult = { content: Array<{ text?: string }>; isError?: boolean; structuredContent?: never };

describe.each(["v1", "v2"] as const)("check_upload on SDK %s", (sdk) => {
  async function connect(): Promise<{
    call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
    tools(): Promise<string[]>;
    close(): Promise<void>;
  }> {
    const server =
      sdk === "v1"
        ? new V1McpServer({ name: "csv", version: "1.0.0" })
        : new V2McpServer({ name: "csv", version: "1.0.0" });
    uploads.attach(server);
    (server as V1McpServer).registerTool(
      "summarize_csv",
      { description: "Summarizes a CSV file", inputSchema: { file: fileInput() } },
      bridge.withFiles(
        async ({ file }) => {
          const rows = (await readFile(file as string, "utf8")).trim().split("\n").length;
          return { content: [{ type: "text" as const, text: `${rows} rows` }] };
        },
        { fields: ["file"] },
      ),
    );
    if (sdk === "v1") {
      const client = new V1Client({ name: "t", version: "1" });
      const [a, b] = V1InMemory.createLinkedPair();
      await Promise.all([(server as V1McpServer).connect(b), client.connect(a)]);
      return {
        call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
        tools: async () => (await client.listTools()).tools.map((tool) => tool.name),
        close: async () => {
          await client.close();
          await server.close();
        },
      };
    }
    const client = new V2Client({ name: "t", version: "1" });
    const [a, b] = V2InMemory.createLinkedPair();
    await Promise.all([(server as V2McpServer).connect(b), client.connect(a)]);
    return {
      call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
      tools: async () => (await client.listTools()).tools.map((tool) => tool.name),
      close: async () => {
        await client.close();
        await server.close();
      },
    };
  }

  it("tells pending from ready, and the tool called too early answers UPLOAD_PENDING", async () => {
    const client = await connect();
    try {
      expect(await client.tools()).toEqual(
        expect.arrayContaining(["get_upload_url", "check_upload", "summarize_csv"]),
      );
      const got = await client.call("get_upload_url", {
        message: "The CSV to summarize",
        accept: [".csv"],
        max_files: 1,
      });
      expect(got.isError).toBeFalsy();
      const ticket = got.structuredContent as unknown as UploadTicket;
      expect(ticket.max_files).toBe(1);

      const early = await client.call("summarize_csv", { file: ticket.handle });
      expect(early.isError).toBe(true);
      expect(early.content[0]?.text).toMatch(/^Error UPLOAD_PENDING:/);
      expect(early.content[0]?.text).toContain("check_upload");

      const pending = await client.call("check_upload", { handle: ticket.handle });
      expect(pending.isError).toBeFalsy();
      expect(pending.structuredContent).toMatchObject({ status: "pending", handle: ticket.handle });

      expect((await uploadWith(ticket, "s.csv", "a\nb\nc\n")).status).toBe(201);
      const ready = await client.call("check_upload", { handle: ticket.handle });
      expect(ready.structuredContent).toMatchObject({ status: "ready", files: [{ name: "s.csv" }] });
      const done = await client.call("summarize_csv", { file: ticket.handle });
      expect(done.content[0]?.text).toBe("3 rows");

      const bogus = await client.call("check_upload", { handle: "upload://sessions/x/y" });
      expect(bogus.structuredContent).toMatchObject({ status: "unknown" });
    } finally {
      await client.close();
    }
  });
});
