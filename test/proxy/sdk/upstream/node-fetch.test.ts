/**
 * The `fetch` the upstream transports use (src/proxy/sdk/upstream/node-fetch.ts), against a real
 * node:http server on 127.0.0.1: what it sends and answers, keep-alive reuse, aborts, redirects left
 * to the transport, and no abort listener left behind on a long-lived signal.
 */
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  HELD_ANSWER_HEADER,
  nodeFetch,
  oneResponseEvent,
  safeToRepeat,
} from "../../../../src/proxy/sdk/upstream/node-fetch.js";

let server: Server | undefined;
const clients: Array<{ close(): void }> = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<URL> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
}

function client(options: Parameters<typeof nodeFetch>[0] = {}) {
  return made(options).fetch;
}

function made(options: Parameters<typeof nodeFetch>[0] = {}) {
  const made = nodeFetch(options);
  clients.push(made);
  return made;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

afterEach(async () => {
  for (const made of clients.splice(0)) made.close();
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe("nodeFetch", () => {
  it("sends method, headers and body, answers status, headers and body, on one kept-alive socket", async () => {
    const ports = new Set<number>();
    const url = await serve(async (req, res) => {
      ports.add(req.socket.remotePort as number);
      const body = await bodyOf(req);
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" });
      res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body }));
    });
    const fetch = client();
    for (let i = 0; i < 3; i++) {
      const headers = new Headers({ authorization: "Bearer t", "content-type": "application/json" });
      const response = await fetch(url, { method: "POST", headers, body: `{"n":${i}}`, redirect: "manual" });
      expect(response.status).toBe(200);
      expect(response.headers.get("mcp-session-id")).toBe("s-1");
      expect(await response.json()).toEqual({ method: "POST", auth: "Bearer t", body: `{"n":${i}}` });
    }
    expect(ports.size).toBe(1);
  });

  it("streams a body as it arrives and leaves no abort listener on the signal it was given", async () => {
    let release: () => void = () => undefined;
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      release = () => res.end("data: two\n\n");
    });
    const fetch = client();
    const signal = new AbortController().signal;
    const response = await fetch(url, { method: "POST", body: "{}", redirect: "manual", signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: one\n\n");
    release();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: two\n\n");
    expect((await reader.read()).done).toBe(true);
    for (let i = 0; i < 20; i++) {
      await (await fetch(url, { method: "POST", body: "{}", redirect: "manual", signal })).body?.cancel();
    }
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });

  it("rejects at once on an aborted signal, and an abort mid-body fails the body", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
    });
    const fetch = client();
    const aborted = AbortSignal.abort();
    await expect(fetch(url, { method: "GET", redirect: "manual", signal: aborted })).rejects.toMatchObject({
      name: "AbortError",
    });
    const controller = new AbortController();
    const response = await fetch(url, { method: "GET", redirect: "manual", signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
  });

  it("answers a redirect as it is with redirect: manual, and leaves following to the global fetch", async () => {
    const url = await serve((req, res) => {
      if (req.url === "/mcp") {
        res.writeHead(307, { location: "/moved" });
        res.end();
        return;
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("moved here");
    });
    const fetch = client();
    const manual = await fetch(url, { method: "GET", redirect: "manual" });
    expect(manual.status).toBe(307);
    expect(manual.headers.get("location")).toBe("/moved");
    const followed = await fetch(url, { method: "GET" });
    expect(followed.status).toBe(200);
    expect(await followed.text()).toBe("moved here");
  });

  it("fails like undici's fetch when nothing listens", async () => {
    const url = await serve(() => undefined);
    server?.close();
    await new Promise((resolve) => server?.once("close", resolve));
    await expect(client()(url, { method: "POST", body: "{}", redirect: "manual" })).rejects.toMatchObject({
      name: "TypeError",
      message: "fetch failed",
      cause: { code: "ECONNREFUSED" },
    });
  });
});

