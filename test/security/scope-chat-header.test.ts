import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatUploadsServer, start } from "../../examples/chat-uploads/server.js";

// Attack (reported against the chat-uploads example and the docs that showed its pattern): a client
// with no API key sends only `X-Chat-Id: chat-1` and reads chat-1's private files, because the
// scope came from that bare header. Now the header is accepted only with a key that may access the
// chat; everything else is refused and no byte of the file comes back.

const BACKEND_KEY = "backend-key-0123456789abcdef";
const CHAT2_KEY = "chat-2-key-0123456789abcdef";
const PRIVATE = "chat-1 private: the launch date is 2031-04-01";

async function failure(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error.data as Record<string, unknown>;
    throw error;
  }
  throw new Error("expected the request to fail");
}

describe("attack: X-Chat-Id without credentials for that chat", () => {
  let dir: string;
  let app: ChatUploadsServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "chat-header-"));
    app = await start({
      apiKeys: [BACKEND_KEY],
      grants: [{ key: CHAT2_KEY, chats: ["chat-2"] }],
      dataDir: join(dir, "data"),
    });
    const stored = await fetch(`${app.url}/api/uploads/chat-1/plans.txt`, {
      method: "POST",
      headers: { authorization: `Bearer ${BACKEND_KEY}`, "content-type": "text/plain" },
      body: PRIVATE,
    });
    expect(stored.status).toBe(201);
  });
  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await app.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: "attacker", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(app.mcpUrl, { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  const uri = "file://uploads/chat-1/plans.txt";

  for (const [label, headers] of [
    ["no key, header only", { "x-chat-id": "chat-1" }],
    ["a wrong key", { "x-chat-id": "chat-1", authorization: "Bearer guessed" }],
    ["a key for another chat", { "x-chat-id": "chat-1", authorization: `Bearer ${CHAT2_KEY}` }],
  ] as const) {
    it(`refuses list, read and subscribe with ${label}`, async () => {
      const client = await connect(headers);
      expect((await failure(client.listResources())).code).toBe("FORBIDDEN");
      const read = await failure(client.readResource({ uri }));
      expect(read.code).toBe("FORBIDDEN");
      expect(JSON.stringify(read)).not.toContain(PRIVATE);
      expect((await failure(client.subscribeResource({ uri }))).code).toBe("FORBIDDEN");
    });
  }

  it("refuses a read by URI without X-Chat-Id unless the key may access the URI's chat", async () => {
    for (const headers of [{}, { authorization: `Bearer ${CHAT2_KEY}` }] as Record<string, string>[]) {
      const client = await connect(headers);
      expect((await failure(client.readResource({ uri }))).code).toBe("NOT_FOUND");
    }
    const backend = await connect({ authorization: `Bearer ${BACKEND_KEY}` });
    expect((await backend.readResource({ uri })).contents[0]).toMatchObject({ text: PRIVATE });
  });

  it("refuses uploads into the chat without a key for it, and stores nothing", async () => {
    for (const authorization of [undefined, "Bearer guessed", `Bearer ${CHAT2_KEY}`]) {
      const response = await fetch(`${app.url}/api/uploads/chat-1/planted.txt`, {
        method: "POST",
        headers: { "content-type": "text/plain", ...(authorization ? { authorization } : {}) },
        body: "planted",
      });
      expect(response.status).toBe(403);
    }
    expect((await app.store.list("chat-1")).files.map((file) => file.name)).toEqual(["plans.txt"]);
  });
});
