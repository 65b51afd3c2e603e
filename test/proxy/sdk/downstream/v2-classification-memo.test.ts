/**
 * The v2 fast path's memo of the SDK's classification (issue 43, the proxy hop): an envelope the SDK
 * once routed to 2026-07-28 is not classified again, so the memo must never send a request the fast
 * way that the SDK would not: every body here gets the same verdict as the SDK's own
 * `classifyInboundRequest`, in either order, and the memo stays bounded.
 */
import type { IncomingMessage } from "node:http";
import { classifyInboundRequest } from "@modelcontextprotocol/server";
import { describe, expect, it, vi } from "vitest";
import {
  MODERN_ENVELOPES_MAX,
  modernEnvelopeCount,
  passThroughCall,
} from "../../../../src/proxy/sdk/downstream/v2/pass-through.js";
import type { JsonObject } from "../../../../src/proxy/types.js";

// Counts the SDK's classifications (the memo's whole point is to skip them), calling the real one.
vi.mock("@modelcontextprotocol/server", async (importOriginal) => {
  const real = await importOriginal<typeof import("@modelcontextprotocol/server")>();
  return { ...real, classifyInboundRequest: vi.fn(real.classifyInboundRequest) };
});

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "memo-test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function body(meta: JsonObject, id: string | number = 1, args: JsonObject = { x: 1 }): JsonObject {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "plain", arguments: args, _meta: meta },
  };
}

function req(): IncomingMessage {
  return {
    method: "POST",
    headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "plain" },
  } as unknown as IncomingMessage;
}

/** What the SDK alone says: a 2026-07-28 request or not. */
function sdkVerdict(parsed: JsonObject): boolean {
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: "2026-07-28",
    mcpMethodHeader: "tools/call",
    mcpNameHeader: "plain",
    body: parsed,
  });
  return route.kind === "modern" && route.classification.revision === "2026-07-28";
}

/** Envelopes the fast path's own shape check lets through; the SDK refuses some of them. */
const ENVELOPES: JsonObject[] = [
  ENVELOPE,
  { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { sampling: {} } },
  // shapes inside a capability only the SDK's schema looks at
  { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: 5 } } },
  { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { roots: { listChanged: "yes" } } },
  { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: "", version: "1" } },
  { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": undefined as unknown as JsonObject },
];

describe("the v2 fast path's classification memo", () => {
  it("gives every envelope the SDK's own verdict, before and after the memo holds it", () => {
    for (let pass = 0; pass < 3; pass++) {
      for (const meta of pass === 1 ? [...ENVELOPES].reverse() : ENVELOPES) {
        for (const [id, args] of [
          [1, { x: 1 }],
          ["call-2", {}],
          [Number.MAX_SAFE_INTEGER, { nested: { deep: [1, "2", null] } }],
        ] as Array<[string | number, JsonObject]>) {
          const parsed = JSON.parse(JSON.stringify(body(meta, id, args))) as JsonObject;
          const fast = passThroughCall(req(), parsed) !== undefined;
          expect(fast, `${JSON.stringify(meta)} pass ${pass}`).toBe(sdkVerdict(parsed));
        }
      }
    }
    // at least one of them is refused by the SDK and still by the fast path
    expect(ENVELOPES.some((meta) => !sdkVerdict(JSON.parse(JSON.stringify(body(meta)))))).toBe(true);
  });

  it("keeps a bounded number of envelopes, and calls past the bound are still classified", () => {
    for (let i = 0; i < MODERN_ENVELOPES_MAX * 3; i++) {
      const meta = {
        ...ENVELOPE,
        "io.modelcontextprotocol/clientInfo": { name: "many", version: String(i) },
      };
      expect(passThroughCall(req(), body(meta))).toBeDefined();
    }
    expect(modernEnvelopeCount()).toBeLessThanOrEqual(MODERN_ENVELOPES_MAX);
    const refused = {
      ...ENVELOPE,
      "io.modelcontextprotocol/clientCapabilities": { roots: { listChanged: "yes" } },
    };
    expect(sdkVerdict(body(refused))).toBe(false);
    expect(passThroughCall(req(), body(refused))).toBeUndefined();
  });

  it("keeps memoizing new envelopes once full: the oldest make room, the bound holds", () => {
    const classify = vi.mocked(classifyInboundRequest);
    const fill = (tag: string) => {
      for (let i = 0; i < MODERN_ENVELOPES_MAX; i++) {
        const meta = { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: tag, version: String(i) } };
        expect(passThroughCall(req(), body(meta))).toBeDefined();
      }
    };
    // Envelopes of clients long gone (or sent on purpose) fill the memo...
    fill("gone");
    expect(modernEnvelopeCount()).toBe(MODERN_ENVELOPES_MAX);
    // ...then a new client calls a few times: the SDK classifies its envelope once, not every call.
    const fresh = { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: "fresh", version: "1" } };
    const before = classify.mock.calls.length;
    for (let call = 0; call < 5; call++) expect(passThroughCall(req(), body(fresh, call))).toBeDefined();
    expect(classify.mock.calls.length - before).toBe(1);
    expect(modernEnvelopeCount()).toBe(MODERN_ENVELOPES_MAX);
    // and the verdicts stay the SDK's after the turnover
    for (const meta of ENVELOPES) {
      const parsed = JSON.parse(JSON.stringify(body(meta))) as JsonObject;
      expect(passThroughCall(req(), parsed) !== undefined).toBe(sdkVerdict(parsed));
    }
  });
});
