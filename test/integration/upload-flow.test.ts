import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Artifacts } from "../../src/artifacts/artifacts.js";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { fileInput } from "../../src/bridge/file-input.js";
import { toNodeHandler } from "../../src/node/index.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore } from "../../src/storage/types.js";
import { UploadHandleResolver, type UploadTicket } from "../../src/uploads/upload-handle-resolver.js";
import { close, listen } from "../http/server-helpers.js";
import { sha256 } from "../support/helpers.js";

const SECRET = "integration-secret-integration-secret-0123";

let dir: string;
let store: FileStore;
let registry: ResourceRegistry;
// The refs in URIs and handles are keyed by the minter's secret: the same secret computes them.
const refsMinter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:9" });
let http: Server;
let origin: string;
/** Added to the minter's clock: ticket expiry without waiting. */
let skew: number;
const clients: Client[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-flow-"));
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = memoryState();
  skew = 0;
  http = createServer();
  // Built before the server listens on port 0: the URL is asked for at each mint.
  const minter = new SignedUrlMinter({
    secret: SECRET,
    baseUrl: () => origin,
    state,
    now: () => Date.now() + skew,
  });
  registry = new ResourceRegistry({ store, minter });
  const bridge = new FileBridge({ tmpDir: join(dir, "bridge") });
  const uploads = new UploadHandleResolver({ store, minter, state, bridge, maxBytes: 5 * 1024 * 1024 });
  const artifacts = new Artifacts({ store, minter, registry, tmpDir: join(dir, "artifacts") });
  const files = toNodeHandler(
    createFileRoutes({
      store,
      minter,
      state,
      registry,
      authorize: (request) => request.headers.get("authorization") === "Bearer server-key",
    }),
  );

  const buildServer = () => {
    const server = new McpServer({ name: "flow", version: "1.0.0" });
    uploads.attach(server);
    registry.attach(server);
    server.registerTool(
      "digest",
      { description: "The sha256 of one file.", inputSchema: { file: fileInput() } },
      bridge.withFiles(
        async (args: { file: unknown }) => ({
          content: [{ type: "text" as const, text: sha256(await readFile(args.file as string)) }],
        }),
        { fields: ["file"] },
      ),
    );
    server.registerTool(
      "concat",
      {
        description: "Concatenates files into one output file.",
        inputSchema: { files: z.array(z.string()), output: z.string().optional() },
      },
      artifacts.withArtifacts(
        bridge.withFiles(
          async (args: { files: string[]; output?: string }) => {
            const parts = await Promise.all(args.files.map((path) => readFile(path)));
            await writeFile(args.output as string, Buffer.concat(parts));
            return { content: [{ type: "text" as const, text: `Concatenated ${parts.length} files.` }] };
          },
          { fields: ["files[]"] },
        ),
        { outputPathArg: "output", outputName: "joined.bin" },
      ),
    );
    return server;
  };

  const sessions = new Map<string, StreamableHTTPServerTransport>();
  http.on("request", (req, res) => {
    files(req, res, async () => {
      if (!req.url?.startsWith("/mcp")) {
        res.writeHead(404).end();
        return;
      }
      const id = req.headers["mcp-session-id"];
      const existing = typeof id === "string" ? sessions.get(id) : undefined;
      if (existing) {
        await existing.handleRequest(req, res);
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, transport);
        },
      });
      await buildServer().connect(transport);
      await transport.handleRequest(req, res);
    });
  });
  origin = await listen(http);
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await close(http);
  await registry.close();
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function connect(): Promise<{ client: Client; sessionId: string }> {
  const client = new Client({ name: "flow-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`));
  await client.connect(transport);
  clients.push(client);
  return { client, sessionId: transport.sessionId as string };
}

describe("upload → tool → artifact → download over Streamable HTTP", () => {
  it("moves the bytes out of band end to end and byte-compares the result", async () => {
    const { client, sessionId } = await connect();
    const ticketResult = await client.callTool({ name: "get_upload_url", arguments: { filename: "a.bin" } });
    const ticket = ticketResult.structuredContent as UploadTicket;
    expect(ticket.upload_url.startsWith(`${origin}/files/upload/`)).toBe(true);
    // The session id never appears in a handle or URI (it is a bearer value): its reference does.
    expect(ticket.handle.startsWith(`upload://sessions/${scopeRef(sessionId, refsMinter)}/`)).toBe(true);
    expect(JSON.stringify(ticketResult)).not.toContain(sessionId);

    const parts = [randomBytes(1024 * 1024 + 3), randomBytes(4096), randomBytes(77)];
    const form = new FormData();
    parts.forEach((bytes, i) => {
      form.append(ticket.field, new Blob([bytes]), `part-${i}.bin`);
    });
    const uploaded = await fetch(ticket.upload_url, { method: ticket.method, body: form });
    expect(uploaded.status).toBe(201);
    const reply = (await uploaded.json()) as {
      files: Array<{ handle: string; uri: string; sha256: string }>;
    };
    expect(reply.files.map((f) => f.sha256)).toEqual(parts.map(sha256));
    expect(reply.files.every((f) => f.uri.startsWith("file://uploads/"))).toBe(true);

    // The uploads are resources of this session right away.
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri).sort()).toEqual(reply.files.map((f) => f.uri).sort());

    const result = await client.callTool({
      name: "concat",
      arguments: { files: reply.files.map((f) => f.handle) },
    });
    expect(result.isError).toBeFalsy();
    const meta = result._meta as { artifact_uri: string; download_url: string };
    expect(meta.artifact_uri.startsWith(`artifact://sessions/${scopeRef(sessionId, refsMinter)}/`)).toBe(
      true,
    );
    expect(JSON.stringify(result)).not.toContain(sessionId);
    const content = result.content as Array<{ type: string; uri?: string; text?: string }>;
    expect(content.some((block) => block.type === "resource_link" && block.uri === meta.artifact_uri)).toBe(
      true,
    );
    expect(content.some((block) => block.type === "text" && block.text?.includes(meta.download_url))).toBe(
      true,
    );

    const download = await fetch(meta.download_url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toContain("joined.bin");
    const joined = Buffer.from(await download.arrayBuffer());
    expect(joined.equals(Buffer.concat(parts))).toBe(true);

    // The ticket's own handle (known before the upload) stands for every file of the upload.
    const viaTicket = await client.callTool({ name: "concat", arguments: { files: [ticket.handle] } });
    expect(viaTicket.isError).toBeFalsy();
    const second = await fetch((viaTicket._meta as { download_url: string }).download_url);
    expect(Buffer.from(await second.arrayBuffer()).equals(Buffer.concat(parts))).toBe(true);

    expect(await readdir(join(dir, "artifacts"))).toEqual([]);
  });

  it("does not let another session use the handles", async () => {
    const first = await connect();
    const ticket = (await first.client.callTool({ name: "get_upload_url", arguments: {} }))
      .structuredContent as UploadTicket;
    const form = new FormData();
    form.append("file", new Blob([randomBytes(100)]), "secret.bin");
    const reply = (await (await fetch(ticket.upload_url, { method: "POST", body: form })).json()) as {
      files: Array<{ handle: string }>;
    };
    const other = await connect();
    const result = await other.client.callTool({
      name: "concat",
      arguments: { files: [reply.files[0]?.handle as string] },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("NOT_FOUND");
    expect((await other.client.listResources()).resources).toEqual([]);
  });

  it("direct route uploads are visible in resources/list at once, and list_changed fires", async () => {
    const { client, sessionId } = await connect();
    let changed = 0;
    const notified = new Promise<void>((resolve) => {
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        changed++;
        resolve();
      });
    });
    const response = await fetch(`${origin}/files/scopes/${encodeURIComponent(sessionId)}/files/notes.txt`, {
      method: "POST",
      body: "from the chat app",
      headers: { authorization: "Bearer server-key", "content-type": "text/plain" },
    });
    expect(response.status).toBe(201);
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.name)).toEqual(["notes.txt"]);
    const read = await client.readResource({ uri: listed.resources[0]?.uri as string });
    expect((read.contents[0] as { text: string }).text).toBe("from the chat app");
    await notified;
    expect(changed).toBeGreaterThanOrEqual(1);
  });
});

