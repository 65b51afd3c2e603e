import { randomBytes } from "node:crypto";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import type { UploadTicket } from "../../src/uploads/upload-handle-resolver.js";
import {
  connectRecording,
  encodingsOf,
  type RecordingClient,
  type ScopeServer,
  SECRET,
  startScopeServer,
  tokensIn,
} from "./scope-support.js";

// The references in URIs and handles are keyed by the server's secret: only its holder computes them.
const refsMinter = new SignedUrlMinter({ secret: SECRET, baseUrl: "http://127.0.0.1:9" });

// Attacks on a stateful Streamable HTTP server without transport auth, where the MCP session id is
// the scope and so a bearer credential:
// - client B tries to list, read and use client A's uploads and artifacts;
// - a third party holding one download link (and every URI and handle it saw) tries to turn
//   anything it holds into A's session id (`Mcp-Session-Id: …`) or another file.
// And the session id must appear in no URI, handle, tool text, upload reply or token payload.

interface UploadReply {
  files: Array<{ handle: string; uri: string; id: string; name: string }>;
}

type Block = { type: string; text?: string; uri?: string };

function textOf(result: object): string {
  return (((result as { content?: unknown }).content ?? []) as Block[])
    .map((block) => block.text ?? "")
    .join("\n");
}

async function rpcFailure(
  promise: Promise<unknown>,
): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, data: error.data as Record<string, unknown> };
    throw error;
  }
  throw new Error("expected the request to fail");
}

/** What client A ends up holding after an upload and a tool call, and what it was sent. */
interface Victim {
  a: RecordingClient;
  sessionId: string;
  ticket: UploadTicket;
  ticketText: string;
  replyText: string;
  reply: UploadReply;
  contents: Buffer[];
  artifact: { uri: string; downloadUrl: string; text: string };
}

