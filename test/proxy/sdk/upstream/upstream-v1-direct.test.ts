/**
 * The direct `tools/call` of `UpstreamConnection` (SDK v1; src/proxy/sdk/upstream/direct-call-v1.ts):
 * on a 2025 Streamable HTTP session a plain call is sent without the SDK client's request machinery.
 * Two connections to one upstream, the direct one and one with `directToolCalls: false` (the SDK
 * way), make the same calls; each upstream outcome must come back alike (results byte for byte,
 * errors by class, code, message and data), the upstream must receive the same request, and a spy on
 * the SDK client's `request` shows which way each call went (0: settled directly, 1: handed to the
 * client, which sends nothing again).
 *
 * The upstream is a real SDK v1 server (`StreamableHTTPServerTransport`, one session per connection)
 * on 127.0.0.1 behind a node:http front that records every `tools/call` (and `notifications/cancelled`)
 * and answers the tools named `s_*` with scripted raw responses.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { UpstreamConnection } from "../../../../src/proxy/sdk/upstream/upstream-connection.js";
import { type JsonObject, RPC, RpcError, UpstreamUnavailableError } from "../../../../src/proxy/types.js";
import { waitUntil } from "../../../support/helpers.js";

/** A `tools/call` the front received. */
interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: { id: number; params: JsonObject } & JsonObject;
}

const received: Received[] = [];
/** The `requestId`s of the `notifications/cancelled` the front received. */
const cancelledIds: unknown[] = [];

function build(): McpServer {
  const server = new McpServer({ name: "direct-upstream-v1", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes text.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }], structuredContent: { text } }),
  );
  server.registerTool("fail", { description: "A tool error." }, async () => ({
    isError: true,
    content: [{ type: "text", text: "this tool always fails" }],
  }));
  server.registerTool("image", { description: "Not text." }, async () => ({
    content: [{ type: "image", data: "aGVsbG8=", mimeType: "image/png" }],
  }));
  server.registerTool("slow", { description: "Runs until aborted." }, async (extra) => {
    await new Promise<void>((resolve) => {
      extra.signal.addEventListener("abort", () => resolve(), { once: true });
      setTimeout(resolve, 10_000);
    });
    return { content: [{ type: "text", text: "finished" }] };
  });
  return server;
}

const sse = (...messages: unknown[]) =>
  messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join("");
const result = (id: number, value: unknown) => ({ jsonrpc: "2.0", id, result: value });

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The scripted answers, by tool name: what the front writes for request `id`. */
const SCRIPTS: Record<string, (id: number, req: IncomingMessage, res: ServerResponse) => void> = {
  s_extra: (id, _req, res) =>
    json(
      res,
      200,
      result(id, { z: 1, content: [{ type: "text", text: "x", annotations: { a: 1 } }], y: [2] }),
    ),
  s_meta: (id, _req, res) =>
    json(res, 200, result(id, { content: [], extra: true, _meta: { "example.com/trace": "t1" } })),
  s_rpc_error: (id, _req, res) =>
    json(res, 200, { jsonrpc: "2.0", id, error: { code: -32042, message: "custom", data: { a: [1] } } }),
  s_rpc_error_no_data: (id, _req, res) =>
    json(res, 200, { jsonrpc: "2.0", id, error: { code: -32000, message: "no data" } }),
  s_timeout_error: (id, _req, res) =>
    json(res, 200, { jsonrpc: "2.0", id, error: { code: -32001, message: "Request timed out" } }),
  s_sse_one: (id, _req, res) =>
    res.writeHead(200, { "content-type": "text/event-stream" }).end(sse(result(id, { content: [], n: 1 }))),
  s_sse_notified: (id, _req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(
      sse({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } }),
    );
    setTimeout(() => res.end(sse(result(id, { content: [{ type: "text", text: "after a notice" }] }))), 20);
  },
  s_http_500: (_id, _req, res) => res.writeHead(500, { "content-type": "text/plain" }).end("boom"),
  s_not_json: (_id, _req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{nope"),
  s_not_jsonrpc: (id, _req, res) => json(res, 200, { id, result: { content: [] }, extra: 1 }),
  s_array_result: (id, _req, res) => json(res, 200, result(id, [1, 2])),
  s_string_id: (id, _req, res) => json(res, 200, result(String(id) as never, { content: [] })),
  s_cut: (_id, req) => req.socket.destroy(),
};

/** One SDK v1 server transport per session. */
const sessions = new Map<string, StreamableHTTPServerTransport>();

async function front(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  const message = text ? (JSON.parse(text) as Received["body"]) : undefined;
  if (message?.method === "notifications/cancelled") cancelledIds.push(message.params.requestId);
  if (message?.method === "tools/call") {
    received.push({ headers: req.headers, body: message });
    const script = SCRIPTS[String(message.params.name)];
    if (script) {
      script(message.id, req, res);
      return;
    }
  }
  const id = req.headers["mcp-session-id"];
  let transport = typeof id === "string" ? sessions.get(id) : undefined;
  if (!transport) {
    const made = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        sessions.set(sid, made);
      },
    });
    await build().connect(made);
    transport = made;
  }
  await transport.handleRequest(req, res, message);
}

