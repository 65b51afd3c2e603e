/**
 * The upload-page example on SDK v2 (`start({ sdk: "v2" })`): the MCP App widget and
 * `request_document` (URL elicitation), through both protocol eras one v2 server speaks — a v2
 * `Client` on 2026-07-28 (stateless: `input_required`, then the retry) and a v1 `Client` on the 2025
 * era (MCP sessions: `elicitation/create`) — over real HTTP on 127.0.0.1, with real uploads.
 */
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { scopeRef } from "../../src/index.js";
import { sha256 } from "../../test/support/helpers.js";
import { start, type UploadPageServer } from "./server.js";

const ALICE = "token-alice-0123456789";
const BOB = "token-bob-0123456789";
const TOKENS = { [ALICE]: "alice", [BOB]: "bob" };
const WIDGET = "ui://mcp-file-bridge/upload.html";

let app: UploadPageServer;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(closers.splice(0).map((close) => close()));
  await app?.close();
});

async function startV2(options: Parameters<typeof start>[0] = {}): Promise<UploadPageServer> {
  app = await start({ sdk: "v2", tokens: TOKENS, ...options });
  return app;
}

const auth = (token?: string) =>
  token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } };

/** A v2 client pinned to 2026-07-28 (no session at all). */
async function modern(token?: string, capabilities: Record<string, unknown> = {}): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "modern", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransportV2(app.mcpUrl, auth(token)));
  closers.push(() => client.close());
  return client;
}

/** A v1 client: the 2025 era, served with an MCP session by the v2 server. */
async function legacy(token?: string, capabilities: Record<string, unknown> = {}) {
  const client = new Client({ name: "legacy", version: "1.0.0" }, { capabilities });
  const transport = new StreamableHTTPClientTransport(app.mcpUrl, auth(token));
  await client.connect(transport);
  closers.push(() => client.close());
  return { client, transport };
}

/** What a person does with the link: the browser opens the page, then the form posts the file. */
async function personUploads(
  url: string,
  name: string,
  bytes: Buffer,
): Promise<{ page: string; status: number }> {
  const page = await fetch(url, { headers: { accept: "text/html" } });
  expect(page.status).toBe(200);
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(bytes)], { type: "application/octet-stream" }), name);
  const posted = await fetch(url, { method: "POST", body: form });
  return { page: await page.text(), status: posted.status };
}

async function bytesOf(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error("no such file");
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type Uploaded = {
  status: "uploaded";
  request_id: string;
  files: Array<{ name: string; size: number; sha256: string; handle: string }>;
};

/** The uploaded file of a `request_document` result: its handle resolves in `user`'s scope to `bytes`. */
async function expectUploaded(result: unknown, user: string, bytes: Buffer): Promise<Uploaded> {
  const call = result as CallToolResult;
  expect(call.isError).toBeFalsy();
  const structured = call.structuredContent as Uploaded;
  expect(structured).toMatchObject({
    status: "uploaded",
    files: [{ size: bytes.length, sha256: sha256(bytes) }],
  });
  const handle = structured.files[0]?.handle as string;
  expect(handle.startsWith(`upload://sessions/${scopeRef(user, app.minter)}/`)).toBe(true);
  const file = await app.uploads.fileFor(handle, { scope: user });
  expect(file?.sha256).toBe(sha256(bytes));
  expect((await bytesOf(await app.store.read(user, file?.id as string))).equals(bytes)).toBe(true);
  return structured;
}

type InputRequired = {
  resultType: "input_required";
  requestState: string;
  inputRequests: Record<string, { method: string; params: { mode: string; message: string; url: string } }>;
};

/** The first round of `request_document` on 2026-07-28, handed back as is (no auto-fulfilment). */
async function firstRound(client: ClientV2): Promise<{ id: string; url: string; state: string }> {
  const result = (await client.callTool(
    { name: "request_document", arguments: {} },
    {
      allowInputRequired: true,
    },
  )) as unknown as InputRequired;
  expect(result.resultType).toBe("input_required");
  const entries = Object.entries(result.inputRequests);
  expect(entries).toHaveLength(1);
  const [id, request] = entries[0] as [string, InputRequired["inputRequests"][string]];
  expect(request).toMatchObject({
    method: "elicitation/create",
    params: { mode: "url", message: "Please upload the document to work on." },
  });
  expect(request.params.url.startsWith(`${app.url}/files/upload/`)).toBe(true);
  return { id, url: request.params.url, state: result.requestState };
}

/** The client's retry of that round, answering `accept` with the echoed state. */
function retry(client: ClientV2, round: { id: string; state: string }): Promise<unknown> {
  return client.callTool({
    name: "request_document",
    arguments: {},
    requestState: round.state,
    inputResponses: { [round.id]: { action: "accept" } },
  } as never);
}

describe.each(["2026-07-28", "2025"] as const)("upload-page on SDK v2, %s era: the widget", (era) => {
  it("upload_files carries both MCP Apps keys; the ui:// resource is listed and read as an mcp-app page", async () => {
    await startV2();
    const client = era === "2026-07-28" ? await modern(ALICE) : (await legacy(ALICE)).client;
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "check_upload",
      "request_document",
      "upload_files",
    ]);
    expect(tools.find((tool) => tool.name === "upload_files")?._meta).toEqual({
      ui: { resourceUri: WIDGET },
      "ui/resourceUri": WIDGET,
    });
    const listed = (await client.listResources()) as { resources: unknown[]; cacheScope?: string };
    // 2026-07-28 lists are cacheable: per user, never shared (2025-era results carry no cache fields).
    expect(listed.cacheScope).toBe(era === "2026-07-28" ? "private" : undefined);
    const { resources } = listed;
    expect(resources).toEqual([
      expect.objectContaining({ uri: WIDGET, mimeType: "text/html;profile=mcp-app" }),
    ]);
    const read = await client.readResource({ uri: WIDGET });
    const content = read.contents[0] as { uri: string; mimeType: string; text: string; _meta: unknown };
    expect(content.uri).toBe(WIDGET);
    expect(content.mimeType).toBe("text/html;profile=mcp-app");
    expect(content.text).toMatch(/^<!doctype html>/i);
    expect(content.text.length).toBeGreaterThan(10_000); // the bundled ext-apps App and the upload code
    expect(content._meta).toMatchObject({ ui: { csp: { connectDomains: [app.url] } } });
  });
});

