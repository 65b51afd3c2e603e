/**
 * One scope rule for the whole proxy: the core (tools, `get_upload_url`, artifacts) and the
 * registry side (the proxy's own `resources/*`) derive a caller's scope with the same function from
 * the same request context, so what a tool stored in a scope is what that scope lists and reads, and
 * a caller the rule refuses is refused on both sides. First on the pieces, then end to end: two
 * users over real HTTP on 127.0.0.1, an in-process (stdio-like) session, and an anonymous
 * 2026-07-28 caller, against `createFileProxy` in front of the fixture upstream.
 */
import { InMemoryTransport, Client as V2Client } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/file-proxy.js";
import { ProxyCore } from "../../src/proxy/proxy-core.js";
import { RegistryResources } from "../../src/proxy/registry-resources.js";
import type { RequestContext } from "../../src/proxy/types.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { DEFAULT_SCOPE, defaultScope, type ScopeSource } from "../../src/scope/scope.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { type AnyClient, connectHttp, rpcError, type ToolResult } from "../mcp/v2/harness.js";
import { codeOf } from "../support/helpers.js";
import { FILE_TOOLS, fixtureCommand, removeDirs, tempDir, textOf } from "./support.js";

function proxyOf() {
  const registry = new ResourceRegistry({ store: memoryStore(), scope: defaultScope });
  const local = new RegistryResources(registry, () => {});
  const core = new ProxyCore({ upstreams: [], localResources: local, scope: defaultScope });
  return { registry, local, core };
}

const ctx = (extra: ScopeSource): RequestContext => ({ extra, signal: new AbortController().signal });
/** The `FileBridgeError` code a JSON-RPC error carries in `data.code` (what the registry side throws). */
async function rpcCodeOf(run: Promise<unknown>): Promise<string> {
  try {
    await run;
    return "OK";
  } catch (error) {
    const code = (error as { data?: { code?: unknown } }).data?.code;
    return typeof code === "string" ? code : "NO_CODE";
  }
}
const urisOf = (page: Record<string, unknown>) =>
  ((page.resources as { uri: string }[] | undefined) ?? []).map((r) => r.uri);

let opened: ReturnType<typeof proxyOf>[] = [];
const open = () => {
  const proxy = proxyOf();
  opened.push(proxy);
  return proxy;
};
afterEach(async () => {
  for (const { local, core, registry } of opened) {
    await local.close();
    await core.close();
    await registry.close();
  }
  opened = [];
});

describe("the proxy's scope rule", () => {
  it("refuses an HTTP caller with neither session nor identity on the core and on the registry side", async () => {
    const { registry, local, core } = open();
    const file = await registry.add(Buffer.from("x"), { scope: "s-1", name: "a.txt" });
    const uri = registry.uriFor(file);
    const anonymous: ScopeSource = { transport: "http" };
    expect(await codeOf(() => core.scopeOf(ctx(anonymous)))).toBe("FORBIDDEN");
    expect(await codeOf(core.readResource({ uri }, ctx(anonymous)))).toBe("FORBIDDEN");
    // The registry side derives the scope itself from the caller's context: whatever scope it is
    // asked under, it refuses the same caller (it used to fall back to the constant "default").
    expect(await rpcCodeOf(local.read("s-1", uri, anonymous))).toBe("FORBIDDEN");
    expect(await rpcCodeOf(local.list("default", undefined, anonymous))).toBe("FORBIDDEN");
    // A listing simply leaves the proxy's own files out for such a caller.
    expect(urisOf(await core.listResources({}, ctx(anonymous)))).toEqual([]);
  });

  it("lists and reads a 2025 session's files under the scope its tools stored them in", async () => {
    const { registry, core } = open();
    const session: ScopeSource = { sessionId: "session-1", requestInfo: { headers: {} } };
    const other: ScopeSource = { sessionId: "session-2", requestInfo: { headers: {} } };
    // What a tool adapter does: store under the core's scope of the call.
    const stored = await registry.add(Buffer.from("report"), {
      scope: core.scopeOf(ctx(session)),
      name: "r.txt",
    });
    const uri = registry.uriFor(stored);
    expect(urisOf(await core.listResources({}, ctx(session)))).toEqual([uri]);
    const read = await core.readResource({ uri }, ctx(session));
    expect((read.contents as { text?: string }[])[0]?.text).toBe("report");
    expect(urisOf(await core.listResources({}, ctx(other)))).toEqual([]);
    expect(await codeOf(core.readResource({ uri }, ctx(other)))).not.toBe("OK");
  });

  it("scopes an authenticated user by subject across sessions, on both sides", async () => {
    const { registry, core } = open();
    const alice = (sessionId: string): ScopeSource => ({
      sessionId,
      transport: "http",
      authInfo: { clientId: "app", extra: { sub: "alice" } },
    });
    expect(core.scopeOf(ctx(alice("s-1")))).toBe("alice");
    const stored = await registry.add(Buffer.from("a"), {
      scope: core.scopeOf(ctx(alice("s-1"))),
      name: "a.txt",
    });
    // Another session of the same user sees it; the registry side did not scope by session id.
    expect(urisOf(await core.listResources({}, ctx(alice("s-2"))))).toEqual([registry.uriFor(stored)]);
  });
});

