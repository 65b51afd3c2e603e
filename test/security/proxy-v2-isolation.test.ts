/**
 * Security review of the proxy's HTTP downstream (SDK v1 and v2): can one caller reach, or learn of,
 * another caller's files? Users Alice and Bob (bearer tokens), anonymous 2025 sessions, anonymous
 * 2026-07-28 requests; real HTTP on 127.0.0.1 in front of the fixture upstream and of an in-process
 * upstream that logs what it is given.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import { DEFAULT_SCOPE } from "../../src/scope/scope.js";
import {
  type AnyClient,
  type ClientKind,
  connectHttp,
  rpcError,
  type ToolResult,
  upload,
} from "../mcp/v2/harness.js";
import { FILE_TOOLS, fixtureCommand, removeDirs, tempDir, textOf } from "../proxy/support.js";
import { waitUntil } from "../support/helpers.js";
import { v1Sessions } from "../support/v1-sessions.js";
import { INITIALIZE, JSON_HEADERS, LEGACY, onSession, openSession } from "./raw-mcp.js";

const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789ab";

/** An upstream that logs (notifications/message) whatever its `note` tool is given. */
async function loggingUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = v1Sessions(() => {
    const server = new McpServer({ name: "logger", version: "1" }, { capabilities: { logging: {} } });
    server.registerTool("note", { inputSchema: { text: z.string() } }, async ({ text }) => {
      await server.sendLoggingMessage({ level: "info", data: `processing ${text}` });
      return { content: [{ type: "text", text: "noted" }] };
    });
    return server;
  });
  const http: Server = createServer((req, res) => void sessions.handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async close() {
      await sessions.close({ quiet: true });
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

describe.each(["v1", "v2"] as const)("proxy on SDK %s: scope isolation over HTTP", (sdk) => {
  let out: string;
  let handoff: string;
  let logger: Awaited<ReturnType<typeof loggingUpstream>>;
  let proxy: FileProxy;
  let mcpUrl: URL;
  const clients: AnyClient[] = [];
  const kinds: ClientKind[] = sdk === "v2" ? ["v2-modern", "v2-legacy", "v1"] : ["v1", "v2-legacy"];

  beforeAll(async () => {
    out = await tempDir("proxy-v2-iso-out-");
    handoff = await tempDir("proxy-v2-iso-handoff-");
    logger = await loggingUpstream();
    proxy = await createFileProxy({
      sdk,
      authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")),
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: out }), lg: { url: logger.url } },
        servers: {
          up: {
            handoffDir: handoff,
            outputDirs: [out],
            tools: FILE_TOOLS,
          },
          lg: { prefix: "lg_" },
        },
      },
      upstreamStderr: "ignore",
    });
    mcpUrl = new URL((await proxy.listen()).mcpUrl);
  });

  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await proxy?.close({ timeoutMs: 1000 });
    await logger?.close();
    await removeDirs(out, handoff);
  });

  async function connect(kind: ClientKind, token?: string): Promise<AnyClient> {
    const client = await connectHttp(kind, mcpUrl, token);
    clients.push(client);
    return client;
  }

  async function aliceArtifact(name: string): Promise<{ uri: string; url: string }> {
    const alice = await connect(sdk === "v2" ? "v2-modern" : "v1", ALICE);
    const written = (await alice.callTool({
      name: "write_file",
      arguments: { name, text: `secret ${name}` },
    })) as ToolResult;
    const meta = written._meta as { artifact_uri: string; download_url: string };
    return { uri: meta.artifact_uri, url: meta.download_url };
  }

  it.each(kinds)("Bob (%s) can neither list, read, subscribe to nor use Alice's files", async (kind) => {
    const { uri } = await aliceArtifact(`a-${kind}.txt`);
    const bob = await connect(kind, BOB);
    expect(JSON.stringify(await bob.listResources())).not.toContain(`a-${kind}.txt`);
    const read = await rpcError(bob.readResource({ uri }));
    expect(read.code).toBe(-32602);
    expect(JSON.stringify(read)).not.toContain("secret");
    if (kind !== "v2-modern") {
      const subscribe = (bob as unknown as V1Client).subscribeResource({ uri });
      expect((await rpcError(subscribe)).code).toBe(-32602);
    }
    // Alice's artifact URI as a file argument of Bob's call.
    const used = (await bob.callTool({ name: "read_file", arguments: { path: uri } })) as ToolResult;
    expect(used.isError).toBe(true);
    expect(textOf(used)).not.toContain("secret");
  });

  it("Bob's 2025 session hears nothing that names Alice's files", async () => {
    const bob = (await connect("v1", BOB)) as unknown as V1Client;
    const heard: string[] = [];
    bob.fallbackNotificationHandler = async (notification) => {
      heard.push(JSON.stringify(notification));
    };
    await bob.listResources(); // the session now has a scope
    const alice = await connect("v1", ALICE);
    const mark = `alice-only-${randomUUID()}`;
    await upload(alice, `${mark}.txt`, Buffer.from("x"));
    const written = (await alice.callTool({
      name: "write_file",
      arguments: { name: `${mark}.bin`, text: "y" },
    })) as ToolResult;
    const uri = (written._meta as { artifact_uri: string }).artifact_uri;
    await (alice as unknown as V1Client).subscribeResource({ uri });
    // Give the registry's coalesced notifications time to go out; Bob's own write proves delivery.
    await bob.callTool({ name: "write_file", arguments: { name: `bob-${mark}.txt`, text: "z" } });
    await waitUntil(() => heard.some((line) => line.includes("list_changed")));
    expect(heard.join("\n")).not.toContain(mark);
    expect(heard.join("\n")).not.toContain(uri);
  });

  // FINDING (medium): a 2025 session is not bound to the identity that opened it. Anyone holding the
  // session id can send requests on it with another user's token or with none (v2:
  // src/proxy/sdk/downstream/v2/endpoint.ts line 81 hands every request to the session's transport with the
  // request's own authInfo; v1: src/proxy/sdk/downstream/v1/endpoint.ts lines 36-42). Each request is scoped by
  // its own token, so files stay apart, but the session's notification sink keeps the scope of its
  // first request: a GET stream opened with a stolen session id (and Bob's or no token) hears the
  // owner's list changes and the URIs of the owner's subscribed files. Fix: remember the opener's
  // `extra.sub` per session and answer 404 to a request whose identity differs (see the report).
  it("a 2025 session answers only the identity that opened it", async () => {
    const session = await openSession(mcpUrl, ALICE);
    expect((await onSession(mcpUrl, session, "tools/list", {}, ALICE)).status).toBe(200);
    const asBob = await onSession(mcpUrl, session, "tools/list", {}, BOB);
    expect(asBob.status === 404 || asBob.status === 403).toBe(true);
    const anonymous = await onSession(mcpUrl, session, "tools/list", {});
    expect(anonymous.status === 404 || anonymous.status === 403 || anonymous.status === 401).toBe(true);
    const stream = await fetch(mcpUrl, {
      headers: {
        accept: "text/event-stream",
        authorization: `Bearer ${BOB}`,
        "mcp-session-id": session,
        "mcp-protocol-version": LEGACY,
      },
    });
    await stream.body?.cancel();
    expect(stream.status).not.toBe(200);
  });

  it("a request with Bob's token on Alice's session is still scoped to Bob (no file access)", async () => {
    const { uri } = await aliceArtifact("session-reuse.txt");
    const session = await openSession(mcpUrl, ALICE);
    const own = await onSession(mcpUrl, session, "resources/read", { uri }, ALICE);
    expect(JSON.stringify(own.message)).toContain("secret session-reuse.txt");
    for (const token of [BOB, undefined]) {
      const reused = await onSession(mcpUrl, session, "resources/read", { uri }, token);
      expect(JSON.stringify(reused)).not.toContain("secret session-reuse.txt");
      const listed = await onSession(mcpUrl, session, "resources/list", {}, token);
      expect(JSON.stringify(listed)).not.toContain(uri);
    }
  });

  // Was a finding: an upstream's `notifications/message` (its log) is not tied to a caller, so an
  // upstream that logs the arguments it works on (file names, paths, text) told Bob what Alice does.
  // Over HTTP the proxy now relays upstream logs only with `proxy.relayUpstreamLogs: true`.
  it("Bob never hears an upstream log line about Alice's call (HTTP relays no upstream log by default)", async () => {
    const bob = (await connect("v1", BOB)) as unknown as V1Client;
    const heard: string[] = [];
    bob.fallbackNotificationHandler = async (notification) => {
      heard.push(JSON.stringify(notification));
    };
    await bob.listResources();
    const alice = await connect("v1", ALICE);
    const secret = `alice-medical-${randomUUID()}.pdf`;
    expect(textOf(await alice.callTool({ name: "lg_note", arguments: { text: secret } }))).toBe("noted");
    await bob.callTool({ name: "lg_note", arguments: { text: "bob-own-line" } });
    // Whatever else Bob hears has arrived by now (the calls' own notifications came before their results).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard.join("\n")).not.toContain(secret);
    expect(heard.filter((line) => line.includes("notifications/message"))).toEqual([]);
  });
});

