/**
 * Which way a tool call goes after the upstream's listing changes (issue 43): the pass-through path
 * reads the built routes without an `await`, so a `tools/list_changed` (or a listing that failed)
 * must reach it exactly as it reaches the asynchronous route lookup. A tool that gains a file
 * parameter is no longer a pass-through and its adapter runs; a tool that is gone is gone.
 */
import { describe, expect, it } from "vitest";
import { ProxyCore } from "../../src/proxy/proxy-core.js";
import { type JsonObject, type RequestContext, RpcError, type UpstreamPort } from "../../src/proxy/types.js";

const text = (value: string) => ({ type: "text", text: value });

/** A core over an upstream whose listing the test rewrites; a tool marked `file` gets an adapter. */
function changingUpstream() {
  const listing = new Map<string, JsonObject>([
    ["t", { name: "t", inputSchema: { type: "object" } }],
    ["gone_soon", { name: "gone_soon", inputSchema: { type: "object" } }],
  ]);
  let listingFails = false;
  const called: string[] = [];
  const adapted: string[] = [];
  const port: UpstreamPort = {
    name: "up",
    connected: true,
    capabilities: { tools: { listChanged: true } },
    async connect() {},
    async request(method, params) {
      if (method === "tools/list") {
        if (listingFails) throw new Error("listing failed");
        return { tools: [...listing.values()] };
      }
      const name = String(params?.name);
      if (!listing.has(name)) throw new RpcError(-32602, `Tool ${name} not found`);
      called.push(name);
      return { content: [text(`${name} ran`)] };
    },
    async notify() {},
    async close() {},
  };
  const core = new ProxyCore({
    upstreams: [
      {
        port,
        adaptersFor: (tool) =>
          tool.file === true
            ? [
                {
                  before: async (args) => {
                    adapted.push(String(tool.name));
                    return { args };
                  },
                },
              ]
            : [],
      },
    ],
  });
  const changed = () => core.onUpstreamNotification(port, "notifications/tools/list_changed", undefined);
  return {
    core,
    listing,
    called,
    adapted,
    changed,
    failListing: (fails: boolean) => {
      listingFails = fails;
    },
  };
}

const ctx: RequestContext = {
  extra: { sessionId: "session-1" },
  signal: new AbortController().signal,
};

describe("routes after the upstream's listing changes", () => {
  it("a pass-through tool that gains a file parameter is adapted from the next call on", async () => {
    const { core, listing, called, adapted, changed } = changingUpstream();
    expect(await core.isPassThrough("t")).toBe(true);
    await core.callTool({ name: "t", arguments: {} }, ctx);
    expect(adapted).toEqual([]);

    listing.set("t", { name: "t", inputSchema: { type: "object" }, file: true });
    changed();
    expect(core.passThroughNow("t")).not.toBe(true);
    expect(await core.isPassThrough("t")).toBe(false);
    expect(core.passThroughNow("t")).toBe(false);
    await core.callTool({ name: "t", arguments: {} }, ctx);
    expect(adapted).toEqual(["t"]);
    expect(called).toEqual(["t", "t"]);
  });

  it("a tool removed from the listing is no longer a pass-through; its call gets the upstream's error", async () => {
    const { core, listing, changed } = changingUpstream();
    expect(await core.isPassThrough("gone_soon")).toBe(true);
    listing.delete("gone_soon");
    changed();
    expect(core.passThroughNow("gone_soon")).not.toBe(true);
    expect(await core.isPassThrough("gone_soon")).toBe(false);
    const error = await core.callTool({ name: "gone_soon", arguments: {} }, ctx).catch((e: unknown) => e);
    expect((error as RpcError).code).toBe(-32602);
  });

  it("a listing that failed is asked again, and no stale route answers meanwhile", async () => {
    const { core, listing, adapted, changed, failListing } = changingUpstream();
    expect(await core.isPassThrough("t")).toBe(true);
    listing.set("t", { name: "t", inputSchema: { type: "object" }, file: true });
    failListing(true);
    changed();
    // the upstream's listing failed: no route is known, and none is remembered from before
    expect(await core.isPassThrough("t")).toBe(false);
    expect(core.passThroughNow("t")).toBeUndefined();
    failListing(false);
    expect(await core.isPassThrough("t")).toBe(false);
    await core.callTool({ name: "t", arguments: {} }, ctx);
    expect(adapted).toEqual(["t"]);
  });
});

describe("a listing that ends after a newer one", () => {
  it("does not displace the newer listing: the current routes are still read without a promise", async () => {
    // The first listing is held until after `tools/list_changed` and a second, faster listing: when
    // it ends, the second is still the current one and passThroughNow answers from it.
    let release: (() => void) | undefined;
    let lists = 0;
    const tool = { name: "t", inputSchema: { type: "object" } };
    const port: UpstreamPort = {
      name: "up",
      connected: true,
      capabilities: { tools: { listChanged: true } },
      async connect() {},
      async request(method) {
        if (method !== "tools/list") return { content: [text("ran")] };
        lists++;
        if (lists === 1) await new Promise<void>((resolve) => (release = resolve));
        return { tools: [tool] };
      },
      async notify() {},
      async close() {},
    };
    const core = new ProxyCore({ upstreams: [{ port }] });
    const first = core.isPassThrough("t");
    await new Promise((resolve) => setImmediate(resolve));
    expect(release).toBeDefined();
    core.onUpstreamNotification(port, "notifications/tools/list_changed", undefined);
    expect(await core.isPassThrough("t")).toBe(true);
    expect(core.passThroughNow("t")).toBe(true);
    release?.();
    expect(await first).toBe(true);
    expect(lists).toBe(2);
    // the newer listing is current and complete: known without a promise, and no third listing
    expect(core.passThroughNow("t")).toBe(true);
    expect(await core.isPassThrough("t")).toBe(true);
    expect(lists).toBe(2);
  });
});