describe("attack: another session, and a third party holding one link", () => {
  let app: ScopeServer;
  const open: RecordingClient[] = [];

  beforeEach(async () => {
    app = await startScopeServer();
  });
  afterEach(async () => {
    for (const { client } of open.splice(0)) await client.close().catch(() => undefined);
    await app.close();
  });

  async function session(): Promise<RecordingClient> {
    const client = await connectRecording(app.mcpUrl);
    open.push(client);
    return client;
  }

  /** Client A uploads two files with one ticket and copies the first into an artifact. */
  async function victim(): Promise<Victim> {
    const a = await session();
    const sessionId = a.transport.sessionId as string;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const ticketResult = await a.client.callTool({
      name: "get_upload_url",
      arguments: { filename: "q3.pdf" },
    });
    const ticket = ticketResult.structuredContent as UploadTicket;
    const contents = [Buffer.from(`A-PRIVATE-ONE-${randomBytes(8).toString("hex")}`), randomBytes(3000)];
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(contents[0] as Buffer)]), "one.txt");
    form.append("file", new Blob([new Uint8Array(contents[1] as Buffer)]), "two.bin");
    const uploaded = await fetch(ticket.upload_url, { method: "POST", body: form });
    expect(uploaded.status).toBe(201);
    const replyText = await uploaded.text();
    const reply = JSON.parse(replyText) as UploadReply;

    const copied = await a.client.callTool({ name: "copy", arguments: { file: reply.files[0]?.handle } });
    expect(copied.isError).toBeFalsy();
    const meta = copied._meta as { artifact_uri: string; download_url: string };
    return {
      a,
      sessionId,
      ticket,
      ticketText: JSON.stringify(ticketResult),
      replyText,
      reply,
      contents,
      artifact: { uri: meta.artifact_uri, downloadUrl: meta.download_url, text: JSON.stringify(copied) },
    };
  }

  it("the session id appears in no URI, handle, tool text, upload reply or token payload", async () => {
    const v = await victim();
    await v.a.client.listResources();
    for (const file of v.reply.files) await v.a.client.readResource({ uri: file.uri });
    const everything = [await v.a.received(), v.ticketText, v.replyText, v.artifact.text].join("\n");

    // Sanity: the handles and URIs are really in what we search, with the scope's reference.
    const ref = scopeRef(v.sessionId, refsMinter);
    expect(everything).toContain(`upload://sessions/${ref}/`);
    expect(everything).toContain(`file://uploads/${ref}/`);
    expect(everything).toContain(`artifact://sessions/${ref}/`);
    for (const form of encodingsOf(v.sessionId)) expect(everything).not.toContain(form);
    // Nor its hyphen-less form, nor any 8-character run of it.
    const bare = v.sessionId.replaceAll("-", "");
    for (let i = 0; i + 8 <= bare.length; i += 4)
      expect(everything.replaceAll("-", "")).not.toContain(bare.slice(i, i + 8));

    // Token payloads: the scope is sealed, not readable.
    const tokens = tokensIn(everything);
    expect(tokens.length).toBeGreaterThanOrEqual(2); // the upload ticket and the artifact download
    for (const { decoded } of tokens) {
      for (const form of encodingsOf(v.sessionId)) expect(decoded).not.toContain(form);
    }
  });

  it("client B cannot list, read, resolve or copy client A's files, and learns nothing from trying", async () => {
    const v = await victim();
    const b = await session();
    expect((await b.client.listResources()).resources).toEqual([]);

    const targets = [...v.reply.files.map((f) => f.uri), v.artifact.uri];
    for (const uri of targets) {
      const stolen = await rpcFailure(b.client.readResource({ uri }));
      // Exactly "not found": the same answer as for a URI that names nothing.
      const missing = await rpcFailure(
        b.client.readResource({ uri: uri.replace(/[^/]+$/, "nothing-here.txt") }),
      );
      expect(stolen.code).toBe(-32602);
      expect(stolen.data.code).toBe("NOT_FOUND");
      expect(Object.keys(stolen.data).sort()).toEqual(Object.keys(missing.data).sort());
      expect((await rpcFailure(b.client.subscribeResource({ uri }))).data.code).toBe("NOT_FOUND");
    }
    for (const input of [...targets, ...v.reply.files.map((f) => f.handle), v.ticket.handle]) {
      const copy = await b.client.callTool({ name: "copy", arguments: { file: input } });
      expect(copy.isError).toBe(true);
      expect(textOf(copy)).toContain("NOT_FOUND");
    }
    // A's URIs rewritten with B's own reference name B's scope, where A's files are not.
    const bRef = scopeRef(b.transport.sessionId as string, refsMinter);
    const aRef = scopeRef(v.sessionId, refsMinter);
    for (const uri of targets) {
      expect((await rpcFailure(b.client.readResource({ uri: uri.replace(aRef, bRef) }))).data.code).toBe(
        "NOT_FOUND",
      );
    }
    const received = await b.received();
    for (const content of v.contents) {
      expect(received).not.toContain(content.toString("latin1"));
      expect(received).not.toContain(content.toString("base64"));
    }
    // A still reads its own files.
    const own = await v.a.client.readResource({ uri: v.reply.files[0]?.uri as string });
    expect((own.contents[0] as { text?: string }).text).toBe(v.contents[0]?.toString());
  });

  it("a third party holding one download link opens that one file and nothing else", async () => {
    const v = await victim();
    // The link works: that one file.
    const download = await fetch(v.artifact.downloadUrl);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(v.contents[0] as Buffer)).toBe(true);

    // Everything the third party holds, and every piece it could derive a session id from.
    const held = [
      v.artifact.uri,
      v.artifact.downloadUrl,
      v.ticket.handle,
      ...v.reply.files.flatMap((f) => [f.uri, f.handle]),
    ];
    const token = v.artifact.downloadUrl.slice(v.artifact.downloadUrl.lastIndexOf("/") + 1);
    const candidates = new Set<string>([
      token,
      ...token.split("."),
      scopeRef(v.sessionId, refsMinter),
      ...v.reply.files.map((f) => f.id),
      ...held.flatMap((value) => value.split(/[/.?#=&]/)).filter((part) => part.length >= 8),
    ]);
    for (const { decoded } of tokensIn(v.artifact.downloadUrl)) {
      for (const value of decoded.match(/"[^"]{8,}"/g) ?? []) candidates.add(value.slice(1, -1));
    }
    expect(candidates.has(v.sessionId)).toBe(false);

    const leaked = (text: string) => v.contents.some((content) => text.includes(content.toString("latin1")));
    for (const candidate of candidates) {
      for (const request of [
        { method: "resources/read", params: { uri: v.reply.files[1]?.uri } },
        { method: "resources/list", params: {} },
        { method: "tools/call", params: { name: "copy", arguments: { file: v.reply.files[1]?.handle } } },
      ]) {
        const response = await fetch(app.mcpUrl, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-session-id": candidate.replace(/[^\x21-\x7e]/g, ""),
            "mcp-protocol-version": "2025-06-18",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...request }),
        });
        const body = await response.text();
        expect(response.status, `Mcp-Session-Id: ${candidate}`).toBeGreaterThanOrEqual(400);
        expect(leaked(body)).toBe(false);
      }
    }

    // The token cannot be bent to another file: any change is refused, and no file id fits into it.
    for (let i = 10; i < token.length; i += Math.ceil(token.length / 12)) {
      const flipped = token.slice(0, i) + (token[i] === "A" ? "B" : "A") + token.slice(i + 1);
      const bent = await fetch(`${app.origin}/files/download/${flipped}`);
      expect(bent.status).not.toBe(200);
      expect(leaked(await bent.text())).toBe(false);
    }
    expect((await fetch(`${app.origin}/files/download/${v.reply.files[1]?.id}`)).status).not.toBe(200);

    // Its own session: every URI and handle it holds is "not found".
    const thief = await session();
    for (const uri of held.filter((value) => !value.startsWith("http") && !value.startsWith("upload://"))) {
      expect((await rpcFailure(thief.client.readResource({ uri }))).data.code).toBe("NOT_FOUND");
    }
    for (const handle of held.filter((value) => value.startsWith("upload://"))) {
      const copy = await thief.client.callTool({ name: "copy", arguments: { file: handle } });
      expect(textOf(copy)).toContain("NOT_FOUND");
    }
    expect((await thief.client.listResources()).resources).toEqual([]);
    expect(leaked(await thief.received())).toBe(false);
  });
});
