/**
 * The Node side of the downstream hop (src/proxy/sdk/downstream/node-glue.ts) on a real node:http
 * server: a one-event answer goes out whole with its length, a stream that stays open still delivers
 * each event before the next exists, a GET stream's headers go at once, and a client that goes away
 * cancels the body.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  readJsonBody,
  webRequest,
  writeWebResponse,
} from "../../../../src/proxy/sdk/downstream/node-glue.js";

let server: Server | undefined;

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const SSE = { "content-type": "text/event-stream" };

describe("writeWebResponse", () => {
  it("sends a body that ends in the turn it started as one answer with its length", async () => {
    const url = await serve((_req, res) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("event: message\n"));
          controller.enqueue(new TextEncoder().encode('data: {"id":1}\n\n'));
          controller.close();
        },
      });
      void writeWebResponse(new Response(body, { status: 200, headers: SSE }), res);
    });
    const response = await fetch(url);
    expect(response.headers.get("content-length")).toBe("31");
    expect(response.headers.get("transfer-encoding")).toBeNull();
    expect(await response.text()).toBe('event: message\ndata: {"id":1}\n\n');
  });

  it("delivers each event of a stream that stays open before the next one exists", async () => {
    let next: (text: string) => void = () => undefined;
    let end: () => void = () => undefined;
    const url = await serve((_req, res) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          next = (text) => controller.enqueue(new TextEncoder().encode(text));
          end = () => controller.close();
        },
      });
      void writeWebResponse(new Response(body, { status: 200, headers: SSE }), res);
      next("data: progress\n\n");
    });
    const response = await fetch(url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: progress\n\n");
    next("data: result\n\n");
    end();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: result\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("sends a GET stream's headers at once, and cancels the body when the client goes away", async () => {
    let cancelled: (reason: unknown) => void = () => undefined;
    const gone = new Promise((resolve) => {
      cancelled = resolve;
    });
    const url = await serve((_req, res) => {
      const body = new ReadableStream<Uint8Array>({ cancel: (reason) => cancelled(reason ?? "cancelled") });
      void writeWebResponse(new Response(body, { status: 200, headers: SSE }), res, true);
    });
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    controller.abort();
    await expect(gone).resolves.toBeDefined();
  });

  it("answers a body-less response with its status and headers", async () => {
    const url = await serve((_req, res) => {
      void writeWebResponse(new Response(null, { status: 202, headers: { "mcp-session-id": "s" } }), res);
    });
    const response = await fetch(url, { method: "POST", body: "{}" });
    expect(response.status).toBe(202);
    expect(response.headers.get("mcp-session-id")).toBe("s");
  });
});

describe("readJsonBody and webRequest", () => {
  function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(url, { method: "POST", headers }, (res) => {
        res.resume();
        res.once("end", resolve);
      });
      req.once("error", reject);
      req.end(body);
    });
  }

  it("parses a JSON POST that accepts both reply types, and leaves the others to the SDK", async () => {
    const seen: unknown[] = [];
    const url = await serve(async (req, res) => {
      const body = await readJsonBody(req, req.headers["x-need-length"] === "1");
      const web = webRequest(req, body === undefined);
      seen.push({ body, method: web?.method, accept: web?.headers.get("accept") });
      res.end();
    });
    const both = "application/json, text/event-stream";
    await post(url, '{"a":1}', { "content-type": "application/json", accept: both });
    await post(url, "{nope", { "content-type": "application/json", accept: both });
    await post(url, '{"a":1}', { "content-type": "application/json", accept: "application/json" });
    await post(url, '{"a":1}', { "content-type": "text/plain", accept: both });
    expect(seen).toEqual([
      { body: { parsed: { a: 1 } }, method: "POST", accept: both },
      {
        body: { status: 400, code: -32700, message: "Parse error: Invalid JSON", text: "{nope" },
        method: "POST",
        accept: both,
      },
      { body: undefined, method: "POST", accept: "application/json" },
      { body: undefined, method: "POST", accept: both },
    ]);
  });
});