let server: Server;
let url: string;
const TARGET_HEADERS = { authorization: "Bearer abc", "x-team": "blue" };
let direct: UpstreamConnection;
let sdk: UpstreamConnection;

function connection(kind: "direct" | "sdk", timeoutMs = 5_000): UpstreamConnection {
  return new UpstreamConnection({
    name: "up",
    target: { url, headers: TARGET_HEADERS },
    timeoutMs,
    directToolCalls: kind === "direct",
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    front(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  direct = connection("direct");
  sdk = connection("sdk");
  await Promise.all([direct.connect(), sdk.connect()]);
});

afterAll(async () => {
  await Promise.all([direct?.close(), sdk?.close()]);
  for (const transport of sessions.values()) await transport.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type Outcome =
  | { ok: true; json: string }
  | { ok: false; kind: string; code?: number; message: string; data?: unknown };

function outcomeOf(error: unknown): Outcome {
  if (error instanceof RpcError) {
    return { ok: false, kind: "RpcError", code: error.code, message: error.message, data: error.data };
  }
  if (error instanceof UpstreamUnavailableError) {
    return { ok: false, kind: "UpstreamUnavailableError", message: error.message };
  }
  return { ok: false, kind: String((error as Error)?.name), message: String((error as Error)?.message) };
}

/** Calls `name` on `on`, with the SDK client's `request` calls counted. */
async function call(
  on: UpstreamConnection,
  name: string,
  args: JsonObject = {},
  options: Parameters<UpstreamConnection["request"]>[2] = {},
): Promise<{ outcome: Outcome; sdkRequests: number }> {
  const spy = vi.spyOn(Client.prototype, "request");
  try {
    const value = await on.request("tools/call", { name, arguments: args }, options);
    return { outcome: { ok: true, json: JSON.stringify(value) }, sdkRequests: spy.mock.calls.length };
  } catch (error) {
    return { outcome: outcomeOf(error), sdkRequests: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

/** The same call both ways (each on a connected connection): the direct one's outcome and SDK requests. */
async function both(name: string, args: JsonObject = {}) {
  if (!sdk.connected) await sdk.connect();
  if (!direct.connected) await direct.connect();
  const viaSdk = await call(sdk, name, args);
  expect(viaSdk.sdkRequests).toBe(1);
  const viaDirect = await call(direct, name, args);
  expect(viaDirect.outcome).toEqual(viaSdk.outcome);
  return viaDirect;
}

describe("outcomes settled directly (no SDK request)", { timeout: 30_000 }, () => {
  it.each([
    ["echo", { text: "hi" }, /^\{"content":\[\{"type":"text","text":"echo: hi"\}\],"structuredContent"/],
    ["fail", {}, /"isError":true/],
    ["image", {}, /"type":"image"/],
    [
      "s_extra",
      {},
      /^\{"z":1,"content":\[\{"type":"text","text":"x","annotations":\{"a":1\}\}\],"y":\[2\]\}$/,
    ],
    ["s_sse_one", {}, /^\{"content":\[\],"n":1\}$/],
    ["nope", {}, /"isError":true/],
  ])("%s: the same result", async (name, args, shape) => {
    const { outcome, sdkRequests } = await both(name, args);
    expect(outcome.ok).toBe(true);
    expect((outcome as { json: string }).json).toMatch(shape);
    expect(sdkRequests).toBe(0);
  });

  it.each([
    ["s_rpc_error", { code: -32042, message: "custom", data: { a: [1] } }],
    ["s_rpc_error_no_data", { code: -32000, message: "no data" }],
  ])("%s: the same JSON-RPC error", async (name, expected) => {
    const { outcome, sdkRequests } = await both(name);
    expect(outcome).toMatchObject({ ok: false, kind: "RpcError", ...expected });
    expect(sdkRequests).toBe(0);
  });

  it("an upstream error that reads as a timeout is what the SDK way makes of it", async () => {
    const { outcome, sdkRequests } = await both("s_timeout_error");
    expect(outcome).toMatchObject({ ok: false, kind: "UpstreamUnavailableError" });
    expect(sdkRequests).toBe(0);
  });

  it("the upstream receives the same request both ways (headers, body), in one session each", async () => {
    const before = received.length;
    await both("echo", { text: "same" });
    const [viaSdk, viaDirect] = received.slice(before) as [Received, Received];
    expect(viaDirect.body).toEqual({ ...viaSdk.body, id: viaDirect.body.id });
    expect(Object.keys(viaDirect.body)).toEqual(Object.keys(viaSdk.body));
    for (const name of ["authorization", "x-team", "content-type", "accept", "mcp-protocol-version"]) {
      expect(viaDirect.headers[name]).toBe(viaSdk.headers[name]);
    }
    expect(viaDirect.headers["mcp-session-id"]).toEqual(expect.any(String));
    expect(viaDirect.headers["mcp-session-id"]).not.toBe(viaSdk.headers["mcp-session-id"]);
    // the client's ids move on as if it had sent the call
    const next = received.length;
    await call(direct, "echo", { text: "next" });
    expect((received[next] as Received).body.id).toBe(viaDirect.body.id + 1);
  });
});

describe("the headers of repeated calls (issue 43)", { timeout: 30_000 }, () => {
  it("come from the transport's _commonHeaders once per session, and stay the SDK's", async () => {
    if (!sdk.connected) await sdk.connect();
    if (!direct.connected) await direct.connect();
    const transport = (direct as unknown as { client: Client }).client.transport as unknown as {
      _commonHeaders(): Promise<Headers>;
    };
    const common = vi.spyOn(transport, "_commonHeaders");
    for (let i = 0; i < 4; i++) {
      const before = received.length;
      await both("echo", { text: `again ${i}` });
      const [viaSdk, viaDirect] = received.slice(before) as [Received, Received];
      for (const name of ["authorization", "x-team", "content-type", "accept", "mcp-protocol-version"]) {
        expect(viaDirect.headers[name]).toBe(viaSdk.headers[name]);
      }
      expect(viaDirect.headers["mcp-session-id"]).toEqual(expect.any(String));
    }
    expect(common.mock.calls.length).toBeLessThanOrEqual(1);
    common.mockRestore();
  });
});

describe("outcomes handed to the SDK client (one SDK request, nothing sent twice)", {
  timeout: 30_000,
}, () => {
  it.each([
    ["s_meta", /"example.com\/trace":"t1"/],
    ["s_sse_notified", /"after a notice"/],
  ])("%s: the same result", async (name, shape) => {
    const before = received.length;
    const { outcome, sdkRequests } = await both(name);
    expect(outcome.ok).toBe(true);
    expect((outcome as { json: string }).json).toMatch(shape);
    expect(sdkRequests).toBe(1);
    expect(received.length - before).toBe(2);
  });

  it.each([
    ["s_http_500", "UpstreamUnavailableError"],
    ["s_not_json", "UpstreamUnavailableError"],
    ["s_not_jsonrpc", "RpcError"],
    ["s_array_result", "RpcError"],
    ["s_cut", "UpstreamUnavailableError"],
  ])("%s: the same failure", async (name, kind) => {
    const before = received.length;
    const { outcome, sdkRequests } = await both(name);
    expect(outcome).toMatchObject({ ok: false, kind });
    expect(sdkRequests).toBe(1);
    expect(received.length - before).toBe(2);
  });
});

describe("ending a call early, as the SDK way ends it", { timeout: 30_000 }, () => {
  it("the caller's abort: cancelled, and the upstream is told with notifications/cancelled", async () => {
    for (const on of [sdk, direct]) {
      const before = received.length;
      const stop = new AbortController();
      const pending = call(on, "slow", {}, { signal: stop.signal });
      await waitUntil(() => received.length > before);
      stop.abort("enough");
      const { outcome } = await pending;
      expect(outcome).toMatchObject({ ok: false, kind: "RpcError", code: RPC.REQUEST_TIMEOUT });
      const id = (received[before] as Received).body.id;
      await waitUntil(() => cancelledIds.includes(id));
    }
  });

  it("its timeout: the same error, and notifications/cancelled", async () => {
    const outcomes: Outcome[] = [];
    for (const kind of ["sdk", "direct"] as const) {
      const on = connection(kind, 200);
      try {
        const before = received.length;
        const { outcome } = await call(on, "slow");
        outcomes.push(outcome);
        const id = (received[before] as Received).body.id;
        await waitUntil(() => cancelledIds.includes(id));
      } finally {
        await on.close();
      }
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[0]).toMatchObject({ ok: false, kind: "UpstreamUnavailableError" });
  });

  it("the connection closing under a call: the same error", async () => {
    const outcomes: Outcome[] = [];
    for (const kind of ["sdk", "direct"] as const) {
      const on = connection(kind);
      await on.connect();
      const before = received.length;
      const pending = call(on, "slow");
      await waitUntil(() => received.length > before);
      await on.close();
      outcomes.push((await pending).outcome);
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[0]?.ok).toBe(false);
  });
});
