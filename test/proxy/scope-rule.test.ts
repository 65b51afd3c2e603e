/**
 * One scope rule for the whole proxy: the core (tools, `get_upload_url`, artifacts) and the
 * registry side (the proxy's own `resources/*`) derive a caller's scope with the same function from
 * the same request context, so what a tool stored in a scope is what that scope lists and reads, and
 * a caller the rule refuses is refused on both sides.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ProxyCore } from "../../src/proxy/proxy-core.js";
import { RegistryResources } from "../../src/proxy/registry-resources.js";
import type { RequestContext } from "../../src/proxy/types.js";
import { ResourceRegistry } from "../../src/registry/resource-registry.js";
import { defaultScope, type ScopeSource } from "../../src/scope/scope.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { codeOf } from "../support/helpers.js";

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
