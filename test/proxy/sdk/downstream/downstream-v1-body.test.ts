/**
 * The v1 endpoint reads JSON POST bodies itself (Node's stream, no web-stream conversion) and hands
 * them to SDK v1 as `parsedBody`: a real client works through it, and the refusals are the SDK's own.
 */
import { createServer, type Server as HttpServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpEndpoint } from "../../../../src/proxy/http-host.js";
import { v1Endpoint } from "../../../../src/proxy/sdk/downstream/v1/endpoint.js";

let http: HttpServer;
let endpoint: McpEndpoint;
let url: string;

beforeAll(async () => {
  endpoint = v1Endpoint(() => {
    const server = new Server({ name: "body", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: "echo", inputSchema: { type: "object" } }],
    }));
    return server;
  });
  http = createServer((req, res) => void endpoint.handle(req, res, undefined));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await endpoint.close();
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
});

const headers = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** A POST with a chunked body (no Content-Length), so only reading it can tell its size. */
function postChunked(parts: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    for (const part of parts) req.write(part);
    req.end();
  });
}

describe("v1 endpoint: JSON bodies read on Node's stream", () => {
  it("serves a real SDK client (initialize opens the session, later requests reuse it)", async () => {
    const client = new Client({ name: "t", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
    expect((await client.listTools()).tools).toHaveLength(1);
    expect(endpoint.sessions).toBe(1);
    await client.close();
  });

  it("answers invalid JSON with the SDK's 400 / -32700 and opens no session", async () => {
    const before = endpoint.sessions;
    const reply = await postChunked([Buffer.from('{"jsonrpc":"2.0",')]);
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toMatchObject({
      error: { code: -32700, message: "Parse error: Invalid JSON" },
    });
    expect(endpoint.sessions).toBe(before);
  });

  it("answers a body over 4 MiB with the SDK's 413, delivered (the rest is drained, not reset)", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const reply = await postChunked([Buffer.from("["), chunk, chunk, chunk, chunk, chunk, Buffer.from("]")]);
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ error: { code: -32000 } });
    expect(JSON.parse(reply.body).error.message).toMatch(/Payload Too Large/);
  });
});
