import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ChatUploadsServer, start } from "./server.js";

const KEY = "test-key-0123456789";
const CHAT2_KEY = "chat-2-only-key-0123456789";
const AUTH = { authorization: `Bearer ${KEY}` };
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(2048)]);

// The same client-driven flow on each SDK generation: the v1 client against the v1 server (one
// session per client), the v2 client speaking 2026-07-28 against the stateless v2 server.
describe.each(["v1", "v2"] as const)("chat-uploads example on SDK %s", (sdk) => {
  let dir: string;
  let app: ChatUploadsServer;
  const clients: Client[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "chat-uploads-test-"));
    app = await start({
      apiKeys: [KEY],
      grants: [{ key: CHAT2_KEY, chats: ["chat-2"] }],
      dataDir: join(dir, "data"),
      sdk,
    });
    expect(app.sdk).toBe(sdk);
  });

  afterEach(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    clients.length = 0;
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const v2Clients = new WeakMap<Client, ClientV2>();

  async function connect(headers: Record<string, string>): Promise<Client> {
    const requestInit = { headers };
    if (sdk === "v2") {
      const v2 = new ClientV2(
        { name: "chat-ui", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await v2.connect(new StreamableHTTPClientTransportV2(app.mcpUrl, { requestInit }));
      // The calls this test makes (listResources, readResource, close) have the same shape on both.
      const client = v2 as unknown as Client;
      v2Clients.set(client, v2);
      clients.push(client);
      return client;
    }
    const client = new Client({ name: "chat-ui", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(app.mcpUrl, { requestInit }));
    clients.push(client);
    return client;
  }

  /**
   * Resolves on the next `notifications/resources/list_changed`: on v1 it arrives on the session's
   * stream; on a stateless v2 server only through a `subscriptions/listen` stream, opened (and
   * acknowledged) before this returns.
   */
  async function nextListChanged(client: Client): Promise<{ heard: Promise<void> }> {
    const v2 = v2Clients.get(client);
    if (v2 === undefined) {
      const heard = new Promise<void>((resolve) =>
        client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()),
      );
      return { heard };
    }
    const heard = new Promise<void>((resolve) =>
      v2.setNotificationHandler("notifications/resources/list_changed", async () => resolve()),
    );
    const stream = await v2.listen({ resourcesListChanged: true });
    expect(stream.honoredFilter).toMatchObject({ resourcesListChanged: true });
    return { heard: heard.finally(() => stream.close()) };
  }

  function upload(chat: string, relPath: string, body: Uint8Array | string, type: string, key = KEY) {
    const path = [chat, ...relPath.split("/")].map(encodeURIComponent).join("/");
    return fetch(`${app.url}/api/uploads/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": type },
      body: typeof body === "string" ? body : new Uint8Array(body),
    });
  }

  async function rpcCode(
    promise: Promise<unknown>,
  ): Promise<{ code: number; data: Record<string, unknown> }> {
    try {
      await promise;
    } catch (error) {
      // v1's McpError and v2's ProtocolError both carry the JSON-RPC code and data.
      const { code, data } = error as { code?: unknown; data?: unknown };
      if (typeof code === "number") return { code, data: data as Record<string, unknown> };
      throw error;
    }
    throw new Error("expected the request to fail");
  }

  it("an upload is listed at once for its chat, fires list_changed, and nested unicode paths round-trip", async () => {
    const client = await connect({ "x-chat-id": "chat-1", ...AUTH });
    expect((await client.listResources()).resources).toEqual([]);
    const changed = await nextListChanged(client);

    const response = await upload(
      "chat-1",
      "docs/Q3 notes/résumé v2.md",
      "# Hello\nworld\n",
      "text/markdown",
    );
    expect(response.status).toBe(201);
    const reply = (await response.json()) as { files: Array<{ uri: string; name: string }> };
    const uri = "file://uploads/chat-1/docs/Q3%20notes/r%C3%A9sum%C3%A9%20v2.md";
    expect(reply.files[0]).toMatchObject({ uri, name: "docs/Q3 notes/résumé v2.md" });

    await changed.heard;
    const listed = (await client.listResources()).resources;
    expect(listed.map((r) => r.uri)).toEqual([uri]);
    expect(listed[0]).toMatchObject({ name: "docs/Q3 notes/résumé v2.md", mimeType: "text/markdown" });

    const read = await client.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ uri, mimeType: "text/markdown", text: "# Hello\nworld\n" });
  });

  it("reads text types as text and others as blob, byte for byte", async () => {
    const client = await connect({ "x-chat-id": "chat-1", ...AUTH });
    expect((await upload("chat-1", "img/logo.png", PNG, "image/png")).status).toBe(201);
    expect((await upload("chat-1", "data.json", '{"a":1}', "application/json")).status).toBe(201);

    const png = await client.readResource({ uri: "file://uploads/chat-1/img/logo.png" });
    const pngContent = png.contents[0] as { blob?: string; text?: string; mimeType?: string };
    expect(pngContent.text).toBeUndefined();
    expect(pngContent.mimeType).toBe("image/png");
    expect(Buffer.from(pngContent.blob ?? "", "base64").equals(PNG)).toBe(true);

    const json = await client.readResource({ uri: "file://uploads/chat-1/data.json" });
    expect(json.contents[0]).toMatchObject({ text: '{"a":1}' });
  });

  it("keeps chats apart in resources/list", async () => {
    const chat2 = await connect({ "x-chat-id": "chat-2", ...AUTH });
    expect((await upload("chat-1", "a.txt", "one", "text/plain")).status).toBe(201);
    expect((await upload("chat-2", "b.txt", "two", "text/plain")).status).toBe(201);
    expect((await chat2.listResources()).resources.map((r) => r.uri)).toEqual([
      "file://uploads/chat-2/b.txt",
    ]);
  });

  it("URIs are self-contained: reads work without X-Chat-Id for a key holder, not for others", async () => {
    expect((await upload("chat-7", "notes/a.txt", "seven", "text/plain")).status).toBe(201);
    const uri = "file://uploads/chat-7/notes/a.txt";

    const keyHolder = await connect({ authorization: `Bearer ${KEY}` });
    const read = await keyHolder.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ text: "seven" });
    expect((await keyHolder.listResources()).resources).toEqual([]); // the key's own scope: empty

    // v1: a stranger has its session's scope, and another chat's file is "not found". v2: without a
    // session or a known key there is no scope at all, and the request is refused.
    const refusal = sdk === "v1" ? "NOT_FOUND" : "FORBIDDEN";
    const stranger = await connect({});
    const denied = await rpcCode(stranger.readResource({ uri }));
    expect(denied.code).toBe(-32602);
    expect(denied.data.code).toBe(refusal);
    if (sdk === "v1") expect(denied.data).toMatchObject({ uri });
    else expect(JSON.stringify(denied)).not.toContain("seven");

    const wrongKey = await connect({ authorization: "Bearer nope" });
    expect((await rpcCode(wrongKey.readResource({ uri }))).data.code).toBe(refusal);
    if (sdk === "v2") expect((await rpcCode(wrongKey.listResources())).data.code).toBe("FORBIDDEN");
  });

  it("attack: X-Chat-Id without a key, or with a key for another chat, opens nothing", async () => {
    expect((await upload("chat-1", "private.txt", "chat-1 only", "text/plain")).status).toBe(201);
    const uri = "file://uploads/chat-1/private.txt";

    // The reported attack: no API key, only the header naming the victim's chat.
    const headerOnly = await connect({ "x-chat-id": "chat-1" });
    const listed = await rpcCode(headerOnly.listResources());
    expect(listed.data).toMatchObject({ code: "FORBIDDEN" });
    expect((await rpcCode(headerOnly.readResource({ uri }))).data.code).toBe("FORBIDDEN");

    // A real key, but one that may access chat-2 only.
    const otherChat = await connect({ "x-chat-id": "chat-1", authorization: `Bearer ${CHAT2_KEY}` });
    expect((await rpcCode(otherChat.listResources())).data.code).toBe("FORBIDDEN");
    const noHeader = await connect({ authorization: `Bearer ${CHAT2_KEY}` });
    const denied = await rpcCode(noHeader.readResource({ uri }));
    expect(denied.data).toMatchObject({ code: "NOT_FOUND", uri });
    const upload2 = await upload("chat-1", "planted.txt", "x", "text/plain", CHAT2_KEY);
    expect(upload2.status).toBe(403);

    // The same key works for its own chat.
    expect((await upload("chat-2", "mine.txt", "two", "text/plain", CHAT2_KEY)).status).toBe(201);
    const own = await connect({ "x-chat-id": "chat-2", authorization: `Bearer ${CHAT2_KEY}` });
    expect((await own.listResources()).resources.map((r) => r.uri)).toEqual([
      "file://uploads/chat-2/mine.txt",
    ]);
    expect(JSON.stringify(await own.listResources())).not.toContain("private.txt");
  });

  it("refuses uploads without the right key and stores nothing", async () => {
    const client = await connect({ "x-chat-id": "chat-1", ...AUTH });
    const noKey = await fetch(`${app.url}/api/uploads/chat-1/a.txt`, { method: "POST", body: "x" });
    expect(noKey.status).toBe(403);
    expect(((await noKey.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    const wrong = await upload("chat-1", "a.txt", "x", "text/plain", "wrong-key");
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect((await client.listResources()).resources).toEqual([]);
  });

  it("refuses an upload over the size cap and keeps what was stored before", async () => {
    await app.close();
    app = await start({ apiKeys: [KEY], dataDir: join(dir, "data2"), maxBytes: 1024, sdk });
    const client = await connect({ "x-chat-id": "chat-1", ...AUTH });
    expect((await upload("chat-1", "a.txt", "first", "text/plain")).status).toBe(201);
    const big = await upload("chat-1", "b.bin", randomBytes(4096), "application/octet-stream");
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe("FILE_TOO_LARGE");
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      "file://uploads/chat-1/a.txt",
    ]);
  });
});
