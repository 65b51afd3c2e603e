/**
 * The v1 endpoint's pass-through fast path (issue 24): on an open 2025 session whose scope the
 * session's server already learned, a plain `tools/call` of a tool no adapter handles is answered
 * without the session's transport and server, with the same answer. Two endpoints over one core, the
 * fast one (given the core) and the SDK way (without), get the same requests; the session
 * transport's `handleRequest` calls show which way a call went.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type ProxyHttpHost, serveProxyHttp } from "../../../../src/proxy/http-host.js";
import { v1Endpoint } from "../../../../src/proxy/sdk/downstream/v1/endpoint.js";
import { createProxyServer } from "../../../../src/proxy/sdk/downstream/v1/server.js";
import type { JsonObject } from "../../../../src/proxy/types.js";
import { waitUntil } from "../../../support/helpers.js";
import { fakeUpstream, sseMessages, text } from "./pass-through-support.js";

const INFO = { name: "pass-through-test", version: "1.2.3" };
const VERSION = "2025-11-25";
const { core, calls, aborted, scopes } = fakeUpstream();

let fast: ProxyHttpHost;
let slow: ProxyHttpHost;

beforeAll(async () => {
  fast = await serveProxyHttp({
    endpoint: v1Endpoint((settledOf) => createProxyServer(core, INFO, settledOf), undefined, {}, core),
  });
  slow = await serveProxyHttp({
    endpoint: v1Endpoint((settledOf) => createProxyServer(core, INFO, settledOf)),
  });
});

afterAll(async () => {
  await fast?.close();
  await slow?.close();
});

afterEach(() => {
  vi.restoreAllMocks();
});

interface Answer {
  status: number;
  type: string | null;
  body: unknown;
}

let nextId = 1;

/** A JSON-RPC POST on a session, as the SDK v1 client sends it. */
async function post(
  url: string,
  session: string | undefined,
  message: JsonObject,
  headers: Record<string, string> = {},
): Promise<Answer & { session: string | null }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      ...(session ? { "mcp-session-id": session, "mcp-protocol-version": VERSION } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
  const raw = await response.text();
  const type = response.headers.get("content-type");
  const body = type?.startsWith("text/event-stream") ? sseMessages(raw) : raw;
  return { status: response.status, type, body, session: response.headers.get("mcp-session-id") };
}