describe("proxy on SDK v2: callers without a scope never fall back to a shared one", () => {
  let out: string;
  let handoff: string;
  let proxy: FileProxy;
  let mcpUrl: URL;
  const clients: AnyClient[] = [];

  beforeAll(async () => {
    out = await tempDir("proxy-v2-anon-out-");
    handoff = await tempDir("proxy-v2-anon-handoff-");
    proxy = await createFileProxy({
      sdk: "v2",
      authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE}`, "test")),
      config: {
        mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: out }) },
        servers: {
          up: {
            handoffDir: handoff,
            outputDirs: [out],
            tools: {
              ...FILE_TOOLS,
              image: { artifacts: { locator: "embedded" } },
            },
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
    await removeDirs(out, handoff);
  });

  it("an anonymous 2026-07-28 caller reaches no file feature, and nothing lands in the default scope", async () => {
    const alice = await connectHttp("v2-modern", mcpUrl, ALICE);
    clients.push(alice);
    const uploaded = await upload(alice, "alice.txt", Buffer.from("alice upload"));
    const written = (await alice.callTool({
      name: "write_file",
      arguments: { name: "alice-art.txt", text: "alice artifact" },
    })) as ToolResult;
    const artifact = (written._meta as { artifact_uri: string }).artifact_uri;

    const anonymous = await connectHttp("v2-modern", mcpUrl);
    clients.push(anonymous);
    const forbidden = async (name: string, args: Record<string, unknown>) => {
      const result = (await anonymous.callTool({ name, arguments: args })) as ToolResult;
      expect(result.isError, name).toBe(true);
      expect(textOf(result)).toMatch(/^Error FORBIDDEN/);
      expect(JSON.stringify(result)).not.toMatch(/alice (upload|artifact)/);
      expect(result._meta?.artifact_uri).toBeUndefined();
    };
    await forbidden("get_upload_url", { filename: "x.txt" });
    await forbidden("read_file", { path: uploaded.handle });
    await forbidden("read_file", { path: uploaded.uri });
    await forbidden("read_file", { path: artifact });
    await forbidden("write_file", { name: "anon.txt", text: "anonymous artifact" });
    await forbidden("image", {});

    const read = await rpcError(anonymous.readResource({ uri: artifact }));
    expect(JSON.stringify(read)).not.toContain("alice artifact");
    const listed = await anonymous.listResources();
    expect(listed.resources.map((r) => r.uri).filter((uri) => !uri.startsWith("fixture:"))).toEqual([]);
    const templates = await (anonymous as unknown as Client).listResourceTemplates();
    expect(templates.resourceTemplates).toEqual([]);

    expect((await proxy.store.list(DEFAULT_SCOPE)).files).toEqual([]);
    expect((await proxy.store.list("alice")).files.map((file) => file.name).sort()).toEqual([
      "alice-art.txt",
      "alice.txt",
    ]);
  });

  // Issue 21 part 3: with auth configured an anonymous caller opens no 2025 session at all (401), so
  // it can neither store files under a session scope nor hold sessions open.
  it("an anonymous 2025 session is refused with 401 when auth is configured; nothing lands in the default scope", async () => {
    const refused = await fetch(mcpUrl, { method: "POST", headers: JSON_HEADERS, body: INITIALIZE });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(refused.headers.get("mcp-session-id")).toBeNull();
    await refused.text();
    await expect(connectHttp("v2-legacy", mcpUrl)).rejects.toThrow();
    expect((await proxy.store.list(DEFAULT_SCOPE)).files).toEqual([]);
    const modern = await connectHttp("v2-modern", mcpUrl);
    clients.push(modern);
    const fromModern = (await modern.callTool({
      name: "read_file",
      arguments: { path: "upload://sessions/AAAAAAAAAAAAAAAAAAAAAA/x" },
    })) as ToolResult;
    expect(fromModern.isError).toBe(true);
  });

  it("a listen stream of another caller gets content-free list changes only", async () => {
    const listener = new Client(
      { name: "eavesdropper", version: "1" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await listener.connect(new StreamableHTTPClientTransport(mcpUrl));
    const heard: string[] = [];
    listener.fallbackNotificationHandler = async (notification) => {
      heard.push(JSON.stringify(notification));
    };
    listener.setNotificationHandler("notifications/resources/list_changed", async (notification) => {
      heard.push(JSON.stringify(notification));
    });
    const stream = await listener.listen({ resourcesListChanged: true, toolsListChanged: true });
    const alice = await connectHttp("v2-modern", mcpUrl, ALICE);
    clients.push(alice);
    await alice.listResources(); // the proxy holds Alice's scope from now on
    const mark = `quiet-${randomUUID()}`;
    await alice.callTool({ name: "write_file", arguments: { name: `${mark}.txt`, text: "q" } });
    await waitUntil(() => heard.some((line) => line.includes("resources/list_changed")));
    expect(heard.join("\n")).not.toContain(mark);
    await stream.close();
    await listener.close();
  });
});

describe("proxy: upstream logs over HTTP only when asked (relayUpstreamLogs)", () => {
  it.each(["v1", "v2"] as const)(
    "%s: a 2025 session hears the upstream's log lines with relayUpstreamLogs: true",
    async (sdk) => {
      const logger = await loggingUpstream();
      const proxy = await createFileProxy({
        sdk,
        config: { mcpServers: { lg: { url: logger.url } }, proxy: { relayUpstreamLogs: true } },
        upstreamStderr: "ignore",
      });
      try {
        const client = (await connectHttp(
          "v1",
          new URL((await proxy.listen()).mcpUrl),
        )) as unknown as V1Client;
        const heard: string[] = [];
        client.fallbackNotificationHandler = async (notification) => {
          heard.push(JSON.stringify(notification));
        };
        await client.callTool({ name: "note", arguments: { text: "relayed-line" } });
        await waitUntil(() => heard.some((line) => line.includes("processing relayed-line")));
        await client.close();
      } finally {
        await proxy.close({ timeoutMs: 1000 });
        await logger.close();
      }
    },
  );
});