describe("upload-page on SDK v2, 2026-07-28: request_document through input_required", () => {
  it("the first round asks for the page; the person uploads; the retry returns the file", async () => {
    await startV2();
    const client = await modern(ALICE, { elicitation: { url: {} } });
    const round = await firstRound(client);
    const bytes = randomBytes(200_000);
    const { page, status } = await personUploads(round.url, "contract.pdf", bytes);
    expect(page).toContain("Please upload the document to work on.");
    expect(status).toBe(201);
    const uploaded = await expectUploaded(await retry(client, round), "alice", bytes);
    expect(uploaded.request_id).toBe(round.id);
    expect(uploaded.files[0]?.name).toBe("contract.pdf");
  });

  it("the v2 Client fulfils it by itself: its elicitation handler opens the page and uploads", async () => {
    await startV2();
    const client = await modern(ALICE, { elicitation: { url: {} } });
    const bytes = Buffer.from("the document, version 2026\n");
    const asked: Array<{ mode?: string; url: string }> = [];
    const uploads: Array<Promise<{ status: number }>> = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode?: string; url: string };
      asked.push(params);
      // The person opens the link after the client said yes; the retry waits for the upload.
      uploads.push(
        new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
          personUploads(params.url, "doc.txt", bytes),
        ),
      );
      return { action: "accept" };
    });
    const result = await client.callTool({ name: "request_document", arguments: {} });
    expect(asked).toEqual([expect.objectContaining({ mode: "url" })]);
    expect((await Promise.all(uploads)).map((each) => each.status)).toEqual([201]);
    await expectUploaded(result, "alice", bytes);
  });

  it("a client without elicitation.url gets the link as text; a declined request is an error", async () => {
    await startV2();
    const plain = await modern(ALICE);
    const fallback = (await plain.callTool({ name: "request_document", arguments: {} })) as CallToolResult;
    expect(fallback.isError).toBeFalsy();
    const link = fallback.structuredContent as { status: string; url: string };
    expect(link.status).toBe("upload_required");
    expect((fallback.content[0] as { text: string }).text).toContain(link.url);

    const declining = await modern(ALICE, { elicitation: { url: {} } });
    const round = await firstRound(declining);
    const declined = (await declining.callTool({
      name: "request_document",
      arguments: {},
      requestState: round.state,
      inputResponses: { [round.id]: { action: "decline" } },
    } as never)) as CallToolResult;
    expect(declined.isError).toBe(true);
    expect(declined.structuredContent).toMatchObject({ status: "declined", request_id: round.id });
  });
});

