/** The pure helpers both upstream connections share (src/mcp/upstream/shared.ts). */
import { describe, expect, it } from "vitest";
import {
  listenFilter,
  SUBSCRIPTION_ID_KEY,
  streamBroke,
  upstreamErrors,
  withoutSubscriptionId,
} from "../../src/mcp/upstream/shared.js";
import { RPC, RpcError, UpstreamUnavailableError } from "../../src/proxy/types.js";

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
