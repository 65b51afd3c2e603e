/**
 * The pure helpers both upstream connections share (src/proxy/sdk/upstream/shared.ts), and that the SDK v2
 * connection loads without SDK v1.
 */
import { describe, expect, it } from "vitest";
import {
  listenFilter,
  SUBSCRIPTION_ID_KEY,
  streamBroke,
  upstreamErrors,
  withoutEnvelope,
  withoutSubscriptionId,
} from "../../../../src/proxy/sdk/upstream/shared.js";
import { RPC, RpcError, UpstreamUnavailableError } from "../../../../src/proxy/types.js";
import { readImportGraph, SRC_ROOT } from "../../../architecture/import-graph.js";

describe("withoutSubscriptionId", () => {
  it("drops the listen-stream id, and _meta when nothing else is in it", () => {
    expect(withoutSubscriptionId({ uri: "a://b", _meta: { [SUBSCRIPTION_ID_KEY]: "listen:0" } })).toEqual({
      uri: "a://b",
    });
    expect(withoutSubscriptionId({ _meta: { [SUBSCRIPTION_ID_KEY]: "listen:0", other: 1 } })).toEqual({
      _meta: { other: 1 },
    });
  });

  it("leaves everything else as it is", () => {
    const params = { uri: "a://b", _meta: { other: 1 } };
    expect(withoutSubscriptionId(params)).toBe(params);
    expect(withoutSubscriptionId(undefined)).toBeUndefined();
    expect(withoutSubscriptionId({ _meta: null })).toEqual({ _meta: null });
  });
});

describe("withoutEnvelope", () => {
  it("drops the upstream's reserved io.modelcontextprotocol/ keys from a result's _meta, keeps the rest", () => {
    const serverInfo = { name: "upstream", version: "1" };
    expect(
      withoutEnvelope({ content: [], _meta: { "io.modelcontextprotocol/serverInfo": serverInfo, mine: 1 } }),
    ).toEqual({ content: [], _meta: { mine: 1 } });
    expect(
      withoutEnvelope({ content: [], _meta: { "io.modelcontextprotocol/serverInfo": serverInfo } }),
    ).toEqual({
      content: [],
    });
    const plain = { content: [], _meta: { artifact_uri: "artifact://x" } };
    expect(withoutEnvelope(plain)).toBe(plain);
  });
});

describe("listenFilter", () => {
  it("asks for each list_changed the upstream advertises, and the subscribed URIs", () => {
    expect(
      listenFilter({ tools: { listChanged: true }, prompts: {}, resources: { listChanged: true } }, [
        "x://1",
      ]),
    ).toEqual({ toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ["x://1"] });
    expect(listenFilter({ prompts: { listChanged: true } }, [])).toEqual({ promptsListChanged: true });
  });

  it("is undefined when there is nothing to hear", () => {
    expect(listenFilter({ tools: {}, resources: { subscribe: true } }, [])).toBeUndefined();
    expect(listenFilter(undefined, new Set())).toBeUndefined();
  });
});

describe("streamBroke and the shared errors", () => {
  it("recognises a broken Streamable HTTP stream", () => {
    expect(streamBroke(new Error("SSE stream disconnected: TypeError: terminated"))).toBe(true);
    expect(streamBroke(new Error("Failed to reconnect SSE stream: fetch failed"))).toBe(true);
    expect(streamBroke(new Error("Error POSTing to endpoint: 404"))).toBe(false);
  });

  it("words and types the errors the same for both connections", () => {
    const timedOut = upstreamErrors.timedOut("up", new Error("x"));
    expect(timedOut).toBeInstanceOf(UpstreamUnavailableError);
    expect(timedOut).toMatchObject({ upstream: "up", message: 'upstream "up" did not answer in time' });
    expect(
      upstreamErrors.cannotConnect("up", new Error("refused", { cause: new Error("ECONNREFUSED") })).message,
    ).toBe('cannot connect to upstream "up": refused (ECONNREFUSED)');
    expect(upstreamErrors.cancelled()).toEqual(new RpcError(RPC.REQUEST_TIMEOUT, "Request was cancelled"));
    expect(upstreamErrors.malformed("up")).toMatchObject({ code: RPC.INTERNAL_ERROR });
  });
});

describe("UpstreamConnectionV2 without SDK v1", () => {
  it("reaches, at run time, only the SDK v2 client packages", () => {
    const graph = readImportGraph(SRC_ROOT);
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const edge of graph.get(file) ?? []) {
        if (edge.typeOnly) continue;
        if (edge.target) visit(edge.target);
        else if (edge.specifier.startsWith("@modelcontextprotocol/")) packages.add(edge.specifier);
      }
    };
    visit("proxy/sdk/upstream/upstream-connection-v2.ts");
    expect(seen.has("proxy/sdk/upstream/shared.ts")).toBe(true);
    expect([...packages].sort()).toEqual([
      "@modelcontextprotocol/client",
      "@modelcontextprotocol/client/stdio",
    ]);
  });
});
