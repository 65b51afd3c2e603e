/**
 * Issue 21, part 4: no existence oracle on 2026-07-28 listen streams. Bob used to compute Alice's
 * upload URI offline (the scope reference was an unkeyed SHA-256 of "alice"), name it in his
 * `subscriptions/listen` `resourceSubscriptions`, and hear `notifications/resources/updated` when
 * Alice stored a file of the guessed name. Now references are an HMAC under the server secret, and
 * an update reaches only streams whose user owns the URI's scope. Real proxy on SDK v2 (the only
 * generation with listen streams) over HTTP on 127.0.0.1, in front of the real stdio fixture.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { unkeyedScopeRef } from "../../src/scope/scope-refs.js";
import type { StoredFile } from "../../src/storage/types.js";
import { connectHttp, upload } from "../mcp/v2/harness.js";
import { FILE_TOOLS, fixtureCommand, removeDirs, tempDir } from "../proxy/support.js";
import { waitUntil } from "../support/helpers.js";

const ALICE = "alice-token-listen-012345";
const BOB = "bob-token-listen-0123456789";

describe("proxy on SDK v2: listen streams are no existence oracle", () => {
  let out: string;
  let handoff: string;
  let proxy: FileProxy;
  let mcpUrl: URL;
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    out = await tempDir("proxy-listen-out-");
    handoff = await tempDir("proxy-listen-handoff-");
    proxy = await createFileProxy({
      sdk: "v2",
      authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")),
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: out }) },
        servers: { up: { handoffDir: handoff, outputDirs: [out], tools: FILE_TOOLS } },
      },
      upstreamStderr: "ignore",
    });
    mcpUrl = new URL((await proxy.listen()).mcpUrl);
  });

  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await proxy?.close({ timeoutMs: 1000 });
    await removeDirs(out, handoff);
  });

  /** A 2026-07-28 client with `token` listening for updates of `uris`; what it heard. */
  async function listener(token: string, uris: string[]): Promise<string[]> {
    const client = new Client(
      { name: "listener", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const heard: string[] = [];
    client.fallbackNotificationHandler = async (notification) => {
      heard.push(JSON.stringify(notification));
    };
    client.setNotificationHandler("notifications/resources/updated", async (notification) => {
      heard.push(JSON.stringify(notification));
    });
    const stream = await client.listen({ resourceSubscriptions: uris, resourcesListChanged: true });
    closers.push(
      () => client.close(),
      () => stream.close(),
    );
    return heard;
  }

  it("Bob naming Alice's URI hears no update when she stores that file; Alice does", async () => {
    const name = "q3-salaries.txt";
    // What Bob could compute offline before: the unkeyed reference of "alice". It is not the real one.
    const offline = `file://uploads/${unkeyedScopeRef("alice")}/${name}`;
    // Alice's real URI (only the server, holding the secret, computes it).
    const real = proxy.registry.uriFor({ scope: "alice", id: "x", name, kind: "upload" } as StoredFile);
    expect(real).not.toBe(offline);
    expect(real).not.toContain(unkeyedScopeRef("alice"));

    const bobHeard = await listener(BOB, [real, offline]);
    const aliceHeard = await listener(ALICE, [real]);
    const alice = await connectHttp("v2-modern", mcpUrl, ALICE);
    closers.push(() => alice.close());
    const stored = await upload(alice, name, Buffer.from("salaries"));
    expect(stored.uri).toBe(real);
    // The owner's stream hears the update (the positive control) …
    await waitUntil(
      () => aliceHeard.some((line) => line.includes("resources/updated") && line.includes(name)),
      15_000,
    );
    // … and by then Bob's stream has heard the content-free list change, but never the update.
    await waitUntil(() => bobHeard.some((line) => line.includes("list_changed")), 15_000);
    expect(bobHeard.join("\n")).not.toContain("resources/updated");
    expect(bobHeard.join("\n")).not.toContain(name);
  });
});