interface Reply {
  handle?: string;
  files: Array<{ handle: string; id: string; sha256: string }>;
}

async function ticketOf(client: Client): Promise<UploadTicket> {
  return (await client.callTool({ name: "get_upload_url", arguments: {} })).structuredContent as UploadTicket;
}

async function uploadParts(ticket: UploadTicket, parts: Buffer[]): Promise<Response> {
  const form = new FormData();
  parts.forEach((bytes, i) => {
    form.append(ticket.field, new Blob([new Uint8Array(bytes)]), `part-${i}.bin`);
  });
  return fetch(ticket.upload_url, { method: ticket.method, body: form });
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as Array<{ text?: string }>).map((block) => block.text ?? "").join("\n");
}

async function concatenated(client: Client, files: string[]): Promise<Buffer> {
  const result = await client.callTool({ name: "concat", arguments: { files } });
  expect(result.isError, textOf(result)).toBeFalsy();
  const download = await fetch((result._meta as { download_url: string }).download_url);
  return Buffer.from(await download.arrayBuffer());
}

describe("one upload, one handle (SDK client, HTTP upload)", () => {
  it("a single-file upload: get_upload_url and the upload reply give the same handle, which is the file", async () => {
    const { client } = await connect();
    const ticket = await ticketOf(client);
    const bytes = randomBytes(3000);
    const response = await uploadParts(ticket, [bytes]);
    expect(response.status).toBe(201);
    const reply = (await response.json()) as Reply;
    expect(reply.handle).toBe(ticket.handle);
    const digest = await client.callTool({ name: "digest", arguments: { file: reply.handle } });
    expect(digest.isError).toBeFalsy();
    expect(textOf(digest)).toBe(sha256(bytes));
    expect((await concatenated(client, [ticket.handle])).equals(bytes)).toBe(true);
  });

  it("a multi-file upload: the one handle gives every file to a list, and a one-file argument a clear error", async () => {
    const { client } = await connect();
    const ticket = await ticketOf(client);
    const parts = [randomBytes(2048), randomBytes(10), randomBytes(777)];
    const reply = (await (await uploadParts(ticket, parts)).json()) as Reply;
    expect(reply.handle).toBe(ticket.handle);
    expect(reply.files.map((file) => file.sha256)).toEqual(parts.map(sha256));

    // In a list, the upload's handle becomes all its files, in upload order, in place.
    expect((await concatenated(client, [reply.handle as string])).equals(Buffer.concat(parts))).toBe(true);
    const mixed = await concatenated(client, [reply.files[2]?.handle as string, ticket.handle]);
    expect(mixed.equals(Buffer.concat([parts[2] as Buffer, ...parts]))).toBe(true);

    // Where one file is taken: INVALID_INPUT naming the count and the files' own handles.
    const single = await client.callTool({ name: "digest", arguments: { file: ticket.handle } });
    expect(single.isError).toBe(true);
    const text = textOf(single);
    expect(text).toContain("INVALID_INPUT");
    expect(text).toContain("stands for 3 files");
    for (const file of reply.files) expect(text).toContain(file.handle);
    // A file's own handle (the form every earlier reply carried) is that one file.
    const second = await client.callTool({ name: "digest", arguments: { file: reply.files[1]?.handle } });
    expect(textOf(second)).toBe(sha256(parts[1] as Buffer));
  });

  it("keeps resolving handles in the form issued before (a file's own handle) in one-file and list arguments", async () => {
    const { client, sessionId } = await connect();
    const ticket = await ticketOf(client);
    const bytes = randomBytes(512);
    const reply = (await (await uploadParts(ticket, [bytes])).json()) as Reply;
    const old = reply.files[0] as { handle: string; id: string };
    expect(old.handle).toBe(`upload://sessions/${scopeRef(sessionId, refsMinter)}/${old.id}`);
    expect(old.handle).not.toBe(ticket.handle);
    expect(textOf(await client.callTool({ name: "digest", arguments: { file: old.handle } }))).toBe(
      sha256(bytes),
    );
    expect((await concatenated(client, [old.handle, old.handle])).equals(Buffer.concat([bytes, bytes]))).toBe(
      true,
    );
  });

  it("refuses another session's upload handle exactly like an unknown one", async () => {
    const owner = await connect();
    const ticket = await ticketOf(owner.client);
    await uploadParts(ticket, [randomBytes(100), randomBytes(200)]);
    const other = await connect();
    const unknown = `upload://sessions/${scopeRef(other.sessionId, refsMinter)}/01jzzzzzzzzzzzzzzzzzzzzzzz`;
    for (const [name, args] of [
      ["digest", (handle: string) => ({ file: handle })],
      ["concat", (handle: string) => ({ files: [handle] })],
    ] as const) {
      const foreign = await other.client.callTool({ name, arguments: args(ticket.handle) });
      const missing = await other.client.callTool({ name, arguments: args(unknown) });
      expect(foreign.isError).toBe(true);
      expect(textOf(foreign)).toContain("NOT_FOUND");
      expect(textOf(foreign).replace(ticket.handle, "H")).toBe(textOf(missing).replace(unknown, "H"));
    }
    expect((await other.client.listResources()).resources).toEqual([]);
  });

  it("an expired ticket stores nothing and its handle stays unknown", async () => {
    const { client, sessionId } = await connect();
    const ticket = await ticketOf(client);
    skew = 11 * 60_000; // the ticket lives 10 minutes
    const response = await uploadParts(ticket, [randomBytes(64)]);
    expect(response.status).toBe(410);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("TOKEN_EXPIRED");
    expect((await store.list(sessionId)).files).toEqual([]);
    const result = await client.callTool({ name: "concat", arguments: { files: [ticket.handle] } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("NOT_FOUND");
  });
});