describe("createFileProxy: one scope rule end to end (SDK v2 downstream)", () => {
  const ALICE = "alice-token-0123456789";
  const BOB = "bob-token-0123456789ab";
  let out: string;
  let handoff: string;
  let proxy: FileProxy;
  let mcpUrl: URL;
  const clients: AnyClient[] = [];

  beforeAll(async () => {
    out = await tempDir("proxy-scope-rule-out-");
    handoff = await tempDir("proxy-scope-rule-handoff-");
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
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await proxy?.close({ timeoutMs: 1000 });
    await removeDirs(out, handoff);
  });

  async function overHttp(kind: "v2-modern" | "v2-legacy", token?: string): Promise<AnyClient> {
    const client = await connectHttp(kind, mcpUrl, token);
    clients.push(client);
    return client;
  }

  /** An in-process session on the proxy's own server: one client, no session id, no HTTP. */
  async function inProcess(): Promise<AnyClient> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = proxy.createServer() as unknown as { connect(t: unknown): Promise<void> };
    await server.connect(serverSide);
    const client = new V2Client({ name: "stdio-like", version: "1.0.0" });
    await client.connect(clientSide);
    clients.push(client as unknown as AnyClient);
    return client as unknown as AnyClient;
  }

  async function writeArtifact(client: AnyClient, name: string): Promise<string> {
    const result = (await client.callTool({
      name: "write_file",
      arguments: { name, text: `text of ${name}` },
    })) as ToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result._meta as { artifact_uri: string }).artifact_uri;
  }

  const ownUris = async (client: AnyClient) =>
    (await client.listResources()).resources.map((r) => r.uri).filter((uri) => !uri.startsWith("fixture:"));
  const namesIn = async (scope: string) => (await proxy.store.list(scope)).files.map((f) => f.name).sort();

  it("scopes two users over HTTP by their subject: stored, listed and read under the same scope", async () => {
    const alice = await overHttp("v2-modern", ALICE);
    const bob = await overHttp("v2-legacy", BOB);
    const a = await writeArtifact(alice, "alice.txt");
    const b = await writeArtifact(bob, "bob.txt");
    expect(await namesIn("alice")).toEqual(["alice.txt"]);
    expect(await namesIn("bob")).toEqual(["bob.txt"]);
    expect(await ownUris(alice)).toEqual([a]);
    expect(await ownUris(bob)).toEqual([b]);
    // Alice on a 2025 session of her own: the subject is the scope, not the session id.
    const aliceSession = await overHttp("v2-legacy", ALICE);
    expect(await ownUris(aliceSession)).toEqual([a]);
    const read = (await aliceSession.readResource({ uri: a })) as { contents: Array<{ text?: string }> };
    expect(read.contents[0]?.text).toBe("text of alice.txt");
    const stolen = await rpcError(bob.readResource({ uri: a }));
    expect(stolen.code).toBe(-32602);
    expect(JSON.stringify(stolen)).not.toContain("text of alice.txt");
  });

  it("gives an in-process (stdio-like) session the one constant scope, which no HTTP caller sees", async () => {
    const local = await inProcess();
    const uri = await writeArtifact(local, "local.txt");
    expect(await namesIn(DEFAULT_SCOPE)).toEqual(["local.txt"]);
    expect(await ownUris(local)).toEqual([uri]);
    const read = (await local.readResource({ uri })) as { contents: Array<{ text?: string }> };
    expect(read.contents[0]?.text).toBe("text of local.txt");
    const alice = await overHttp("v2-modern", ALICE);
    expect(await ownUris(alice)).not.toContain(uri);
    expect((await rpcError(alice.readResource({ uri }))).code).toBe(-32602);
  });

  it("fails closed over HTTP without identity: no file tool, no own resource, nothing stored", async () => {
    const alice = await overHttp("v2-modern", ALICE);
    const a = await writeArtifact(alice, "alice-2.txt");
    const before = await namesIn(DEFAULT_SCOPE);
    const anonymous = await overHttp("v2-modern");
    for (const [name, args] of [
      ["get_upload_url", { filename: "x.txt" }],
      ["write_file", { name: "anon.txt", text: "anonymous" }],
    ] as const) {
      const result = (await anonymous.callTool({ name, arguments: args })) as ToolResult;
      expect(result.isError, name).toBe(true);
      expect(textOf(result)).toMatch(/^Error FORBIDDEN/);
    }
    const read = await rpcError(anonymous.readResource({ uri: a }));
    expect((read.data as { code?: string } | undefined)?.code).toBe("FORBIDDEN");
    expect(await ownUris(anonymous)).toEqual([]);
    expect(await namesIn(DEFAULT_SCOPE)).toEqual(before);
  });
});
