/**
 * The 2026-07-28 details that touch files, on the wire of a real stateless v2 server on 127.0.0.1:
 * cache hints on lists, routing headers, notifications through `subscriptions/listen`.
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningV2Server, serveHttpV2, staticTokens } from "../../examples/shared/serve-http-v2.js";
import {
  type Exchange,
  exchangeFor,
  type FilesApp,
  filesApp,
  newV2Server,
  recordingModernClient,
  resultOf,
  TOKENS,
  upload,
} from "../mcp/v2/harness.js";
import { waitUntil } from "../support/helpers.js";

let app: FilesApp;
let http: RunningV2Server;
const clients: Client[] = [];

/** A 2026-07-28 client that records every POST it makes and the JSON it got back. */
async function modernClient(token: string, exchanges: Exchange[] = []): Promise<Client> {
  const client = await recordingModernClient(http.mcpUrl, token, exchanges);
  clients.push(client);
  return client;
}

beforeEach(async () => {
  app = await filesApp();
  http = await serveHttpV2({
    createServer: () => app.mount(newV2Server()),
    routes: app.routes,
    authenticate: staticTokens(TOKENS),
  });
  app.setOrigin(http.url);
  app.registry.publishTo(http.handler);
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await http.close();
  await app.close();
});

describe("2026-07-28 on a stateless v2 server", () => {
  it("marks the per-user resources/list private with a short ttl, the shared templates public", async () => {
    const exchanges: Exchange[] = [];
    const client = await modernClient("token-alice", exchanges);
    await client.listResources();
    await client.listResourceTemplates();
    expect(resultOf(exchanges, "resources/list")).toMatchObject({ cacheScope: "private", ttlMs: 5000 });
    expect(resultOf(exchanges, "resources/templates/list")).toMatchObject({
      cacheScope: "public",
      ttlMs: 3_600_000,
    });
  });

  it("refuses requests whose routing headers disagree with the body (the SDK's check)", async () => {
    const exchanges: Exchange[] = [];
    const client = await modernClient("token-alice", exchanges);
    await client.readResource({ uri: "file://uploads/x/none.txt" }).catch(() => undefined);
    await client.callTool({ name: "get_upload_url", arguments: {} });
    const read = exchangeFor(exchanges, "resources/read");
    const call = exchangeFor(exchanges, "tools/call");
    expect(read.headers.get("mcp-method")).toBe("resources/read");
    expect(read.headers.get("mcp-name")).toBe("file://uploads/x/none.txt");
    expect(call.headers.get("mcp-name")).toBe("get_upload_url");

    const replay = async (from: Exchange, change: Record<string, string>) => {
      const headers = new Headers(from.headers);
      for (const [name, value] of Object.entries(change)) headers.set(name, value);
      const response = await fetch(from.url, { method: "POST", headers, body: from.body });
      return { status: response.status, body: (await response.json()) as { error?: { code: number } } };
    };
    // Unchanged, the replay is served (the server is stateless: a request stands on its own).
    expect((await replay(call, {})).status).toBe(200);
    const mismatches: Array<[Exchange, Record<string, string>]> = [
      [call, { "mcp-method": "resources/list" }],
      [call, { "mcp-name": "concat" }],
      [read, { "mcp-name": "file://uploads/x/other.txt" }],
    ];
    for (const [target, change] of mismatches) {
      const refused = await replay(target, change);
      expect(refused.status).toBe(400);
      expect(refused.body.error?.code).toBeTypeOf("number");
    }
  });

  it("delivers list_changed and updated through subscriptions/listen, updated only to who named the URI", async () => {
    const alice = await modernClient("token-alice");
    const bob = await modernClient("token-bob");
    const file = await upload(alice, "notes.txt", Buffer.from("v1\n"));
    await app.registry.close(); // sends the upload's own notifications now, before anyone listens

    const seen = { alice: [] as string[], bob: [] as string[] };
    for (const [who, client] of [
      ["alice", alice],
      ["bob", bob],
    ] as const) {
      client.setNotificationHandler("notifications/resources/list_changed", async () => {
        seen[who].push("list_changed");
      });
      client.setNotificationHandler("notifications/resources/updated", async (notification) => {
        seen[who].push(`updated ${notification.params.uri}`);
      });
    }
    const aliceStream = await alice.listen({ resourcesListChanged: true, resourceSubscriptions: [file.uri] });
    const bobStream = await bob.listen({ resourcesListChanged: true });
    expect(aliceStream.honoredFilter).toMatchObject({
      resourcesListChanged: true,
      resourceSubscriptions: [file.uri],
    });

    // The upload handle ends in the stored file's id.
    const removed = await app.registry.remove("alice", file.handle.split("/").pop() as string);
    expect(removed).toBe(true);

    await waitUntil(() => seen.alice.length >= 2 && seen.bob.length >= 1, 3000);
    await new Promise((resolve) => setTimeout(resolve, 100)); // anything else would have arrived by now
    expect(seen.alice.sort()).toEqual(["list_changed", `updated ${file.uri}`]);
    // Bob hears that some list changed (no content, no URI), never of Alice's file.
    expect(seen.bob).toEqual(["list_changed"]);
    await aliceStream.close();
    await bobStream.close();
    // The servers built for the listen requests were closed unconnected: none stays attached.
    const attached = (app.registry as unknown as { notifier: { attachments: Map<object, unknown> } }).notifier
      .attachments;
    expect(attached.size).toBe(0);
  });
});
