/**
 * Security review of the proxy's HTTP downstream (SDK v1 and v2): what a caller can make the proxy
 * keep in memory. Counts the core's sinks (through its public `addSink`) and the registry's
 * attachments (through its public `attach` / `detach`) while real HTTP requests come in.
 */
import { afterEach, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/index.js";
import type { DownstreamSink } from "../../src/proxy/types.js";
import { connectHttp } from "../mcp/v2/harness.js";
import { fixtureCommand, removeDirs, tempDir, WRITE_FILE_ARTIFACTS } from "../proxy/support.js";
import { deleteSession, JSON_HEADERS, LEGACY, onSession, openSession } from "./raw-mcp.js";

const ALICE = "alice-token-0123456789";

interface Counted {
  proxy: FileProxy;
  mcpUrl: string;
  /** Sinks added to the core and not removed. */
  sinks: Set<DownstreamSink>;
  /** Hosts the registry is attached to and not detached from. */
  attached: Set<unknown>;
  dirs: string[];
}

const running: Counted[] = [];

afterEach(async () => {
  for (const each of running.splice(0)) {
    await each.proxy.close({ timeoutMs: 1000 });
    await removeDirs(...each.dirs);
  }
});

/** A proxy with Alice's token (`auth`), else without auth (anonymous 2025 sessions are refused with auth). */
async function start(sdk: "v1" | "v2", auth = true): Promise<Counted> {
  const out = await tempDir("proxy-v2-ex-out-");
  const proxy = await createFileProxy({
    sdk,
    ...(auth ? { authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE}`, "test")) } : {}),
    config: {
      mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: out }) },
      servers: {
        up: {
          outputDirs: [out],
          tools: WRITE_FILE_ARTIFACTS,
        },
      },
    },
    upstreamStderr: "ignore",
  });
  const sinks = new Set<DownstreamSink>();
  const addSink = proxy.core.addSink.bind(proxy.core);
  proxy.core.addSink = (sink) => {
    sinks.add(sink);
    const remove = addSink(sink);
    return () => {
      sinks.delete(sink);
      return remove();
    };
  };
  const attached = new Set<unknown>();
  const attach = proxy.registry.attach.bind(proxy.registry);
  const detach = proxy.registry.detach.bind(proxy.registry);
  proxy.registry.attach = (host, options) => {
    attached.add(host);
    attach(host, options);
  };
  proxy.registry.detach = (host) => {
    attached.delete(host);
    detach(host);
  };
  const { mcpUrl } = await proxy.listen();
  const counted = { proxy, mcpUrl, sinks, attached, dirs: [out] };
  running.push(counted);
  return counted;
}

describe.each(["v1", "v2"] as const)("proxy on SDK %s: what HTTP callers leave behind", (sdk) => {
  it("a closed 2025 session leaves no sink in the core", async () => {
    const { mcpUrl, sinks } = await start(sdk, false);
    const baseline = sinks.size;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await openSession(mcpUrl));
    expect(sinks.size).toBe(baseline + 5);
    for (const id of ids) expect(await deleteSession(mcpUrl, id)).toBe(200);
    expect(sinks.size).toBe(baseline);
  });

  // FINDING (high, unauthenticated DoS): every POST without a session id builds and connects a
  // downstream server (which adds a sink to the core) before the transport looks at the body. When the
  // body is not an `initialize` (or not JSON at all), the transport answers 400 and the session is
  // never stored, so nothing ever closes that server: its sink, server and transport stay in memory
  // for good, and every later broadcast walks them. v1: src/proxy/sdk/downstream/v1/endpoint.ts lines 48-61;
  // v2: src/proxy/sdk/downstream/v2/endpoint.ts lines 84-100. Fix: close the server when the transport did not
  // open a session (see the report), or build it only for an `initialize`.
  it("a refused POST without a session (not an initialize) leaves no sink behind", async () => {
    const { mcpUrl, sinks } = await start(sdk, false);
    const baseline = sinks.size;
    for (let i = 0; i < 20; i++) {
      const response = await fetch(mcpUrl, {
        method: "POST",
        headers: { ...JSON_HEADERS, "mcp-protocol-version": LEGACY },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list", params: {} }),
      });
      expect(response.status).toBe(400);
      await response.text();
      const garbage = await fetch(mcpUrl, { method: "POST", headers: JSON_HEADERS, body: "not json" });
      expect(garbage.status).toBeGreaterThanOrEqual(400);
      await garbage.text();
    }
    expect(sinks.size).toBe(baseline);
  });

  // FINDING (medium, memory growth): the proxy's own resources are served through one DirectHost per
  // scope (src/proxy/registry-resources.ts #host, line 41), attached to the registry and kept
  // until the proxy closes. An anonymous 2025 session's scope is its session id, so every session
  // that lists resources once leaves a DirectHost, a registry attachment and (pinned, because the
  // host stays "connected") its scope index behind after the session is gone. Fix: release the
  // scope's host when the last session of that scope closes (see the report).
  it("a closed anonymous 2025 session leaves no registry attachment behind", async () => {
    const { mcpUrl, attached } = await start(sdk, false);
    const baseline = attached.size;
    for (let i = 0; i < 10; i++) {
      const id = await openSession(mcpUrl);
      const listed = await onSession(mcpUrl, id, "resources/list");
      expect(listed.status).toBe(200);
      expect(listed.message?.result).toBeDefined();
      expect(await deleteSession(mcpUrl, id)).toBe(200);
    }
    expect(attached.size).toBe(baseline);
  });

  it("authenticated callers share their user's registry attachment (bounded by users, not requests)", async () => {
    const { mcpUrl, attached } = await start(sdk);
    const baseline = attached.size;
    for (let i = 0; i < 3; i++) {
      const client = await connectHttp(sdk === "v2" ? "v2-modern" : "v1", new URL(mcpUrl), ALICE);
      await client.listResources();
      await client.close();
    }
    expect(attached.size).toBe(baseline + 1);
  });

  it("close() finishes with 2025 sessions and their GET streams still open", async () => {
    const counted = await start(sdk);
    // (A session answers only the identity that opened it: Alice's stream carries her token.)
    const opened: Array<[string, string | undefined]> = [
      [await openSession(counted.mcpUrl, ALICE), ALICE],
      [await openSession(counted.mcpUrl, ALICE), ALICE],
    ];
    const streams = await Promise.all(
      opened.map(([id, token]) =>
        fetch(counted.mcpUrl, {
          headers: {
            accept: "text/event-stream",
            "mcp-session-id": id,
            "mcp-protocol-version": LEGACY,
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
        }),
      ),
    );
    for (const stream of streams) expect(stream.status).toBe(200);
    running.splice(running.indexOf(counted), 1);
    await counted.proxy.close({ timeoutMs: 60_000 });
    await removeDirs(...counted.dirs);
    for (const stream of streams) await stream.body?.cancel().catch(() => undefined);
  });
});

describe("proxy on SDK v2: 2026-07-28 requests", () => {
  it("stateless requests add no sink per request: one listen sink serves them all", async () => {
    const { mcpUrl, sinks } = await start("v2");
    const baseline = sinks.size;
    expect([...sinks].filter((sink) => sink.listener)).toHaveLength(1);
    const client = await connectHttp("v2-modern", new URL(mcpUrl), ALICE);
    for (let i = 0; i < 20; i++) {
      await client.listTools();
      await client.listResources();
      await client.callTool({ name: "echo", arguments: { text: String(i) } });
    }
    const anonymous = await connectHttp("v2-modern", new URL(mcpUrl));
    for (let i = 0; i < 5; i++) await anonymous.callTool({ name: "get_upload_url", arguments: {} });
    expect(sinks.size).toBe(baseline);
    await client.close();
    await anonymous.close();
  });

  it("close() finishes with subscriptions/listen streams open, and removes the listen sink", async () => {
    const counted = await start("v2");
    const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
    const listeners = await Promise.all(
      [ALICE, undefined].map(async (token) => {
        const client = new Client(
          { name: "listener", version: "1" },
          { versionNegotiation: { mode: { pin: "2026-07-28" } } },
        );
        await client.connect(
          new StreamableHTTPClientTransport(
            new URL(counted.mcpUrl),
            token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {},
          ),
        );
        const stream = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
        return { client, stream };
      }),
    );
    running.splice(running.indexOf(counted), 1);
    await counted.proxy.close({ timeoutMs: 60_000 });
    await removeDirs(...counted.dirs);
    expect([...counted.sinks].filter((sink) => sink.listener)).toHaveLength(0);
    for (const { client } of listeners) await client.close().catch(() => undefined);
  });
});
