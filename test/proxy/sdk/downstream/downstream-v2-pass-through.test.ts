/**
 * The v2 endpoint's pass-through fast path (issue 24): a plain 2026-07-28 `tools/call` of a tool no
 * adapter handles is answered without a per-request SDK server, with the same answer the SDK gives.
 * Two endpoints over one core, the fast one (with `serverInfo`) and the SDK way (without), get the
 * same requests; each upstream outcome and each kind of request must be answered alike, and the
 * per-request servers the fast one makes show which way a call went.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../../../src/proxy/bearer-tokens.js";
import { type ProxyHttpHost, serveProxyHttp } from "../../../../src/proxy/http-host.js";
import { ProxyCore } from "../../../../src/proxy/proxy-core.js";
import { v2Endpoint } from "../../../../src/proxy/sdk/downstream/v2/endpoint.js";
import { createProxyServerV2 } from "../../../../src/proxy/sdk/downstream/v2/server.js";
import type { JsonObject } from "../../../../src/proxy/types.js";
import { waitUntil } from "../../../support/helpers.js";
import { fakeUpstream, sseMessages, text } from "./pass-through-support.js";

const TOKEN = "alice-token-0123456789";
const INFO = { name: "pass-through-test", version: "1.2.3" };
const { core, calls, aborted, scopes } = fakeUpstream();
let fast: ProxyHttpHost;
let slow: ProxyHttpHost;
/** The per-request servers the fast endpoint made. */
let made = 0;

beforeAll(async () => {
  const authenticate = bearerTokens(parseBearerTokens(`alice:${TOKEN}`, "test"));
  fast = await serveProxyHttp({
    authenticate,
    endpoint: v2Endpoint(
      core,
      (serving, settled) => {
        if (serving === "request") made++;
        return createProxyServerV2(core, INFO, serving, settled);
      },
      undefined,
      {},
      INFO,
    ),
  });
  slow = await serveProxyHttp({
    authenticate,
    endpoint: v2Endpoint(core, (serving, settled) => createProxyServerV2(core, INFO, serving, settled)),
  });
});

afterAll(async () => {
  await fast?.close();
  await slow?.close();
});

interface Answer {
  status: number;
  type: string | null;
  body: unknown;
}

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "test", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A `tools/call` POST as the SDK v2 client sends it; `edit` changes the body or headers. */
async function post(
  url: string,
  name: string,
  edit: { body?: (body: JsonObject) => void; headers?: Record<string, string | null> } = {},
  signal?: AbortSignal,
): Promise<Answer> {
  const body: JsonObject = {
    method: "tools/call",
    params: { name, arguments: { x: 1 }, _meta: { ...ENVELOPE } },
    jsonrpc: "2.0",
    id: 7,
  };
  edit.body?.(body);
  const headers = new Headers({
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    authorization: `Bearer ${TOKEN}`,
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": name,
  });
  for (const [key, value] of Object.entries(edit.headers ?? {})) {
    if (value === null) headers.delete(key);
    else headers.set(key, value);
  }
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal });
  const raw = await response.text();
  const type = response.headers.get("content-type");
  let parsed: unknown = raw;
  if (type?.startsWith("application/json")) parsed = JSON.parse(raw);
  else if (type?.startsWith("text/event-stream")) parsed = sseMessages(raw);
  return { status: response.status, type, body: parsed };
}

/** The same request to both endpoints: the answers, and how many request servers the fast one made. */
async function both(name: string, edit?: Parameters<typeof post>[2]) {
  const before = made;
  const fastAnswer = await post(fast.mcpUrl, name, edit);
  const servers = made - before;
  const slowAnswer = await post(slow.mcpUrl, name, edit);
  return { fastAnswer, slowAnswer, servers };
}

describe("ProxyCore.isPassThrough", () => {
  it("names only listed upstream tools without adapters, never the proxy's own", async () => {
    expect(await core.isPassThrough("plain")).toBe(true);
    expect(await core.isPassThrough("file_tool")).toBe(false);
    expect(await core.isPassThrough("no_such_tool")).toBe(false);
    const own = new ProxyCore({
      upstreams: [],
      localTools: [{ definition: { name: "get_upload_url" }, call: async () => ({ content: [] }) }],
    });
    expect(await own.isPassThrough("get_upload_url")).toBe(false);
  });
});

