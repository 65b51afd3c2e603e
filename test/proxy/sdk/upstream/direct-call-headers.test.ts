/**
 * The headers of a direct SDK v2 `tools/call`, kept per connection (issue 43, the proxy hop): every
 * call must carry exactly what the SDK v2 transport itself would send at that moment (its
 * `_commonHeaders` and body-derived `Mcp-*` headers on a real transport), also after the session, the
 * protocol version, the configured headers or the auth token change, while the transport's own
 * work runs once per connection and tool.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import {
  directCallHeaders,
  HEADER_MEMO_MAX,
  type HeaderSource,
  keptHeaders,
} from "../../../../src/proxy/sdk/upstream/direct-call-headers.js";

/** SDK v1's transport members the v1 direct call's headers come from. */
interface V1Internals {
  _commonHeaders(): Promise<Headers>;
  _sessionId?: string;
  _protocolVersion?: string;
  _requestInit?: { headers?: unknown };
  commonCalls: number;
}

const ENVELOPE = Object.freeze({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "proxy", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
});

function transport(headers: Record<string, string> = { "x-team": "blue" }) {
  const made = new StreamableHTTPClientTransport(new URL("http://127.0.0.1:9/mcp"), {
    requestInit: { headers },
  });
  const source = made as unknown as HeaderSource & { commonCalls: number };
  const common = source._commonHeaders.bind(made);
  source.commonCalls = 0;
  source._commonHeaders = () => {
    source.commonCalls++;
    return common();
  };
  return source;
}

function call(name: string, id = 1, meta: unknown = ENVELOPE) {
  return { method: "tools/call", jsonrpc: "2.0", id, params: { name, arguments: { id }, _meta: meta } };
}

/** What the SDK's transport sends for `message` right now, worked out by the SDK alone. */
async function sdkHeaders(source: HeaderSource, message: unknown): Promise<Record<string, string>> {
  const sdk = StreamableHTTPClientTransport.prototype as unknown as HeaderSource;
  const headers = await sdk._commonHeaders.call(source);
  sdk._applyBodyDerivedHeaders.call(source, headers, message);
  const out: Record<string, string> = {};
  headers.forEach((value: string, name: string) => {
    out[name] = value;
  });
  return { ...out, "content-type": "application/json", accept: "application/json, text/event-stream" };
}

describe("directCallHeaders", () => {
  it("sends what the SDK's transport sends, working it out once per tool", async () => {
    const source = transport();
    for (let round = 0; round < 3; round++) {
      for (const name of ["echo", "résumé ✓", "other"]) {
        const message = call(name, round);
        const sent = await directCallHeaders(source, message, ENVELOPE);
        expect(sent).toEqual(await sdkHeaders(source, message));
        sent["content-length"] = "12"; // the caller adds to what it gets
      }
    }
    expect((await directCallHeaders(source, call("echo"), ENVELOPE))["content-length"]).toBeUndefined();
    expect((await directCallHeaders(source, call("résumé ✓"), ENVELOPE))["mcp-name"]).toMatch(/^=\?base64\?/);
    expect(source.commonCalls).toBe(3);
  });

  it("follows the session id, the protocol version and the configured headers", async () => {
    const source = transport();
    await directCallHeaders(source, call("echo"), ENVELOPE);
    source._sessionId = "session-2";
    expect(await directCallHeaders(source, call("echo"), ENVELOPE)).toEqual(
      await sdkHeaders(source, call("echo")),
    );
    expect((await directCallHeaders(source, call("echo"), ENVELOPE))["mcp-session-id"]).toBe("session-2");
    source._protocolVersion = "2025-11-25";
    expect(await directCallHeaders(source, call("echo"), ENVELOPE)).toEqual(
      await sdkHeaders(source, call("echo")),
    );
    (source._requestInit as { headers: unknown }).headers = { "x-team": "red" };
    const sent = await directCallHeaders(source, call("echo"), ENVELOPE);
    expect(sent["x-team"]).toBe("red");
    expect(sent).toEqual(await sdkHeaders(source, call("echo")));
  });

  it("asks an auth provider for its token on every call", async () => {
    const source = transport();
    let issued = 0;
    source._authProvider = { token: async () => `token-${++issued}` };
    for (let i = 1; i <= 3; i++) {
      const sent = await directCallHeaders(source, call("echo"), ENVELOPE);
      expect(sent.authorization).toBe(`Bearer token-${i}`);
    }
  });

  it("keeps nothing for a _meta other than the client's envelope, and stays bounded", async () => {
    const source = transport();
    const meta = { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-11-25" };
    for (let i = 0; i < 3; i++) {
      const sent = await directCallHeaders(source, call("echo", i, meta), ENVELOPE);
      expect(sent).toEqual(await sdkHeaders(source, call("echo", i, meta)));
    }
    expect(source.commonCalls).toBe(3);
    const many = transport();
    for (let i = 0; i < HEADER_MEMO_MAX + 20; i++) {
      const message = call(`tool_${i}`);
      expect((await directCallHeaders(many, message, ENVELOPE))["mcp-name"]).toBe(`tool_${i}`);
    }
    expect((await directCallHeaders(many, call("tool_0"), ENVELOPE))["mcp-name"]).toBe("tool_0");
  });
});

describe("keptHeaders on SDK v1's transport (the v1 direct call's headers)", () => {
  /** What the v1 direct call sends, through the memo as `direct-call-v1.ts` asks for it. */
  function v1Headers(source: V1Internals): Promise<Record<string, string>> {
    return keptHeaders(
      source,
      source._requestInit?.headers,
      `${source._sessionId ?? ""}\n${source._protocolVersion ?? ""}`,
      async () => {
        source.commonCalls++;
        const out: Record<string, string> = {};
        (await source._commonHeaders()).forEach((value: string, name: string) => {
          out[name] = value;
        });
        return out;
      },
    );
  }

  it("works the headers out once while the session, the version and the configured headers stay", async () => {
    const made = new V1Transport(new URL("http://127.0.0.1:9/mcp"), {
      requestInit: { headers: { "x-team": "a" } },
    });
    const source = Object.assign(made as unknown as V1Internals, { commonCalls: 0 });
    const sdkNow = async () => {
      const out: Record<string, string> = {};
      (await source._commonHeaders()).forEach((value: string, name: string) => {
        out[name] = value;
      });
      return out;
    };
    for (let i = 0; i < 3; i++) expect(await v1Headers(source)).toEqual(await sdkNow());
    expect(source.commonCalls).toBe(1);
    source._sessionId = "s-1";
    expect(await v1Headers(source)).toEqual(await sdkNow());
    source._protocolVersion = "2025-06-18";
    expect(await v1Headers(source)).toEqual(await sdkNow());
    (source._requestInit as { headers: unknown }).headers = { "x-team": "b" };
    const sent = await v1Headers(source);
    expect(sent).toEqual(await sdkNow());
    expect(sent["x-team"]).toBe("b");
    expect(source.commonCalls).toBe(4);
  });
});
