/**
 * The 2026-07-28 wire of the proxy on SDK v2: cache hints on its lists, routing headers, progress,
 * and notifications through `subscriptions/listen` (from the upstream and from the proxy's own
 * files); next to a 2025-era session on the same path, which gets them on its session.
 */
import type { Client } from "@modelcontextprotocol/client";
import type { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../../../src/proxy/index.js";
import {
  connectHttp,
  type Exchange,
  exchangeFor,
  recordingModernClient,
  resultOf,
} from "../../../mcp/v2/harness.js";
import { waitUntil } from "../../../support/helpers.js";
import { fixtureCommand, removeDirs, tempDir, textOf, WRITE_FILE_ARTIFACTS } from "../../support.js";

const ALICE = "alice-token-0123456789";

let out: string;
let marker: string;
let proxy: FileProxy;
let mcpUrl: URL;
const clients: Client[] = [];

beforeAll(async () => {
  out = await tempDir("proxy-v2w-out-");
  marker = await tempDir("proxy-v2w-marker-");
  proxy = await createFileProxy({
    sdk: "v2",
    authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE}`, "test")),
    config: {
      mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: marker }) },
      servers: {
        up: {
          outputDirs: [out],
          tools: WRITE_FILE_ARTIFACTS,
        },
      },
    },
    upstreamStderr: "ignore",
  });
  mcpUrl = new URL((await proxy.listen()).mcpUrl);
});

afterAll(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await proxy?.close();
  await removeDirs(out, marker);
});

/** A 2026-07-28 client (Alice) that records every JSON exchange. */
async function modernClient(exchanges: Exchange[] = []): Promise<Client> {
  const client = await recordingModernClient(mcpUrl, ALICE, exchanges);
  clients.push(client);
  return client;
}

describe("the proxy on SDK v2, 2026-07-28 wire", () => {
  it("marks its resource lists private (each user's own files) with a short ttl", async () => {
    const exchanges: Exchange[] = [];
    const client = await modernClient(exchanges);
    await client.listResources();
    await client.listResourceTemplates();
    expect(resultOf(exchanges, "resources/list")).toMatchObject({ cacheScope: "private", ttlMs: 5000 });
    expect(resultOf(exchanges, "resources/templates/list")).toMatchObject({
      cacheScope: "private",
      ttlMs: 5000,
    });
  });

  it("refuses a replayed request whose routing headers disagree with its body", async () => {
    const exchanges: Exchange[] = [];
    const client = await modernClient(exchanges);
    await client.callTool({ name: "echo", arguments: { text: "x" } });
    const call = exchangeFor(exchanges, "tools/call");
    expect(call.headers.get("mcp-name")).toBe("echo");
    const headers = new Headers(call.headers);
    headers.set("mcp-name", "write_file");
    const replay = await fetch(mcpUrl, { method: "POST", headers, body: call.body });
    expect(replay.status).toBe(400);
  });

  it("relays the upstream's progress before the result", async () => {
    const client = await modernClient();
    const updates: number[] = [];
    const result = await client.callTool(
      { name: "slow", arguments: { steps: 3, delayMs: 5 } },
      { onprogress: (update) => updates.push(update.progress) },
    );
    expect(textOf(result)).toBe("done after 3 steps");
    expect(updates).toEqual([1, 2, 3]);
  });

  it("delivers the upstream's tools/list_changed and its own resources list_changed through subscriptions/listen", async () => {
    const listener = await modernClient();
    const seen: string[] = [];
    listener.setNotificationHandler("notifications/tools/list_changed", async () => {
      seen.push("tools");
    });
    listener.setNotificationHandler("notifications/resources/list_changed", async () => {
      seen.push("resources");
    });
    const stream = await listener.listen({ toolsListChanged: true, resourcesListChanged: true });

    // A 2025-era session on the same path hears the same, on its session.
    const legacy = await connectHttp("v1", mcpUrl, ALICE);
    const legacySeen: string[] = [];
    (legacy as unknown as V1Client).setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      legacySeen.push("tools");
    });

    const actor = await modernClient();
    await actor.callTool({ name: "add_tool", arguments: {} });
    await waitUntil(() => seen.includes("tools") && legacySeen.includes("tools"));
    const written = await actor.callTool({ name: "write_file", arguments: { name: "n.txt", text: "new" } });
    expect(written.isError).toBeFalsy();
    await waitUntil(() => seen.includes("resources"));
    expect((await actor.listTools()).tools.map((tool) => tool.name)).toContain("added");
    await stream.close();
    await legacy.close();
  });
});
