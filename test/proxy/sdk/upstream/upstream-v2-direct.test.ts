/**
 * The direct `tools/call` of `UpstreamConnectionV2` (src/proxy/sdk/upstream/direct-call.ts): on a
 * 2026-07-28 HTTP upstream a plain call is sent without the SDK client's request machinery. Two
 * connections to one upstream, the direct one and one with `directToolCalls: false` (the SDK way),
 * make the same calls; each upstream outcome must come back alike (results byte for byte, errors by
 * class, code, message and data), the upstream must receive the same request, and a spy on the SDK
 * client's `request` shows which way each call went (0: settled directly, 1: handed to the client).
 *
 * The upstream is a real SDK v2 server (`createMcpHandler`) on 127.0.0.1 behind a node:http front
 * that records every `tools/call` and answers the tools named `s_*` with scripted raw responses.
 */
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, type StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { plainResult } from "../../../../src/proxy/sdk/upstream/direct-call.js";
import { UpstreamConnectionV2 } from "../../../../src/proxy/sdk/upstream/upstream-connection-v2.js";
import { type JsonObject, RpcError, UpstreamUnavailableError } from "../../../../src/proxy/types.js";
import { rejectionOf, waitUntil } from "../../../support/helpers.js";
import { answerWithWebHandler } from "../../../support/web-handler-on-node.js";

/** A `tools/call` the front received. */
interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: { id: number; params: JsonObject } & JsonObject;
}

const received: Received[] = [];
/** Names of the `slow` calls whose signal aborted on the server. */
const cancelled: string[] = [];
/** Names of the `slow` calls under way on the server. */
const started: string[] = [];
/** Scripted calls whose request the front saw close before it answered. */
const closedEarly: string[] = [];