describe("oneEventAsJson", () => {
  it("answers a complete one-response SSE answer as JSON, and streams anything else as it is", async () => {
    const url = await serve(async (req, res) => {
      const kind = await bodyOf(req);
      res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s-2" });
      if (kind === "one") res.end('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
      else if (kind === "two") {
        res.write(
          'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
        );
        res.end('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
      } else res.end('id: 7\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    });
    const fetch = client({ oneEventAsJson: true });
    const one = await fetch(url, { method: "POST", body: "one", redirect: "manual" });
    expect(one.headers.get("content-type")).toBe("application/json");
    expect(one.headers.get("mcp-session-id")).toBe("s-2");
    expect(await one.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    for (const kind of ["two", "with-id"]) {
      const other = await fetch(url, { method: "POST", body: kind, redirect: "manual" });
      expect(other.headers.get("content-type")).toBe("text/event-stream");
      expect(await other.text()).toContain('"result":{}');
    }
    const plain = await client()(url, { method: "POST", body: "one", redirect: "manual" });
    expect(plain.headers.get("content-type")).toBe("text/event-stream");
  });

  it("asks a test of the POST body when given one: a body it refuses streams as it is", async () => {
    const url = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    });
    const seen: string[] = [];
    const fetch = client({
      oneEventAsJson: (body) => {
        seen.push(body);
        return !body.includes('"subscriptions/listen"');
      },
    });
    const call = await fetch(url, { method: "POST", body: '{"method":"tools/call"}', redirect: "manual" });
    expect(call.headers.get("content-type")).toBe("application/json");
    expect(await call.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    const listen = await fetch(url, {
      method: "POST",
      body: '{"method":"subscriptions/listen"}',
      redirect: "manual",
    });
    expect(listen.headers.get("content-type")).toBe("text/event-stream");
    expect(await listen.text()).toBe('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
    expect(seen).toEqual(['{"method":"tools/call"}', '{"method":"subscriptions/listen"}']);
  });

  it("takes only one message event carrying a JSON-RPC response", () => {
    expect(oneResponseEvent('data: {"id":1,"result":{}}\n\n')).toBe('{"id":1,"result":{}}');
    expect(oneResponseEvent('event: message\ndata: {"id":1,\ndata: "error":{}}\n\n')).toBe(
      '{"id":1,\n"error":{}}',
    );
    expect(oneResponseEvent('data: {"method":"notifications/progress"}\n\n')).toBeUndefined();
    expect(oneResponseEvent('event: other\ndata: {"id":1,"result":{}}\n\n')).toBeUndefined();
    expect(oneResponseEvent('retry: 5\ndata: {"id":1,"result":{}}\n\n')).toBeUndefined();
    expect(oneResponseEvent('data: {"id":1,"result":{}}\r\n\r\n')).toBeUndefined();
    expect(oneResponseEvent("data: {nope\n\n")).toBeUndefined();
    expect(oneResponseEvent('data: {"id":1,"result":{}}\n')).toBeUndefined();
  });
});

describe("a kept-alive socket reset under a request", () => {
  /**
   * A server that answers each socket's first request and, like a server that crashed while handling
   * it, drops the socket under its second one (after reading it); what it saw is kept per body.
   */
  async function crashingOnSecond(): Promise<{ url: URL; seen: string[] }> {
    const seen: string[] = [];
    const served = new WeakMap<object, number>();
    const url = await serve(async (req, res) => {
      const body = await bodyOf(req);
      seen.push(body);
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count === 2) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"jsonrpc":"2.0","id":2,"result":{}}');
    });
    return { url, seen };
  }

  const call = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"charge_card"}}';
  const list = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';

  it("never sends a tools/call twice: the caller gets the failure", async () => {
    const { url, seen } = await crashingOnSecond();
    const fetch = client();
    expect((await fetch(url, { method: "POST", body: "{}", redirect: "manual" })).status).toBe(200);
    await expect(fetch(url, { method: "POST", body: call, redirect: "manual" })).rejects.toMatchObject({
      cause: { code: "ECONNRESET" },
    });
    expect(seen.filter((body) => body === call)).toHaveLength(1);
  });

  it("sends a read-only request once more on a fresh socket", async () => {
    const { url, seen } = await crashingOnSecond();
    const fetch = client();
    expect((await fetch(url, { method: "POST", body: "{}", redirect: "manual" })).status).toBe(200);
    const answer = await fetch(url, { method: "POST", body: list, redirect: "manual" });
    expect(await answer.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    expect(seen.filter((body) => body === list)).toHaveLength(2);
  });

  it("tells which requests are safe to repeat", () => {
    expect(safeToRepeat("GET", undefined)).toBe(true);
    expect(safeToRepeat("DELETE", undefined)).toBe(true);
    expect(safeToRepeat("PUT", "x")).toBe(false);
    expect(safeToRepeat("POST", list)).toBe(true);
    expect(safeToRepeat("POST", call)).toBe(false);
    expect(safeToRepeat("POST", '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}')).toBe(
      true,
    );
    expect(safeToRepeat("POST", '{"jsonrpc":"2.0","id":7,"result":{}}')).toBe(true);
    expect(safeToRepeat("POST", `[${list},${call}]`)).toBe(false);
    expect(safeToRepeat("POST", '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}')).toBe(false);
    expect(safeToRepeat("POST", "not json")).toBe(false);
    expect(safeToRepeat("POST", "null")).toBe(false);
  });
});

describe("nodeFetch post and held answers (the direct tools/call)", () => {
  const RESPONSE = '{"jsonrpc":"2.0","id":1,"result":{}}';

  it("post reads a 200 JSON answer whole; a held answer is served once to the fetch carrying its token", async () => {
    let requests = 0;
    const url = await serve(async (req, res) => {
      requests++;
      await bodyOf(req);
      expect(req.headers[HELD_ANSWER_HEADER]).toBeUndefined();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(RESPONSE);
    });
    const http = made();
    const answer = await http.post(url, { "x-a": "1" }, "{}", new AbortController().signal);
    expect(answer.json).toBe(RESPONSE);
    expect(requests).toBe(1);
    const token = http.hold("{}", answer.held);
    const init = () => ({
      method: "POST",
      body: "{}",
      redirect: "manual" as const,
      headers: new Headers({ [HELD_ANSWER_HEADER]: token }),
    });
    const held = await http.fetch(url, init());
    expect(held.status).toBe(200);
    expect(await held.text()).toBe(RESPONSE);
    expect(requests).toBe(1);
    // the token is used up: a request carrying it again (in any header form) fails, and is not sent
    await expect(http.fetch(url, init())).rejects.toThrow(/already answered/);
    await expect(
      http.fetch(url, { method: "POST", body: "{}", headers: { [HELD_ANSWER_HEADER]: token } }),
    ).rejects.toThrow(/already answered/);
    await expect(
      http.fetch(url, { method: "POST", body: "{}", headers: [["X-MCP-File-Bridge-Held-Answer", token]] }),
    ).rejects.toThrow(/already answered/);
    expect(requests).toBe(1);
    // a request without one is sent as usual
    expect(await (await http.fetch(url, { method: "POST", body: "{}" })).text()).toBe(RESPONSE);
    expect(requests).toBe(2);
  });

  it("a held answer is refused to a request with another body; release destroys an unused one", async () => {
    const url = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(500, { "content-type": "text/plain" });
      res.write("part");
    });
    const http = made();
    const answer = await http.post(url, {}, "{}", new AbortController().signal);
    expect(answer.json).toBeUndefined();
    const token = http.hold("{}", answer.held);
    const headers = new Headers({ [HELD_ANSWER_HEADER]: token });
    await expect(
      http.fetch(url, { method: "POST", body: "{ }", redirect: "manual", headers }),
    ).rejects.toThrow(/not the one sent/);
    const other = await http.post(url, {}, "{}", new AbortController().signal);
    const unused = http.hold("{}", other.held);
    http.release(unused);
    await expect(other.held.response(() => undefined).text()).rejects.toThrow();
  });

  it("holdBody (SDK v1): served once to the fetch with that body, nothing sent; a guard refuses other POSTs until dropped", async () => {
    let requests = 0;
    const url = await serve(async (req, res) => {
      requests++;
      await bodyOf(req);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(RESPONSE);
    });
    const http = made();
    const body = '{"method":"tools/call","params":{"name":"t"},"jsonrpc":"2.0","id":7}';
    const answer = await http.post(url, {}, body, new AbortController().signal);
    expect(requests).toBe(1);
    const hold = http.holdBody(body, answer.held);
    const post = (text: string) => http.fetch(url, { method: "POST", body: text, redirect: "manual" });
    // another request goes out as usual while the hold is not guarded
    expect((await post("{}")).status).toBe(200);
    expect(requests).toBe(2);
    hold.guard();
    // guarded: any other POST fails instead of going out (a tools/call is never sent twice)
    await expect(post(body.replace('"id":7', '"id":8'))).rejects.toThrow(/not the one sent/);
    expect(requests).toBe(2);
    // the request with the held body is answered from what arrived, once
    expect(await (await post(body)).text()).toBe(RESPONSE);
    expect(requests).toBe(2);
    hold.drop();
    expect(await (await post(body)).text()).toBe(RESPONSE);
    expect(requests).toBe(3);
  });

  it("holdBody: a dropped answer no one took is destroyed, and its body goes out again as a new request", async () => {
    let requests = 0;
    const url = await serve(async (req, res) => {
      requests++;
      await bodyOf(req);
      res.writeHead(500, { "content-type": "text/plain" });
      res.write("part");
    });
    const http = made();
    const answer = await http.post(url, {}, "{}", new AbortController().signal);
    const hold = http.holdBody("{}", answer.held);
    hold.guard();
    hold.drop();
    await expect(answer.held.response(() => undefined).text()).rejects.toThrow();
    // the guard went with it
    const next = http.fetch(url, { method: "POST", body: "{ }", redirect: "manual" });
    expect((await next).status).toBe(500);
    expect(requests).toBe(2);
  });

  it("post rejects with the abort reason, and with fetch failed when nothing listens", async () => {
    const url = await serve(() => undefined);
    const http = made();
    const controller = new AbortController();
    const pending = http.post(url, {}, "{}", controller.signal);
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
    server?.close();
    server?.closeAllConnections();
    await expect(http.post(url, {}, "{}", new AbortController().signal)).rejects.toMatchObject({
      message: "fetch failed",
    });
  });
});