describe("the v2 endpoint's pass-through fast path", () => {
  it("answers a plain call of a pass-through tool without a per-request server, as the SDK does", async () => {
    for (const name of ["plain", "failed", "unavailable"]) {
      const { fastAnswer, slowAnswer, servers } = await both(name);
      expect(servers, name).toBe(0);
      expect(fastAnswer, name).toEqual(slowAnswer);
      expect(fastAnswer.type).toBe("application/json");
    }
    const { fastAnswer } = await both("plain");
    expect(fastAnswer.body).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {
        content: [text("hi")],
        structuredContent: { a: 1 },
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/serverInfo": INFO },
      },
    });
    // The upstream got the same params both ways (the envelope lifted off).
    expect(calls.at(-1)).toEqual({ params: { name: "plain", arguments: { x: 1 } }, progress: false });
    expect(calls.at(-2)).toEqual(calls.at(-1));
    const { fastAnswer: withStringId } = await both("plain", {
      body: (body) => {
        body.id = "call-1";
      },
    });
    expect((withStringId.body as JsonObject).id).toBe("call-1");
  });

  it("leaves any other outcome to the SDK's server, which answers it as it would have", async () => {
    for (const name of ["image", "meta", "malformed", "rpc_error"]) {
      const before = calls.length;
      const { fastAnswer, slowAnswer, servers } = await both(name);
      expect(servers, name).toBe(1);
      expect(fastAnswer, name).toEqual(slowAnswer);
      // run once per request: the SDK answered with the outcome, it did not call again
      expect(calls.length - before, name).toBe(2);
    }
    const { fastAnswer } = await both("rpc_error");
    // the SDK's own mapping on this revision (-32002 is answered as -32602)
    expect((fastAnswer.body as { error: { code: number } }).error.code).toBe(-32602);
    const { fastAnswer: malformed } = await both("malformed");
    expect((malformed.body as { error: { code: number } }).error.code).toBe(-32602);
  });

  it("sends a tool that handles files, progress, other shapes and unknown tools the SDK way", async () => {
    const { fastAnswer, slowAnswer, servers } = await both("file_tool");
    expect(servers).toBe(1);
    expect(fastAnswer).toEqual(slowAnswer);
    expect(scopes).toEqual(["alice", "alice"]);

    const progress = await both("progress", {
      body: (body) => {
        ((body.params as JsonObject)._meta as JsonObject).progressToken = "p1";
      },
    });
    expect(progress.servers).toBe(1);
    expect(progress.fastAnswer).toEqual(progress.slowAnswer);
    expect(progress.fastAnswer.type).toBe("text/event-stream");
    expect(progress.fastAnswer.body).toContainEqual({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progress: 1, total: 1, progressToken: "p1" },
    });
    expect(calls.at(-1)?.progress).toBe(true);

    const variants: Array<[string, Parameters<typeof post>[2]]> = [
      ["extra param", { body: (body) => Object.assign(body.params as JsonObject, { task: {} }) }],
      [
        "arguments not an object",
        { body: (body) => Object.assign(body.params as JsonObject, { arguments: [1] }) },
      ],
      ["no envelope", { body: (body) => delete (body.params as JsonObject)._meta }],
      [
        "bad capabilities",
        {
          body: (body) => {
            ((body.params as JsonObject)._meta as JsonObject)["io.modelcontextprotocol/clientCapabilities"] =
              5;
          },
        },
      ],
      ["name header differs", { headers: { "mcp-name": "image" } }],
      ["no name header", { headers: { "mcp-name": null } }],
      ["older header", { headers: { "mcp-protocol-version": "2025-06-18" } }],
      ["session id", { headers: { "mcp-session-id": "abc" } }],
    ];
    for (const [label, edit] of variants) {
      const answer = await both("plain", edit);
      expect(answer.servers, label).toBeLessThanOrEqual(1);
      expect(answer.fastAnswer, label).toEqual(answer.slowAnswer);
    }
    const unknown = await both("no_such_tool", {});
    expect(unknown.fastAnswer).toEqual(unknown.slowAnswer);
    expect((unknown.fastAnswer.body as { error: { code: number } }).error.code).toBe(-32602);
  });

  it("still refuses a wrong token (401) before anything runs; an anonymous caller's file tool is refused as before", async () => {
    const before = calls.length;
    const refused = await post(fast.mcpUrl, "plain", {
      headers: { authorization: "Bearer wrong-token-0123456789" },
    });
    expect(refused.status).toBe(401);
    expect(calls.length).toBe(before);
    const anonymous = { headers: { authorization: null } };
    const plain = await both("plain", anonymous);
    expect(plain.servers).toBe(0);
    expect(plain.fastAnswer).toEqual(plain.slowAnswer);
    const fileTool = await both("file_tool", anonymous);
    expect(fileTool.servers).toBe(1);
    expect(fileTool.fastAnswer).toEqual(fileTool.slowAnswer);
    expect(JSON.stringify(fileTool.fastAnswer.body)).toContain("FORBIDDEN");
    expect(calls.length).toBe(before + 2);
  });

  it("cancels the upstream call when the client goes away", async () => {
    const controller = new AbortController();
    const pending = post(fast.mcpUrl, "hang", {}, controller.signal).catch(() => undefined);
    await waitUntil(() => calls.at(-1)?.params?.name === "hang");
    controller.abort();
    await pending;
    await waitUntil(() => aborted.includes("hang"));
    await waitUntil(() => core.inFlight === 0);
  });
});
