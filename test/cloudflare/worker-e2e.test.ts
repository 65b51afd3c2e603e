/**
 * examples/cloudflare-worker end to end, in workerd (miniflare, local R2 and Durable Objects): the
 * real MCP SDK `Client` over Streamable HTTP on 127.0.0.1 talks to the example's `McpAgent`, files
 * go up through the example's file routes as a single request and as tus 1.0 (a client written here
 * from the tus 1.0 text), tools read their exact bytes, an artifact's signed URL serves the exact
 * bytes and byte ranges; another user's handle and session are refused exactly like unknown ones;
 * a single-use upload URL works once under concurrent claims.
 */
import { createHash, randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bundleExample,
  type ExampleWorker,
  installExampleDependencies,
  startExampleWorker,
} from "./example-worker.js";

const ALICE = `alice-${randomBytes(12).toString("hex")}`;
const BOB = `bob-${randomBytes(12).toString("hex")}`;

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

interface Ticket {
  upload_url: string;
  handle: string;
  field: string;
}

let worker: ExampleWorker;
const clients: Client[] = [];

async function connect(token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "worker-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${worker.origin}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

async function ticketFor(client: Client): Promise<Ticket> {
  const result = await call(client, "get_upload_url", {});
  expect(result.isError).toBeFalsy();
  const ticket = result.structuredContent as unknown as Ticket;
  expect(ticket.handle).toMatch(/^upload:\/\//);
  return ticket;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function formUpload(ticket: Ticket, bytes: Uint8Array, name: string): Promise<Response> {
  const form = new FormData();
  form.append(ticket.field, new Blob([new Uint8Array(bytes)], { type: "application/octet-stream" }), name);
  return fetch(ticket.upload_url, { method: "POST", body: form });
}

/** The code of a tool's error result (`Error CODE: …`, the library's tool error text). */
function errorCode(result: ToolResult): string | undefined {
  return /^Error ([A-Z_]+):/.exec(result.content[0]?.text ?? "")?.[1];
}

let alice: Client;
let bob: Client;

// The example's own dependencies, installed once (first run: about 10 s); skipped only when the
// npm registry cannot be reached.
const installed = await installExampleDependencies();
if (installed.skip) console.warn(`worker-e2e skipped: ${installed.skip}`);

beforeAll(async () => {
  if (!installed.dir) return;
  const script = await bundleExample(installed.dir);
  worker = await startExampleWorker(script, {
    SIGNING_SECRET: randomBytes(32).toString("hex"),
    USER_TOKENS: `${ALICE}=alice,${BOB}=bob`,
  });
  alice = (await connect(ALICE)).client;
  bob = (await connect(BOB)).client;
}, 300_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await worker?.dispose();
});

describe.skipIf(!installed.dir)(
  "examples/cloudflare-worker on workerd (McpAgent, r2Store, durableObjectState)",
  () => {
    it("refuses /mcp without a known bearer token", async () => {
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      };
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      const none = await fetch(`${worker.origin}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify(init),
      });
      expect(none.status).toBe(401);
      const wrong = await fetch(`${worker.origin}/mcp`, {
        method: "POST",
        headers: { ...headers, authorization: `Bearer ${ALICE}x` },
        body: JSON.stringify(init),
      });
      expect(wrong.status).toBe(401);
    });

    it("a single-request upload: the tool reads the exact bytes", async () => {
      const ticket = await ticketFor(alice);
      const bytes = randomBytes(300_000);
      const uploaded = await formUpload(ticket, bytes, "data.bin");
      expect(uploaded.status).toBe(201);
      const described = await call(alice, "describe_file", { file: ticket.handle });
      expect(described.isError).toBeFalsy();
      expect(described.structuredContent).toMatchObject({
        name: "data.bin",
        size: bytes.byteLength,
        sha256: sha256(bytes),
      });
    });

    it("a tus 1.0 upload in three PATCHes (HEAD between): the tool reads the exact bytes", async () => {
      const ticket = await ticketFor(alice);
      const endpoint = ticket.upload_url.replace("/files/upload/", "/files/tus/");
      const bytes = randomBytes(200_000);
      const options = await fetch(endpoint, { method: "OPTIONS" });
      expect(options.headers.get("tus-version")?.split(",")).toContain("1.0.0");
      const created = await fetch(endpoint, {
        method: "POST",
        headers: {
          "tus-resumable": "1.0.0",
          "upload-length": String(bytes.byteLength),
          "upload-metadata": `filename ${Buffer.from("tus.bin").toString("base64")}`,
        },
      });
      expect(created.status).toBe(201);
      const location = new URL(created.headers.get("location") as string, endpoint).href;
      let final: Response | undefined;
      for (const [from, to] of [
        [0, 70_000],
        [70_000, 140_000],
        [140_000, 200_000],
      ] as const) {
        const head = await fetch(location, { method: "HEAD", headers: { "tus-resumable": "1.0.0" } });
        expect(head.status).toBe(200);
        expect(head.headers.get("upload-offset")).toBe(String(from));
        final = await fetch(location, {
          method: "PATCH",
          headers: {
            "tus-resumable": "1.0.0",
            "upload-offset": String(from),
            "content-type": "application/offset+octet-stream",
          },
          body: bytes.subarray(from, to),
        });
        expect(final.status).toBe(204);
        expect(final.headers.get("upload-offset")).toBe(String(to));
      }
      expect(final?.headers.get("upload-handle")).toBe(ticket.handle);
      const described = await call(alice, "describe_file", { file: ticket.handle });
      expect(described.isError).toBeFalsy();
      expect(described.structuredContent).toMatchObject({
        name: "tus.bin",
        size: bytes.byteLength,
        sha256: sha256(bytes),
      });
    });

    it("an artifact's signed URL downloads the exact bytes, whole and by ranges (206, suffix, 416)", async () => {
      const ticket = await ticketFor(alice);
      const bytes = randomBytes(50_000);
      expect((await formUpload(ticket, bytes, "in.bin")).status).toBe(201);
      const reversed = await call(alice, "reverse_file", { file: ticket.handle });
      expect(reversed.isError).toBeFalsy();
      expect(reversed.content.some((block) => block.type === "resource_link")).toBe(true);
      const url = reversed._meta?.download_url as string;
      expect(url.startsWith(`${worker.origin}/files/download/`)).toBe(true);
      const expected = Buffer.from(bytes).reverse();

      const whole = await fetch(url);
      expect(whole.status).toBe(200);
      expect(whole.headers.get("accept-ranges")).toBe("bytes");
      expect(Buffer.from(await whole.arrayBuffer()).equals(expected)).toBe(true);

      const middle = await fetch(url, { headers: { range: "bytes=1000-20999" } });
      expect(middle.status).toBe(206);
      expect(middle.headers.get("content-range")).toBe("bytes 1000-20999/50000");
      expect(Buffer.from(await middle.arrayBuffer()).equals(expected.subarray(1000, 21000))).toBe(true);

      const suffix = await fetch(url, { headers: { range: "bytes=-777" } });
      expect(suffix.status).toBe(206);
      expect(suffix.headers.get("content-range")).toBe("bytes 49223-49999/50000");
      expect(Buffer.from(await suffix.arrayBuffer()).equals(expected.subarray(50_000 - 777))).toBe(true);

      const beyond = await fetch(url, { headers: { range: "bytes=50000-" } });
      expect(beyond.status).toBe(416);
      expect(beyond.headers.get("content-range")).toBe("bytes */50000");
      await beyond.arrayBuffer();
    });

    it("another user's handle is refused exactly like an unknown one", async () => {
      const ticket = await ticketFor(alice);
      expect((await formUpload(ticket, randomBytes(1000), "secret.bin")).status).toBe(201);
      // Alice can read it; Bob, holding the very handle, cannot.
      expect((await call(alice, "describe_file", { file: ticket.handle })).isError).toBeFalsy();
      const foreign = await call(bob, "describe_file", { file: ticket.handle });
      const unknownHandle = `${ticket.handle.slice(0, -6)}zzzzzz`;
      const unknown = await call(bob, "describe_file", { file: unknownHandle });
      expect(foreign.isError).toBe(true);
      expect(unknown.isError).toBe(true);
      expect(errorCode(foreign)).toBeDefined();
      expect(errorCode(foreign)).toBe(errorCode(unknown));
      const shape = (result: ToolResult, handle: string) =>
        JSON.stringify(result.content).replaceAll(handle, "<handle>");
      expect(shape(foreign, ticket.handle)).toBe(shape(unknown, unknownHandle));
      expect(foreign.structuredContent).toEqual(unknown.structuredContent);
    });

    it("another user's MCP session id is refused exactly like an unknown one", async () => {
      const { transport } = await connect(ALICE);
      const sessionId = transport.sessionId as string;
      expect(sessionId).toBeTruthy();
      const list = (token: string, session: string) =>
        fetch(`${worker.origin}/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-06-18",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
        });
      const own = await list(ALICE, sessionId);
      expect(own.status).toBe(200);
      await own.text();
      const foreign = await list(BOB, sessionId);
      const unknown = await list(BOB, `${"0".repeat(sessionId.length)}`);
      expect(foreign.status).toBe(404);
      expect(unknown.status).toBe(foreign.status);
      expect(await foreign.text()).toBe(await unknown.text());
    });

    it("a single-use upload URL works exactly once under 12 concurrent uploads", async () => {
      const ticket = await ticketFor(alice);
      // Open the connections first (each new one takes a while here), so the uploads reach the Worker
      // together and their claims really overlap.
      await Promise.all(
        Array.from({ length: 12 }, async () => (await fetch(`${worker.origin}/warm-up`)).arrayBuffer()),
      );
      const bodies = Array.from({ length: 12 }, () => randomBytes(20_000));
      // Raw PUTs (the body as it is, no form to parse): every upload reaches its claim at once.
      const answers = await Promise.all(
        bodies.map((bytes, i) =>
          fetch(ticket.upload_url, {
            method: "PUT",
            headers: {
              "content-type": "application/octet-stream",
              "content-disposition": `attachment; filename="race-${i}.bin"`,
            },
            body: new Uint8Array(bytes),
          }),
        ),
      );
      for (const answer of answers) await answer.arrayBuffer();
      const won = answers.map((answer, i) => [answer.status, i] as const).filter(([status]) => status < 300);
      expect(won.length).toBe(1);
      for (const answer of answers)
        if (answer.status >= 300) expect(answer.status).toBeGreaterThanOrEqual(400);
      const winner = (won[0] as readonly [number, number])[1];
      const described = await call(alice, "describe_file", { file: ticket.handle });
      expect(described.structuredContent).toMatchObject({ sha256: sha256(bodies[winner] as Uint8Array) });
      const again = await formUpload(ticket, randomBytes(10), "late.bin");
      expect(again.status).toBeGreaterThanOrEqual(400);
    });
  },
);
