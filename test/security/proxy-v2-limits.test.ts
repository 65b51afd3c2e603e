/**
 * Bounds the review of the proxy on SDK v2 asked for: `subscriptions/listen` streams per user (so
 * nobody fills the shared capacity), file tools refused before the upstream does any work for a
 * caller without a scope, and the loopback test of the Host guard for every spelling of a loopback
 * address.
 */
import { readdir } from "node:fs/promises";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopbackBind } from "../../src/http/host-guard.js";
import { bearerTokens, createFileProxy, type FileProxy, parseBearerTokens } from "../../src/proxy/index.js";
import { fixtureCommand, removeDirs, tempDir, textOf, WRITE_FILE_ARTIFACTS } from "../proxy/support.js";

const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789ab";

let out: string;
let proxy: FileProxy;
let mcpUrl: URL;
const clients: Client[] = [];

beforeAll(async () => {
  out = await tempDir("proxy-v2-limits-out-");
  proxy = await createFileProxy({
    sdk: "v2",
    authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")),
    config: {
      mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: out }) },
      proxy: { limits: { listenStreams: 2 } },
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
  await proxy?.close({ timeoutMs: 1000 });
  await removeDirs(out);
});

async function modern(token?: string): Promise<Client> {
  const client = new Client(
    { name: "limits", version: "1" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(
      mcpUrl,
      token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {},
    ),
  );
  clients.push(client);
  return client;
}

describe("proxy on SDK v2: subscriptions/listen streams per user", () => {
  it("a user gets at most the configured number of open streams; others are not affected; a closed one frees its place", async () => {
    const alice = await modern(ALICE);
    const first = await alice.listen({ toolsListChanged: true });
    const second = await alice.listen({ resourcesListChanged: true });
    await expect(alice.listen({ toolsListChanged: true })).rejects.toThrow();
    const bob = await modern(BOB);
    const bobs = await bob.listen({ toolsListChanged: true });
    await first.close();
    // The server sees the stream end a moment later.
    let third: Awaited<ReturnType<Client["listen"]>> | undefined;
    for (let attempt = 0; attempt < 50 && third === undefined; attempt++) {
      third = await alice.listen({ toolsListChanged: true }).catch(() => undefined);
      if (third === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(third).toBeDefined();
    await Promise.all([second.close(), bobs.close(), third?.close()]);
  });

  it("anonymous callers share one count", async () => {
    const one = await modern();
    const two = await modern();
    const a = await one.listen({ toolsListChanged: true });
    const b = await two.listen({ toolsListChanged: true });
    await expect(one.listen({ toolsListChanged: true })).rejects.toThrow();
    await Promise.all([a.close(), b.close()]);
  });
});

describe("proxy on SDK v2: a file tool without a scope", () => {
  it("is refused before the upstream runs: nothing is written upstream", async () => {
    const anonymous = await modern();
    const result = await anonymous.callTool({ name: "write_file", arguments: { name: "x.txt", text: "no" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Error FORBIDDEN/);
    expect(await readdir(out)).toEqual([]);
    // With a user, the same call works (the refusal was about the scope).
    const alice = await modern(ALICE);
    const written = await alice.callTool({ name: "write_file", arguments: { name: "x.txt", text: "yes" } });
    expect(written.isError).toBeFalsy();
  });
});

describe("isLoopbackBind", () => {
  it("knows every spelling of a loopback address, and nothing else", () => {
    for (const host of [
      "localhost",
      "127.0.0.1",
      "127.1.2.3",
      "::1",
      "[::1]",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
    ]) {
      expect(isLoopbackBind(host), host).toBe(true);
    }
    for (const host of [
      "0.0.0.0",
      "::",
      "10.0.0.1",
      "::ffff:10.0.0.1",
      "example.com",
      "127.example.com",
      "[::2]",
    ]) {
      expect(isLoopbackBind(host), host).toBe(false);
    }
  });
});

describe("proxy on SDK v2: the proxy's own file changes on listen streams", () => {
  it("a user who never listed resources hears of the artifact its call created", async () => {
    const bob = await modern(BOB);
    const heard: string[] = [];
    bob.setNotificationHandler("notifications/resources/list_changed", async () => {
      heard.push("list_changed");
    });
    const stream = await bob.listen({ resourcesListChanged: true });
    const written = await bob.callTool({ name: "write_file", arguments: { name: "b.txt", text: "bob's" } });
    expect(written.isError).toBeFalsy();
    for (let i = 0; i < 250 && heard.length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toContain("list_changed");
    await stream.close();
  });
});
