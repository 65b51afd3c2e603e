import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultScope, type ScopeFunction, scopeRef } from "../../src/scope/scope.js";
import { recordNotifications, rpcError } from "../registry/support.js";
import { type RegistryHttpServer, startRegistryHttpServer } from "./registry-http-server.js";

let server: RegistryHttpServer;
const clients: Client[] = [];
const extraServers: RegistryHttpServer[] = [];

beforeEach(async () => {
  server = await startRegistryHttpServer();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  await server.close();
  await Promise.all(extraServers.splice(0).map((s) => s.close()));
});

async function session(
  headers: Record<string, string> = {},
  on: RegistryHttpServer = server,
): Promise<{ client: Client; sessionId: string }> {
  const client = new Client({ name: "http-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(on.url), { requestInit: { headers } });
  await client.connect(transport);
  clients.push(client);
  const sessionId = transport.sessionId as string;
  expect(sessionId).toEqual(expect.any(String));
  return { client, sessionId };
}

async function putFile(client: Client, name: string, text: string): Promise<string> {
  const result = await client.callTool({ name: "put_file", arguments: { name, text } });
  expect(result.isError).toBeFalsy();
  const link = (result.content as Array<{ type: string; uri?: string }>)[0];
  expect(link?.type).toBe("resource_link");
  return link?.uri as string;
}

describe("ResourceRegistry over Streamable HTTP, two sessions", () => {
  it("each session sees and reads only its own files", async () => {
    const a = await session();
    const b = await session();
    const uriA = await putFile(a.client, "a notes.txt", "from A");
    const uriB = await putFile(b.client, "b.txt", "from B");
    // The session id (a bearer value here) never appears in a URI: its reference does.
    expect(uriA).toBe(`file://uploads/${scopeRef(a.sessionId)}/a%20notes.txt`);
    expect(uriA).not.toContain(a.sessionId);

    expect((await a.client.listResources()).resources.map((r) => r.uri)).toEqual([uriA]);
    expect((await b.client.listResources()).resources.map((r) => r.uri)).toEqual([uriB]);

    const read = await a.client.readResource({ uri: uriA });
    expect((read.contents[0] as { text: string }).text).toBe("from A");

    const crossed = await rpcError(b.client.readResource({ uri: uriA }));
    expect(crossed.code).toBe(-32602);
    expect(crossed.data).toMatchObject({ uri: uriA, code: "NOT_FOUND" });
    const subscribe = await rpcError(b.client.subscribeResource({ uri: uriA }));
    expect(subscribe.code).toBe(-32602);
  });

  it("sends list_changed to the session whose scope changed, and not to the other", async () => {
    const a = await session();
    const b = await session();
    const logA = recordNotifications(a.client);
    const logB = recordNotifications(b.client);
    await Promise.all([server.sseReady(a.sessionId), server.sseReady(b.sessionId)]);

    await putFile(a.client, "a.txt", "A");
    await logA.until((l) => l.listChanged >= 1);
    // B's notifications arrive in order on its one SSE stream: had A's change reached B, B would
    // count two after its own.
    await putFile(b.client, "b.txt", "B");
    await logB.until((l) => l.listChanged >= 1);
    await b.client.ping();
    expect(logB.listChanged).toBe(1);
    expect(logA.listChanged).toBe(1);
  });
});

/** The chat-uploads design: the scope is an `X-Chat-Id` header, not the MCP session. */
const chatScope: ScopeFunction = (extra) => {
  const header = extra.requestInfo?.headers?.["x-chat-id"];
  return typeof header === "string" && header.length > 0 ? header : defaultScope(extra);
};

describe("a header-based scope function", () => {
  it("notifies a session attached with its scope before it sends any resources request", async () => {
    const chats = await startRegistryHttpServer({
      scope: chatScope,
      attachScope: (req) => {
        const header = req.headers["x-chat-id"];
        return typeof header === "string" ? header : undefined;
      },
    });
    extraServers.push(chats);
    const a = await session({ "X-Chat-Id": "chat-1" }, chats);
    const log = recordNotifications(a.client);
    await chats.sseReady(a.sessionId);
    // Added out of band (an upload route, another process): no request of A's is involved.
    const file = await chats.registry.add(new TextEncoder().encode("hi"), { scope: "chat-1", name: "a.txt" });
    await log.until((l) => l.listChanged >= 1);
    expect((await a.client.listResources()).resources.map((r) => r.uri)).toEqual([
      chats.registry.uriFor(file),
    ]);
  });

  it("learns a session's scope from its first resources request", async () => {
    const chats = await startRegistryHttpServer({ scope: chatScope });
    extraServers.push(chats);
    const a = await session({ "X-Chat-Id": "chat-2" }, chats);
    const log = recordNotifications(a.client);
    await chats.sseReady(a.sessionId);
    expect((await a.client.listResources()).resources).toEqual([]);
    await chats.registry.add(new TextEncoder().encode("hi"), { scope: "chat-2", name: "b.txt" });
    await log.until((l) => l.listChanged >= 1);
    expect((await a.client.listResources()).resources.map((r) => r.name)).toEqual(["b.txt"]);
  });
});