/** Opens a session (initialize, initialized) and, unless `learn` is false, makes one routed request. */
async function open(url: string, learn = true): Promise<string> {
  const init = await post(url, undefined, {
    id: 0,
    method: "initialize",
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
  const session = init.session as string;
  await post(url, session, { method: "notifications/initialized" });
  if (learn) await post(url, session, { id: nextId++, method: "tools/list" });
  return session;
}

/** A `tools/call` on a session of each endpoint; how often the fast one's transport was used. */
async function both(name: string, extra: { params?: JsonObject; headers?: Record<string, string> } = {}) {
  const sessions = [await open(fast.mcpUrl), await open(slow.mcpUrl)];
  const id = nextId++;
  const message = { id, method: "tools/call", params: { name, arguments: { x: 1 }, ...extra.params } };
  const spy = vi.spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest");
  const fastAnswer = await post(fast.mcpUrl, sessions[0], message, extra.headers);
  const transportCalls = spy.mock.calls.length;
  spy.mockRestore();
  const slowAnswer = await post(slow.mcpUrl, sessions[1], message, extra.headers);
  const strip = (answer: Answer & { session: string | null }) => ({ ...answer, session: undefined });
  return { fastAnswer: strip(fastAnswer), slowAnswer: strip(slowAnswer), transportCalls, id };
}

describe("the v1 endpoint's pass-through fast path", () => {
  it("answers a plain call of a pass-through tool without the session's transport, as the SDK does", async () => {
    for (const name of ["plain", "failed", "unavailable"]) {
      const { fastAnswer, slowAnswer, transportCalls } = await both(name);
      expect(transportCalls, name).toBe(0);
      expect(fastAnswer, name).toEqual(slowAnswer);
      expect(fastAnswer.type).toBe("text/event-stream");
    }
    const { fastAnswer, id } = await both("plain");
    expect(fastAnswer.body).toEqual([
      { jsonrpc: "2.0", id, result: { content: [text("hi")], structuredContent: { a: 1 } } },
    ]);
    expect(calls.at(-1)).toEqual({ params: { name: "plain", arguments: { x: 1 } }, progress: false });
    expect(calls.at(-2)).toEqual(calls.at(-1));
  });

  it("goes the SDK way until the session's server learned its scope", async () => {
    const session = await open(fast.mcpUrl, false);
    const spy = vi.spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest");
    await post(fast.mcpUrl, session, { id: nextId++, method: "tools/call", params: { name: "plain" } });
    expect(spy).toHaveBeenCalledTimes(1);
    await post(fast.mcpUrl, session, { id: nextId++, method: "tools/call", params: { name: "plain" } });
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it("leaves any other outcome to the session's server, which answers it as it would have", async () => {
    for (const name of ["image", "meta", "malformed", "rpc_error"]) {
      const before = calls.length;
      const { fastAnswer, slowAnswer, transportCalls } = await both(name);
      expect(transportCalls, name).toBe(1);
      expect(fastAnswer, name).toEqual(slowAnswer);
      expect(calls.length - before, name).toBe(2);
    }
  });

  it("sends a tool that handles files, progress and other shapes the SDK way", async () => {
    const fileTool = await both("file_tool");
    expect(fileTool.transportCalls).toBe(1);
    expect(fileTool.fastAnswer).toEqual(fileTool.slowAnswer);
    expect(scopes).toHaveLength(2);

    const progress = await both("progress", { params: { _meta: { progressToken: "p1" } } });
    expect(progress.transportCalls).toBe(1);
    expect(progress.fastAnswer).toEqual(progress.slowAnswer);
    expect(progress.fastAnswer.body).toContainEqual({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progress: 1, total: 1, progressToken: "p1" },
    });

    for (const [label, extra] of [
      ["empty meta is plain", { params: { _meta: {} } }],
      ["arguments not an object", { params: { arguments: "x" } }],
      ["unsupported version header", { headers: { "mcp-protocol-version": "1999-01-01" } }],
    ] as const) {
      const answer = await both("plain", extra as never);
      expect(answer.fastAnswer, label).toEqual(answer.slowAnswer);
    }
    const unknown = await both("no_such_tool");
    expect(unknown.transportCalls).toBe(1);
    expect(unknown.fastAnswer).toEqual(unknown.slowAnswer);
  });

  it("refuses an unknown session as before", async () => {
    const answer = await post(fast.mcpUrl, "not-a-session", {
      id: 1,
      method: "tools/call",
      params: { name: "plain" },
    });
    expect(answer.status).toBe(404);
  });

  it("cancels the upstream call on notifications/cancelled, and on the session's end", async () => {
    const session = await open(fast.mcpUrl);
    const id = nextId++;
    const pending = post(fast.mcpUrl, session, { id, method: "tools/call", params: { name: "hang" } });
    await waitUntil(() => calls.at(-1)?.params?.name === "hang");
    const cancel = await post(fast.mcpUrl, session, {
      method: "notifications/cancelled",
      params: { requestId: id, reason: "test" },
    });
    expect(cancel.status).toBe(202);
    await waitUntil(() => aborted.length === 1);
    // no answer for a cancelled request: the stream just ends
    expect((await pending).body).toEqual([]);

    const other = await open(fast.mcpUrl);
    const hanging = post(fast.mcpUrl, other, {
      id: nextId++,
      method: "tools/call",
      params: { name: "hang" },
    });
    await waitUntil(() => calls.at(-1)?.params?.name === "hang" && calls.length > 0);
    await waitUntil(() => core.inFlight === 1);
    const closed = await fetch(fast.mcpUrl, {
      method: "DELETE",
      headers: { "mcp-session-id": other, "mcp-protocol-version": VERSION },
    });
    expect(closed.status).toBe(200);
    await waitUntil(() => aborted.length === 2);
    await hanging;
    await waitUntil(() => core.inFlight === 0);
  });
});