function build(): McpServer {
  const server = new McpServer({ name: "direct-upstream", version: "1.0.0" }, { capabilities: {} });
  server.registerTool(
    "echo",
    { description: "Echoes text.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }], structuredContent: { text } }),
  );
  server.registerTool("fail", { description: "A tool error." }, async () => ({
    isError: true,
    content: [{ type: "text", text: "this tool always fails" }],
  }));
  server.registerTool("image", { description: "Not plain text." }, async () => ({
    content: [{ type: "image", data: "aGVsbG8=", mimeType: "image/png" }],
  }));
  server.registerTool(
    "slow",
    { description: "Runs until aborted.", inputSchema: z.object({ tag: z.string() }) },
    async ({ tag }, ctx) => {
      started.push(tag);
      await new Promise<void>((resolve) => {
        if (ctx.mcpReq.signal.aborted) resolve();
        ctx.mcpReq.signal.addEventListener("abort", () => resolve(), { once: true });
        setTimeout(resolve, 10_000);
      });
      if (ctx.mcpReq.signal.aborted) cancelled.push(tag);
      return { content: [{ type: "text", text: "finished" }] };
    },
  );
  return server;
}

const sse = (...messages: unknown[]) =>
  messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join("");
const result = (id: number, value: unknown) => ({ jsonrpc: "2.0", id, result: value });
const complete = (value: JsonObject) => ({ ...value, resultType: "complete" });
const textResult = (text: string) => complete({ content: [{ type: "text", text }] });

/** What `s_generated` answers (set by the property test). */
let generated: unknown = {};

/** The scripted answers, by tool name: what the front writes for request `id`. */
const SCRIPTS: Record<string, (id: number, req: IncomingMessage, res: ServerResponse) => void> = {
  s_generated: (id, _req, res) => json(res, 200, result(id, generated)),
  s_rpc_error: (id, _req, res) =>
    json(res, 200, { jsonrpc: "2.0", id, error: { code: -32042, message: "custom", data: { a: [1] } } }),
  s_rpc_error_no_data: (id, _req, res) =>
    json(res, 200, { jsonrpc: "2.0", id, error: { code: -32000, message: "no data" } }),
  s_not_found: (id, _req, res) =>
    json(res, 200, {
      jsonrpc: "2.0",
      id,
      error: { code: -32602, message: "Resource missing", data: { uri: "x://y" } },
    }),
  s_http_400_rpc: (id, _req, res) =>
    json(res, 400, { jsonrpc: "2.0", id, error: { code: -32602, message: "bad header", data: { h: 1 } } }),
  s_http_500: (_id, _req, res) => res.writeHead(500, { "content-type": "text/plain" }).end("boom"),
  s_http_404: (_id, _req, res) => res.writeHead(404).end(),
  s_http_202: (_id, _req, res) => res.writeHead(202).end(),
  s_wrong_type: (_id, _req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<p>hi</p>"),
  s_sse_one: (id, _req, res) =>
    res.writeHead(200, { "content-type": "text/event-stream" }).end(sse(result(id, textResult("one event")))),
  s_sse_notified: (id, _req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(
      sse({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "working" } }),
    );
    setTimeout(() => res.end(sse(result(id, textResult("after a notice")))), 20);
  },
  s_meta: (id, _req, res) =>
    json(
      res,
      200,
      result(
        id,
        complete({
          content: [{ type: "text", text: "with meta" }],
          structuredContent: { n: 1 },
          isError: false,
          _meta: {
            "io.modelcontextprotocol/serverInfo": { name: "x", version: "1", extra: true },
            "example.com/trace": "t1",
            "io.modelcontextprotocol/other": 1,
          },
          extra: { kept: true },
        }),
      ),
    ),
  s_meta_reserved_only: (id, _req, res) =>
    json(
      res,
      200,
      result(id, {
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/serverInfo": "bad" },
        content: [],
      }),
    ),
  s_meta_plain: (id, _req, res) =>
    json(res, 200, result(id, { content: [], resultType: "complete", _meta: { "example.com/k": [1, 2] } })),
  s_annotated: (id, _req, res) =>
    json(
      res,
      200,
      result(id, complete({ content: [{ type: "text", text: "a", annotations: { priority: 0.5 } }] })),
    ),
  s_input_required: (id, _req, res) =>
    json(
      res,
      200,
      result(id, {
        resultType: "input_required",
        inputRequests: {
          ask: {
            method: "elicitation/create",
            params: { message: "name?", requestedSchema: { type: "object" } },
          },
        },
      }),
    ),
  s_unknown_type: (id, _req, res) => json(res, 200, result(id, { resultType: "later", content: [] })),
  s_missing_type: (id, _req, res) => json(res, 200, result(id, { content: [{ type: "text", text: "x" }] })),
  s_malformed: (id, _req, res) => json(res, 200, result(id, { resultType: "complete", content: "nope" })),
  s_bad_is_error: (id, _req, res) =>
    json(res, 200, result(id, { resultType: "complete", content: [], isError: "yes" })),
  s_not_json: (_id, _req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{nope"),
  s_not_jsonrpc: (id, _req, res) => json(res, 200, { id, result: textResult("no version"), extra: 1 }),
  s_batch: (id, _req, res) => json(res, 200, [result(id, textResult("in an array"))]),
  s_string_id: (id, _req, res) => json(res, 200, result(String(id) as never, textResult("string id"))),
  s_cut: (_id, req, _res) => req.socket.destroy(),
  s_cut_body: (_id, req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
    res.write('{"jsonrpc":"2.0","id":');
    setTimeout(() => req.socket.destroy(), 20);
  },
  s_silent: (_id, _req, res) => {
    res.once("close", () => closedEarly.push("s_silent"));
  },
  s_wrong_id: (id, _req, res) => json(res, 200, result(id + 1000, textResult("someone else's"))),
};

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const handler = createMcpHandler(() => build(), { legacy: "reject" });

async function front(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  let message: Received["body"] | undefined;
  try {
    message = body.length > 0 ? (JSON.parse(body.toString()) as Received["body"]) : undefined;
  } catch {
    message = undefined;
  }
  if (message?.method === "tools/call") {
    received.push({ headers: req.headers, body: message });
    const script = SCRIPTS[String(message.params.name)];
    if (script) {
      script(message.id, req, res);
      return;
    }
  }
  await answerWithWebHandler(req, res, body, (request) => handler.fetch(request));
}

let server: Server;
let port = 0;
let url: string;

async function listen(): Promise<void> {
  server = createServer((req, res) => {
    front(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}/mcp`;
}

async function stopServer(): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

const TARGET_HEADERS = { authorization: "Bearer abc", "x-team": "blue", Accept: "application/json" };
const heard: Record<"direct" | "sdk", Array<{ method: string; params: unknown }>> = { direct: [], sdk: [] };
let direct: UpstreamConnectionV2;
let sdk: UpstreamConnectionV2;

function connection(kind: "direct" | "sdk"): UpstreamConnectionV2 {
  return new UpstreamConnectionV2({
    name: "up",
    target: { url, headers: TARGET_HEADERS },
    era: "modern",
    timeoutMs: 5_000,
    directToolCalls: kind === "direct",
    onNotification: (method, params) => heard[kind].push({ method, params }),
  });
}

beforeAll(async () => {
  await listen();
  direct = connection("direct");
  sdk = connection("sdk");
  await Promise.all([direct.connect(), sdk.connect()]);
});

afterAll(async () => {
  await Promise.all([direct?.close(), sdk?.close()]);
  await stopServer();
});

afterEach(() => {
  vi.restoreAllMocks();
});

type Outcome =
  | { ok: true; json: string }
  | { ok: false; kind: string; code?: number; message: string; data?: unknown; cause?: string };

function outcomeOf(error: unknown): Outcome {
  if (error instanceof RpcError) {
    return { ok: false, kind: "RpcError", code: error.code, message: error.message, data: error.data };
  }
  if (error instanceof UpstreamUnavailableError) {
    const cause = (error as { cause?: unknown }).cause;
    return {
      ok: false,
      kind: "UpstreamUnavailableError",
      message: error.message,
      cause: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause),
    };
  }
  return { ok: false, kind: String((error as Error)?.name), message: String((error as Error)?.message) };
}

/** Calls `name` on `on`, with the SDK client's `request` calls counted. */
async function call(
  on: UpstreamConnectionV2,
  name: string,
  args: JsonObject = {},
  options: Parameters<UpstreamConnectionV2["request"]>[2] = {},
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

/** The same call both ways: the outcomes, and how many SDK requests the direct one made. */
async function both(name: string, args: JsonObject = {}, options = {}) {
  const viaSdk = await call(sdk, name, args, options);
  expect(viaSdk.sdkRequests).toBe(1);
  const viaDirect = await call(direct, name, args, options);
  expect(viaDirect.outcome).toEqual(viaSdk.outcome);
  return { outcome: viaDirect.outcome, sdkRequests: viaDirect.sdkRequests };
}

describe("outcomes settled directly (no SDK request)", { timeout: 30_000 }, () => {
  it.each([
    ["echo", { text: "hi" }, /"echo: hi"/],
    ["fail", {}, /"isError":true/],
    ["s_meta", {}, /"example.com\/trace":"t1"/],
    ["s_meta_reserved_only", {}, /^\{"content":\[\]\}$/],
    ["s_meta_plain", {}, /^\{"_meta":\{"example.com\/k":\[1,2\]\},"content":\[\]\}$/],
    ["s_sse_one", {}, /"one event"/],
  ])("%s: the same result", async (name, args, shape) => {
    const { outcome, sdkRequests } = await both(name, args);
    expect(outcome.ok).toBe(true);
    expect((outcome as { json: string }).json).toMatch(shape);
    expect(sdkRequests).toBe(0);
  });

  it.each([
    ["s_rpc_error", { code: -32042, message: "custom", data: { a: [1] } }],
    ["s_rpc_error_no_data", { code: -32000, message: "no data" }],
    ["s_not_found", { code: -32602 }],
    ["nope", { code: -32602 }],
  ])("%s: the same JSON-RPC error", async (name, expected) => {
    const { outcome, sdkRequests } = await both(name);
    expect(outcome).toMatchObject({ ok: false, kind: "RpcError", ...expected });
    expect(sdkRequests).toBe(0);
  });
});

/** Members in any order. */
const shuffled = (entries: Array<[string, unknown]>) =>
  fc.shuffledSubarray(entries, { minLength: entries.length }).map((e) => Object.fromEntries(e));

const textBlock = fc.oneof(
  { weight: 8, arbitrary: fc.record({ type: fc.constant("text"), text: fc.string() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("text"), text: fc.string(), x: fc.jsonValue() }) },
  { weight: 1, arbitrary: fc.constant({ type: "text", text: "a", annotations: { priority: 1 } }) },
);
const block = fc.oneof(
  { weight: 10, arbitrary: textBlock },
  { weight: 1, arbitrary: fc.constant({ type: "image", data: "aGk=", mimeType: "image/png" }) },
  { weight: 1, arbitrary: fc.constant({ type: "text" }) },
);
const metaKey = fc.constantFrom(
  "io.modelcontextprotocol/serverInfo",
  "io.modelcontextprotocol/other",
  "example.com/a",
  "b",
);
const meta = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.dictionary(metaKey, fc.oneof(fc.jsonValue(), fc.constant({ name: "s", version: "1" }))),
  },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant("m") },
);
/** A tools/call result: mostly plain, sometimes not, members in any order. */
const toolResult = fc
  .record(
    {
      content: fc.oneof({ weight: 12, arbitrary: fc.array(block, { maxLength: 3 }) }, fc.constant("c")),
      structuredContent: fc.jsonValue(),
      isError: fc.oneof({ weight: 8, arbitrary: fc.boolean() }, fc.constant("yes")),
      _meta: meta,
      resultType: fc.oneof({ weight: 12, arbitrary: fc.constant("complete") }, fc.constant("other")),
      extra: fc.jsonValue(),
    },
    { requiredKeys: [] },
  )
  .chain((value) => shuffled(Object.entries(value)));

describe("generated results (property)", { timeout: 120_000 }, () => {
  it("come back alike both ways; the plain ones without an SDK request", async () => {
    const seen = { plain: 0, other: 0 };
    await fc.assert(
      fc.asyncProperty(toolResult, async (value) => {
        generated = value;
        const { outcome, sdkRequests } = await both("s_generated");
        expect(sdkRequests).toBe(plainResult(value) ? 0 : 1);
        seen[plainResult(value) ? "plain" : "other"]++;
        if (!direct.connected) await direct.connect();
        if (!sdk.connected) await sdk.connect();
        return outcome !== undefined;
      }),
      { numRuns: 150 },
    );
    expect(seen.plain).toBeGreaterThan(10);
    expect(seen.other).toBeGreaterThan(10);
  });
});

describe("outcomes handed to the SDK client (one SDK request, nothing sent twice)", {
  timeout: 30_000,
}, () => {
  it.each([
    ["image", /"type":"image"/],
    ["s_annotated", /"priority":0.5/],
    ["s_sse_notified", /"after a notice"/],
    ["s_batch", /"in an array"/],
    ["s_string_id", /"string id"/],
  ])("%s: the same result", async (name, shape) => {
    const before = received.length;
    const { outcome, sdkRequests } = await both(name);
    expect(outcome.ok).toBe(true);
    expect((outcome as { json: string }).json).toMatch(shape);
    expect(sdkRequests).toBe(1);
    expect(received.length - before).toBe(2);
  });

  it.each([
    ["s_http_400_rpc", { kind: "RpcError", code: -32602, message: "bad header", data: { h: 1 } }],
    ["s_http_500", { kind: "UpstreamUnavailableError" }],
    ["s_wrong_type", { kind: "UpstreamUnavailableError" }],
    ["s_input_required", { kind: "RpcError" }],
    ["s_unknown_type", { kind: "RpcError" }],
    ["s_missing_type", { kind: "RpcError", message: 'upstream "up" sent a malformed result' }],
    ["s_malformed", { kind: "RpcError", message: 'upstream "up" sent a malformed result' }],
    ["s_bad_is_error", { kind: "RpcError", message: 'upstream "up" sent a malformed result' }],
    ["s_not_json", { kind: "UpstreamUnavailableError" }],
    ["s_not_jsonrpc", { kind: "UpstreamUnavailableError" }],
  ])("%s: the same error", async (name, expected) => {
    const before = received.length;
    const { outcome, sdkRequests } = await both(name);
    expect(outcome).toMatchObject({ ok: false, ...expected });
    expect(sdkRequests).toBe(1);
    expect(received.length - before).toBe(2);
    // a failure that drops the connection drops both; the next call reconnects
    expect(direct.connected).toBe(sdk.connected);
    await direct.connect();
    await sdk.connect();
  });

  it("a notification before the result reaches onNotification alike", async () => {
    heard.direct.length = 0;
    heard.sdk.length = 0;
    await both("s_sse_notified");
    expect(heard.direct).toEqual(heard.sdk);
    expect(heard.direct).toEqual([
      { method: "notifications/message", params: { level: "info", data: "working" } },
    ]);
  });

  it("a call that asks for progress goes the SDK way", async () => {
    const viaDirect = await call(direct, "echo", { text: "p" }, { onprogress: () => undefined });
    expect(viaDirect.outcome).toMatchObject({ ok: true });
    expect(viaDirect.sdkRequests).toBe(1);
  });
});

describe("the request on the wire", { timeout: 30_000 }, () => {
  it("has the SDK's body (envelope, _meta, key order) and headers", async () => {
    const meta = { "example.com/caller": "x" };
    await call(sdk, "echo", { text: "wire" });
    const viaSdk = received.at(-1) as Received;
    await call(direct, "echo", { text: "wire" }, {});
    const viaDirect = received.at(-1) as Received;
    const { id: sdkId, ...sdkBody } = viaSdk.body;
    const { id: directId, ...directBody } = viaDirect.body;
    expect(typeof directId).toBe("number");
    expect(typeof sdkId).toBe("number");
    expect(JSON.stringify(directBody)).toBe(JSON.stringify(sdkBody));
    expect(Object.keys(viaDirect.body)).toEqual(Object.keys(viaSdk.body));
    const strip = ({ "content-length": _length, ...rest }: Received["headers"]) => rest;
    expect(strip(viaDirect.headers)).toEqual(strip(viaSdk.headers));
    expect(viaDirect.headers).toMatchObject({
      authorization: "Bearer abc",
      "x-team": "blue",
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-method": "tools/call",
      "mcp-name": "echo",
      "mcp-protocol-version": "2026-07-28",
    });
    expect(viaDirect.headers).not.toHaveProperty("x-mcp-file-bridge-held-answer");
    expect((viaDirect.body.params._meta as JsonObject)["io.modelcontextprotocol/clientInfo"]).toBeDefined();

    // the caller's _meta merged into the envelope alike
    await call(sdk, "echo", { text: "m" });
    await sdk.request("tools/call", { name: "echo", arguments: { text: "m" }, _meta: meta });
    const sdkMeta = received.at(-1) as Received;
    await direct.request("tools/call", { name: "echo", arguments: { text: "m" }, _meta: meta });
    const directMeta = received.at(-1) as Received;
    expect(JSON.stringify({ ...directMeta.body, id: 0 })).toBe(JSON.stringify({ ...sdkMeta.body, id: 0 }));
  });

  it("a handed-over call keeps its one request and id; ids stay unique on the connection", async () => {
    const before = received.length;
    await call(direct, "image");
    await call(direct, "echo", { text: "after" });
    const [handed, next] = received.slice(before);
    expect(received.length - before).toBe(2);
    expect(next?.body.id).toBe((handed?.body.id as number) + 1);
  });
});

describe("the headers of repeated calls (issue 43: the SDK's header steps run once per shape)", {
  timeout: 30_000,
}, () => {
  /** The transport of `on`'s connected client. */
  const transportOf = (on: UpstreamConnectionV2) =>
    (on as unknown as { client: Client }).client.transport as StreamableHTTPClientTransport;
  const internals = (on: UpstreamConnectionV2) =>
    transportOf(on) as unknown as {
      _applyBodyDerivedHeaders(headers: Headers, message: unknown): void;
      _commonHeaders(): Promise<Headers>;
      _abortController: AbortController;
    };

  it("derive each tool's and envelope's headers once; every call still sends the SDK's headers", async () => {
    // a name the 2026-07-28 headers must encode (not plain ASCII), and a caller's _meta
    const names = ["echo", "fail", "échø"];
    const meta = { "example.com/trace": "t-1" };
    const derive = vi.spyOn(internals(direct), "_applyBodyDerivedHeaders");
    const common = vi.spyOn(internals(direct), "_commonHeaders");
    let afterFirstRound = [0, 0];
    for (let round = 0; round < 3; round++) {
      if (round === 1) afterFirstRound = [derive.mock.calls.length, common.mock.calls.length];
      for (const name of names) {
        for (const extra of [{}, { _meta: meta }]) {
          await sdk.request("tools/call", { name, arguments: { text: "h" }, ...extra }).catch(() => {});
          const viaSdk = received.at(-1) as Received;
          await direct.request("tools/call", { name, arguments: { text: "h" }, ...extra }).catch(() => {});
          const viaDirect = received.at(-1) as Received;
          const strip = ({ "content-length": _length, ...rest }: Received["headers"]) => rest;
          expect(strip(viaDirect.headers)).toEqual(strip(viaSdk.headers));
        }
      }
    }
    // each shape at most once (one may be known from the calls above), none again on repeats
    expect(afterFirstRound[0]).toBeGreaterThanOrEqual(names.length * 2 - 1);
    expect([derive.mock.calls.length, common.mock.calls.length]).toEqual(afterFirstRound);
    expect((received.at(-1) as Received).headers["mcp-name"]).toMatch(/^=\?base64\?/);
  });

  it("calls under way add one listener to the transport's lifetime signal, not one each", async () => {
    const signal = internals(direct)._abortController.signal;
    const before = getEventListeners(signal, "abort").length;
    const tags = ["l1", "l2", "l3", "l4", "l5"];
    const controllers = tags.map(() => new AbortController());
    const pending = tags.map((tag, i) =>
      direct
        .request("tools/call", { name: "slow", arguments: { tag } }, { signal: controllers[i]?.signal })
        .catch(() => {}),
    );
    await waitUntil(() => tags.every((tag) => started.includes(tag)));
    expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(before + 1);
    for (const controller of controllers) controller.abort("done");
    await Promise.all(pending);
  });
});

describe("ending a call", { timeout: 30_000 }, () => {
  it("an abort closes the request upstream, with the SDK's error", async () => {
    const outcomes: Outcome[] = [];
    for (const [kind, on] of [
      ["sdk", sdk],
      ["direct", direct],
    ] as const) {
      const controller = new AbortController();
      const spy = vi.spyOn(Client.prototype, "request");
      const pending = on.request(
        "tools/call",
        { name: "slow", arguments: { tag: kind } },
        { signal: controller.signal },
      );
      await waitUntil(() => started.includes(kind));
      controller.abort("stop");
      outcomes.push(outcomeOf(await rejectionOf(pending)));
      await waitUntil(() => cancelled.includes(kind));
      expect(spy.mock.calls.length).toBe(kind === "direct" ? 0 : 1);
      spy.mockRestore();
      expect(on.connected).toBe(true);
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[0]).toMatchObject({ kind: "RpcError", message: "Request was cancelled" });
  });

  it("an already-aborted signal fails alike before sending", async () => {
    const before = received.length;
    const { outcome, sdkRequests } = await both("echo", { text: "x" }, { signal: AbortSignal.abort("no") });
    expect(outcome).toMatchObject({ kind: "RpcError", message: "Request was cancelled" });
    expect(sdkRequests).toBe(0);
    expect(received.length).toBe(before);
  });

  it("the timeout ends the request alike, upstream too", async () => {
    closedEarly.length = 0;
    const { outcome, sdkRequests } = await both("s_silent", {}, { timeoutMs: 300 });
    expect(outcome).toMatchObject({
      kind: "UpstreamUnavailableError",
      message: 'upstream "up" did not answer in time',
    });
    expect(sdkRequests).toBe(0);
    await waitUntil(() => closedEarly.length === 2);
    expect(direct.connected).toBe(true);
  });

  it("an answer to another id leaves the call to its timeout, alike", async () => {
    const { outcome, sdkRequests } = await both("s_wrong_id", {}, { timeoutMs: 300 });
    expect(outcome).toMatchObject({
      kind: "UpstreamUnavailableError",
      message: 'upstream "up" did not answer in time',
    });
    expect(sdkRequests).toBe(1);
  });

  it.each(["s_cut", "s_cut_body"])(
    "%s: a cut connection fails alike and the next call reconnects",
    async (name) => {
      const before = received.length;
      const { outcome, sdkRequests } = await both(name);
      expect(outcome).toMatchObject({ kind: "UpstreamUnavailableError" });
      expect(sdkRequests).toBe(1);
      expect(received.length - before).toBe(2);
      expect(direct.connected).toBe(false);
      expect(sdk.connected).toBe(false);
      const next = await call(direct, "echo", { text: "again" });
      expect(next.outcome).toMatchObject({ ok: true });
      expect(direct.connected).toBe(true);
      await sdk.connect();
    },
  );

  it("the client closing under a call fails it alike (lost during the call)", async () => {
    const outcomes: Outcome[] = [];
    for (const on of [sdk, direct]) {
      const pending = on.request("tools/call", { name: "s_silent", arguments: {} });
      await waitUntil(() => received.at(-1)?.body.params.name === "s_silent");
      received.push({ headers: {}, body: { id: -1, params: {} } });
      // what the listen stream's end or a broken stream does: drop the client
      (on as unknown as { drop(client: unknown): void }).drop((on as unknown as { client: unknown }).client);
      outcomes.push(outcomeOf(await rejectionOf(pending)));
      await on.connect();
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[0]).toMatchObject({
      kind: "UpstreamUnavailableError",
      message: 'upstream "up" closed the connection during the call',
    });
  });

  it("an upstream restart: the call fails alike, the next one reconnects", async () => {
    const [freshDirect, freshSdk] = [connection("direct"), connection("sdk")];
    try {
      await Promise.all([freshDirect.connect(), freshSdk.connect()]);
      await stopServer();
      // The listen stream of each connection ends with the server and is reopened once; when that
      // fails the connection drops. Wait for it, so the calls below do not race it.
      await waitUntil(() => !freshDirect.connected && !freshSdk.connected, 3000).catch(() => undefined);
      const downSdk = await call(freshSdk, "echo", { text: "down" });
      const downDirect = await call(freshDirect, "echo", { text: "down" });
      expect(downDirect.outcome).toEqual(downSdk.outcome);
      expect(downDirect.outcome).toMatchObject({ kind: "UpstreamUnavailableError" });
      expect(freshDirect.connected).toBe(false);
      await listen();
      const up = await call(freshDirect, "echo", { text: "up" });
      expect(up.outcome).toMatchObject({ ok: true, json: expect.stringContaining("echo: up") });
      expect(up.sdkRequests).toBe(0);
      expect(freshDirect.connected).toBe(true);
    } finally {
      await Promise.all([freshDirect.close(), freshSdk.close()]);
    }
  });
});

// Last in this file: what it checks turns direct calls off for the rest of the process.
describe("an SDK client that takes a request's id later than request() returns (not the tested 2.x)", () => {
  it("the handed-over call fails without a second send, and no call goes direct after it", async () => {
    const original = Client.prototype.request;
    const late = vi.spyOn(Client.prototype, "request").mockImplementation(function (
      this: Client,
      ...args: Parameters<Client["request"]>
    ) {
      return Promise.resolve().then(() => original.apply(this, args)) as ReturnType<Client["request"]>;
    });
    const sentBefore = received.filter((r) => r.body.params.name === "image").length;
    const failed = await rejectionOf(direct.request("tools/call", { name: "image", arguments: {} }));
    late.mockRestore();
    expect(failed).toBeInstanceOf(Error);
    // the upstream saw the call once: the SDK's request with another id was refused, not sent
    expect(received.filter((r) => r.body.params.name === "image").length - sentBefore).toBe(1);
    const next = await call(direct, "echo", { text: "after" });
    expect(next.outcome).toMatchObject({ ok: true, json: expect.stringContaining("echo: after") });
    expect(next.sdkRequests).toBe(1);
  });
});
