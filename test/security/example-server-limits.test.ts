import { connect } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningHttpServer, serveHttp } from "../../examples/shared/serve-http.js";
import {
  EXAMPLE_TICKET_RATE_LIMIT,
  HTTP_SERVER_TIMEOUTS,
  ticketRateLimit,
} from "../../examples/shared/server-limits.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { waitUntil } from "../support/helpers.js";
import { connectInMemory } from "../support/in-memory-client.js";
import { INITIALIZE, JSON_HEADERS, onSession } from "./raw-mcp.js";

// Issue 21, item 8: on the examples' HTTP server a socket that never sent a byte stayed open past
// 200 s (Node's defaults), and one session minted 60 upload tickets in under a second.

let running: RunningHttpServer | undefined;
const clients: Client[] = [];

afterEach(async () => {
  await running?.close();
  running = undefined;
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** Opens a socket, sends `head` (maybe nothing), and resolves with what came back and when it closed. */
function silentSocket(url: string, head = ""): Promise<{ response: string; closedAfterMs: number }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    const started = Date.now();
    let response = "";
    socket.on("data", (data) => {
      response += data.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("connect", () => {
      if (head) socket.write(head);
    });
    socket.on("close", () => resolve({ response, closedAfterMs: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error("the server kept the silent socket open"));
    }, 10_000).unref();
  });
}

function mcpServer(): McpServer {
  return new McpServer({ name: "limits", version: "1.0.0" });
}

describe("the examples' HTTP server limits", () => {
  it("start with header, request and keep-alive timeouts", async () => {
    running = await serveHttp({ createServer: mcpServer });
    expect(running.server.headersTimeout).toBe(HTTP_SERVER_TIMEOUTS.headersTimeout);
    expect(running.server.requestTimeout).toBe(HTTP_SERVER_TIMEOUTS.requestTimeout);
    expect(running.server.keepAliveTimeout).toBe(HTTP_SERVER_TIMEOUTS.keepAliveTimeout);
    expect(HTTP_SERVER_TIMEOUTS.headersTimeout).toBeLessThanOrEqual(10_000);
  });

  it("a socket that never sends a byte, or never finishes its head, is answered 408 and closed", async () => {
    running = await serveHttp({
      createServer: mcpServer,
      timeouts: { headersTimeout: 400, connectionsCheckingInterval: 100 },
    });
    const silent = await silentSocket(running.url);
    expect(silent.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(silent.closedAfterMs).toBeGreaterThanOrEqual(300);
    expect(silent.closedAfterMs).toBeLessThan(3000);
    const partial = await silentSocket(running.url, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a");
    expect(partial.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(partial.closedAfterMs).toBeLessThan(3000);
    // A real request still works.
    const ok = await fetch(`${running.url}/elsewhere`);
    expect(ok.status).toBe(404);
  });
});

describe("the examples' ticket rate limit", () => {
  async function client(uploads: UploadHandleResolver): Promise<Client> {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    uploads.attach(server);
    const { client: mcp } = await connectInMemory(server, { name: "c", version: "1.0.0" });
    clients.push(mcp);
    return mcp;
  }

  it("60 calls in a burst mint 20 tickets; the rest are RATE_LIMITED; another scope has its own budget; a new window resets", async () => {
    let now = 1_000_000;
    const limit = ticketRateLimit(EXAMPLE_TICKET_RATE_LIMIT, () => now);
    const state = memoryState();
    const minter = new SignedUrlMinter({ secret: "r".repeat(40), baseUrl: "http://127.0.0.1:9", state });
    const make = (scope: string) =>
      new UploadHandleResolver({
        store: memoryStore(),
        minter,
        state,
        scope: () => scope,
        toolName: "get_upload_url",
        rateLimit: limit,
      });
    const alice = await client(make("alice"));
    const burst = await Promise.all(
      Array.from({ length: 60 }, () => alice.callTool({ name: "get_upload_url", arguments: {} })),
    );
    expect(burst.filter((result) => !result.isError)).toHaveLength(20);
    const refused = burst.filter((result) => result.isError);
    expect(refused).toHaveLength(40);
    expect(JSON.stringify(refused[0])).toContain("RATE_LIMITED");

    const bob = await client(make("bob"));
    expect((await bob.callTool({ name: "get_upload_url", arguments: {} })).isError).toBeFalsy();

    now += EXAMPLE_TICKET_RATE_LIMIT.windowMs;
    expect((await alice.callTool({ name: "get_upload_url", arguments: {} })).isError).toBeFalsy();
  });
});

/**
 * The registry's per-session state, read through the private fields a heap snapshot shows (as `npm
 * run soak` does). The scope indexes live in the registry's work, loaded at its first async call
 * (each read below follows a `resources/list`, so it is loaded).
 */
async function held(registry: ResourceRegistry): Promise<{ attachments: number; scopeIndexes: number }> {
  const inner = registry as unknown as {
    notifier: { attachments: Map<unknown, unknown> };
    work: () => Promise<{ indexes: { indexes: Map<unknown, unknown> } }>;
  };
  const work = await inner.work();
  return { attachments: inner.notifier.attachments.size, scopeIndexes: work.indexes.indexes.size };
}

// Item 8's memory growth under a soak: sessions whose clients left without DELETE were kept forever,
// each pinning a registry attachment and a scope index. The examples' server caps and expires them.
describe("the examples' session bounds", () => {
  it("sessions past maxSessions get 429; idle ones close and release their registry state", async () => {
    let now = 1_000_000;
    const registry = new ResourceRegistry({ store: memoryStore(), indexIdleTimeout: "1m", now: () => now });
    running = await serveHttp({
      sessionIdleMs: 300,
      maxSessions: 3,
      createServer: () => {
        const server = mcpServer();
        registry.attach(server);
        return server;
      },
    });
    const left: string[] = [];
    const leavers: Client[] = [];
    for (let i = 0; i < 3; i++) {
      const client = new Client({ name: `leaver-${i}`, version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(running.mcpUrl);
      await client.connect(transport);
      await client.listResources();
      left.push(transport.sessionId as string);
      leavers.push(client);
    }
    expect(await held(registry)).toEqual({ attachments: 3, scopeIndexes: 3 });
    // The clients go away without DELETE (closing drops their streams), as most do.
    await Promise.all(leavers.map((client) => client.close()));
    const refused = await fetch(running.mcpUrl, { method: "POST", headers: JSON_HEADERS, body: INITIALIZE });
    await refused.text();
    expect(refused.status).toBe(429);

    await waitUntil(() => running?.sessions.size === 0, 10_000);
    expect((await held(registry)).attachments).toBe(0);
    expect((await onSession(running.mcpUrl, left[0] as string, "resources/list", {})).status).toBe(404);
    // A new session opens; once the old scopes are idle past indexIdleTimeout, its first use drops them.
    const next = new Client({ name: "next", version: "1.0.0" });
    clients.push(next);
    await next.connect(new StreamableHTTPClientTransport(running.mcpUrl));
    now += 61_000;
    await next.listResources();
    expect(await held(registry)).toEqual({ attachments: 1, scopeIndexes: 1 });
  });
});
