/**
 * SDK v2 over stdio (`serveStdio`): the 2026-07-28 era (a `server/discover` probe) and the 2025 era on
 * the same server; notifications reach a 2026-07-28 client on its `subscriptions/listen` stream and
 * a 2025 client on the connection, without `publishTo` (serveStdio routes the server's own sends).
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot, waitUntil } from "../../support/helpers.js";

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
});

async function connect(mode: "auto" | "legacy"): Promise<Client> {
  const client = new Client(
    { name: "stdio-test", version: "1.0.0" },
    mode === "auto" ? { versionNegotiation: { mode: "auto" } } : {},
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", "test/mcp/v2/stdio-server.ts"],
      cwd: repoRoot,
    }),
  );
  clients.push(client);
  return client;
}

describe("SDK v2 over stdio", { timeout: 60_000 }, () => {
  it.each(["auto", "legacy"] as const)("lists, reads and notifies (%s client)", async (mode) => {
    const client = await connect(mode);
    expect(client.getProtocolEra()).toBe(mode === "auto" ? "modern" : "legacy");
    const seen: string[] = [];
    client.setNotificationHandler("notifications/resources/list_changed", async () => {
      seen.push("list_changed");
    });
    if (mode === "auto") await client.listen({ resourcesListChanged: true });
    const added = await client.callTool({ name: "add_note", arguments: { text: "hello" } });
    const uri = (added.content as Array<{ text: string }>)[0]?.text as string;
    const read = await client.readResource({ uri });
    expect(read.contents[0]).toMatchObject({ uri, text: "hello" });
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([uri]);
    await waitUntil(() => seen.includes("list_changed"));
  });
});