describe("upload-page on SDK v2, 2025 era: request_document through elicitation/create", () => {
  it("a v1 Client with URL elicitation is asked, uploads, and gets the file (and the completion)", async () => {
    await startV2();
    const { client, transport } = await legacy(ALICE, { elicitation: { url: {} } });
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/); // the 2025 era gets a session
    const bytes = randomBytes(150_000);
    let elicited: { url: string; elicitationId: string; message: string } | undefined;
    let person: Promise<{ page: string; status: number }> | undefined;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      if (request.params.mode !== "url") return { action: "decline" };
      const { url } = request.params;
      elicited = request.params;
      person = new Promise((resolve) => setTimeout(resolve, 20)).then(() =>
        personUploads(url, "scan.png", bytes),
      );
      return { action: "accept" };
    });
    const completed: string[] = [];
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params.elicitationId);
    });
    const result = await client.callTool({ name: "request_document", arguments: {} });
    expect((await person)?.status).toBe(201);
    expect(elicited?.message).toBe("Please upload the document to work on.");
    expect(elicited?.url.startsWith(`${app.url}/files/upload/`)).toBe(true);
    const uploaded = await expectUploaded(result, "alice", bytes);
    expect(uploaded.request_id).toBe(elicited?.elicitationId);
    await expect.poll(() => completed).toEqual([elicited?.elicitationId]);
  });

  it("a v1 Client without URL elicitation gets the link, never elicitation/create", async () => {
    await startV2();
    const { client } = await legacy(ALICE, { elicitation: { form: {} } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked += 1;
      return { action: "cancel" };
    });
    const result = (await client.callTool({ name: "request_document", arguments: {} })) as CallToolResult;
    expect(asked).toBe(0);
    expect(result.structuredContent).toMatchObject({ status: "upload_required" });
  });
});

describe("upload-page on SDK v2: one scope per user, no scope without one", () => {
  it("user B replaying user A's request state gets nothing of A's (a new request of B's own); A's retry gets the file", async () => {
    await startV2();
    const alice = await modern(ALICE, { elicitation: { url: {} } });
    const bob = await modern(BOB, { elicitation: { url: {} } });
    const round = await firstRound(alice);
    const bytes = Buffer.from("alice's private document\n");
    expect((await personUploads(round.url, "private.txt", bytes)).status).toBe(201);

    // The state is bound to Alice: on Bob's call it opens nothing, so Bob is asked afresh, for his own upload.
    const stolen = (await bob.callTool(
      {
        name: "request_document",
        arguments: {},
        requestState: round.state,
        inputResponses: { [round.id]: { action: "accept" } },
      } as never,
      { allowInputRequired: true },
    )) as unknown as { resultType?: string; inputRequests: Record<string, { params: { url: string } }> };
    expect(stolen.resultType).toBe("input_required");
    expect(Object.keys(stolen.inputRequests)).not.toContain(round.id);
    expect(Object.values(stolen.inputRequests)[0]?.params.url).not.toBe(round.url);
    expect(JSON.stringify(stolen)).not.toContain(sha256(bytes));
    expect(JSON.stringify(stolen)).not.toContain("private.txt");

    const mine = await expectUploaded(await retry(alice, round), "alice", bytes);
    // Bob cannot use Alice's handle either: it resolves in Alice's scope only.
    expect(await app.uploads.fileFor(mine.files[0]?.handle as string, { scope: "bob" })).toBeNull();
  });

  it("user B cannot use user A's 2025 session, nor its own token on it", async () => {
    await startV2();
    const { transport } = await legacy(ALICE, { elicitation: { url: {} } });
    const post = (token: string | undefined) =>
      fetch(app.mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": transport.sessionId as string,
          "mcp-protocol-version": "2025-11-25",
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "upload_files" },
        }),
      });
    expect((await post(BOB)).status).toBe(404);
    expect((await post(undefined)).status).toBe(404);
    expect((await post(ALICE)).status).toBe(200);
  });

  it.each(["2026-07-28", "2025"] as const)(
    "no token (%s era): request_document and upload_files are refused with FORBIDDEN, nothing minted",
    async (era) => {
      await startV2();
      const client =
        era === "2026-07-28"
          ? await modern(undefined, { elicitation: { url: {} } })
          : (await legacy(undefined, { elicitation: { url: {} } })).client;
      if (client instanceof Client) {
        client.setRequestHandler(ElicitRequestSchema, async () => {
          throw new Error("an anonymous caller must never be asked");
        });
      }
      for (const name of ["request_document", "upload_files"]) {
        const refused = (await client.callTool({ name, arguments: {} })) as CallToolResult;
        expect(refused.isError).toBe(true);
        expect((refused.content[0] as { text: string }).text).toMatch(/FORBIDDEN/);
        expect(JSON.stringify(refused)).not.toContain("/files/upload/");
        expect(JSON.stringify(refused)).not.toContain("input_required");
      }
    },
  );
});
