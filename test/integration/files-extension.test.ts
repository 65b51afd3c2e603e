/**
 * The files extension (SEP-2631 draft + the Codex CLI variant) over real HTTP on 127.0.0.1, with a
 * client written from the draft's text (test/support/draft-files-client.ts): SDK v1 and v2 servers,
 * SDK v1 and v2 clients, the 2025 era (sessions) and 2026-07-28 (stateless).
 */
import { createHash, randomBytes } from "node:crypto";
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpTransport,
} from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpServer as V1McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { McpServer as V2McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { serveHttp } from "../../examples/shared/serve-http.js";
import { serveHttpV2, staticTokens } from "../../examples/shared/serve-http-v2.js";
import { toHost } from "../../src/mcp/to-host.js";
import { defaultScope } from "../../src/scope/scope.js";
import {
  type FilesApp,
  filesApp,
  newV1Server,
  newV2Server,
  rpcError,
  TOKENS,
  type ToolResult,
} from "../mcp/v2/harness.js";
import {
  DRAFT_CLIENT_CAPABILITY,
  draftDigest,
  draftFiles,
  fetchBytes,
  type RequestingClient,
  sendBytes,
  sha256Hex,
  verifyFile,
} from "../support/draft-files-client.js";

type ClientKind = "v1" | "v2-legacy" | "v2-modern";
interface Setup {
  name: string;
  server: "v1" | "v2";
  legacy?: "stateless" | "sessions";
  client: ClientKind;
}

interface Connected extends RequestingClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  getServerCapabilities(): { extensions?: Record<string, unknown> } | undefined;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function connect(
  kind: ClientKind,
  url: URL,
  token: string | undefined,
  capabilities: Record<string, unknown> = DRAFT_CLIENT_CAPABILITY,
): Promise<Connected> {
  const requestInit = token ? { headers: { authorization: `Bearer ${token}` } } : undefined;
  let client: Connected;
  if (kind === "v1") {
    const v1 = new V1Client({ name: "draft-v1", version: "1.0.0" }, { capabilities });
    await v1.connect(new V1HttpTransport(url, requestInit ? { requestInit } : {}));
    client = v1 as unknown as Connected;
  } else {
    const v2 = new V2Client({ name: `draft-${kind}`, version: "1.0.0" }, {
      capabilities,
      ...(kind === "v2-modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
    } as never);
    await v2.connect(new V2HttpTransport(url, requestInit ? { requestInit } : {}));
    expect(v2.getProtocolEra()).toBe(kind === "v2-modern" ? "modern" : "legacy");
    client = v2 as unknown as Connected;
  }
  cleanups.push(() => client.close());
  return client;
}

/** The app's pieces plus a `make_report` tool that stores a file and returns `registry.link()` for the caller's client. */
function mountWithReport<S extends V1McpServer | V2McpServer>(app: FilesApp, server: S): S {
  app.mount(server);
  (server as V1McpServer).registerTool("make_report", { description: "Writes a report" }, async (extra) => {
    const ctx = toHost(server).requestContext?.(extra);
    if (!ctx) throw new Error("no request context");
    const scope = defaultScope(ctx.extra);
    const file = await app.registry.add(Buffer.from(REPORT), { scope, name: "report.txt", kind: "artifact" });
    const linked = await app.registry.link(file, { scope, clientCapabilities: ctx.clientCapabilities });
    return linked as never;
  });
  return server;
}

const REPORT = "the report\n";

/** The pieces on a server of `setup.server`, with the files extension on. */
async function serve(setup: Setup): Promise<{ app: FilesApp; url: URL; auth: boolean }> {
  const app = await filesApp({ files: true });
  cleanups.push(() => app.close());
  if (setup.server === "v1") {
    const http = await serveHttp({
      createServer: () => mountWithReport(app, newV1Server()),
      routes: app.routes,
    });
    app.setOrigin(http.url);
    cleanups.push(() => http.close());
    return { app, url: http.mcpUrl, auth: false };
  }
  const http = await serveHttpV2({
    createServer: () => mountWithReport(app, newV2Server()),
    routes: app.routes,
    authenticate: staticTokens(TOKENS),
    legacy: setup.legacy ?? "stateless",
  });
  app.setOrigin(http.url);
  cleanups.push(() => http.close());
  return { app, url: http.mcpUrl, auth: true };
}

const SETUPS: Setup[] = [
  { name: "SDK v1 server (2025 sessions), SDK v1 client", server: "v1", client: "v1" },
  { name: "SDK v1 server (2025 sessions), SDK v2 client", server: "v1", client: "v2-legacy" },
  { name: "SDK v2 server (2026-07-28 stateless), SDK v2 client", server: "v2", client: "v2-modern" },
  {
    name: "SDK v2 server (2025 sessions), SDK v2 client",
    server: "v2",
    legacy: "sessions",
    client: "v2-legacy",
  },
  { name: "SDK v2 server (2025 sessions), SDK v1 client", server: "v2", legacy: "sessions", client: "v1" },
];

describe.each(SETUPS)("files extension: $name", (setup) => {
  async function clients() {
    const { url, auth } = await serve(setup);
    const alice = await connect(setup.client, url, auth ? "token-alice" : undefined);
    const bob = await connect(setup.client, url, auth ? "token-bob" : undefined);
    return { alice, bob };
  }

  it("authorizes, uploads, runs a tool on the URI, and downloads by authorizeDownload with the digest verified", async () => {
    const { alice } = await clients();
    const advertised = alice.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/files"];
    expect(advertised).toMatchObject({ authorizeUpload: true, authorizeDownload: true });
    const files = draftFiles(alice);
    const bytes = randomBytes(150_000);
    const digest = draftDigest(bytes);
    const { file, upload } = await files.authorizeUpload({
      name: "data.bin",
      mimeType: "application/octet-stream",
      size: bytes.length,
      digest,
    });
    expect(upload).toMatchObject({ transport: "https", method: "PUT" });
    // The echo is the draft's encoding (what the client sent), not a re-encoding.
    expect(file.digest).toEqual(digest);
    expect(Date.parse(upload.expiresAt as string)).toBeGreaterThan(Date.now());
    expect(file.uri).not.toContain("alice");
    const put = await sendBytes(upload, bytes);
    expect(put.status).toBe(201);

    const result = (await alice.callTool({
      name: "concat",
      arguments: { files: [file.uri, file.uri] },
    })) as ToolResult;
    expect(result.isError).toBeFalsy();
    const joined = await fetch(result._meta?.download_url as string);
    expect(sha256Hex(new Uint8Array(await joined.arrayBuffer()))).toBe(
      sha256Hex(Buffer.concat([bytes, bytes])),
    );

    const { file: again, download } = await files.authorizeDownload(file.uri);
    expect(again).toEqual({
      uri: file.uri,
      name: "data.bin",
      mimeType: "application/octet-stream",
      size: bytes.length,
      digest,
    });
    expect(download.method).toBe("GET");
    const got = await fetchBytes(download);
    expect(() => verifyFile(again, got)).not.toThrow();
    expect(Buffer.from(got).equals(bytes)).toBe(true);
  });

  it("refuses another user's URI exactly like an unknown one, on every method", async () => {
    const { alice, bob } = await clients();
    const bytes = randomBytes(1000);
    const { file, upload } = await draftFiles(alice).authorizeUpload({ name: "a.bin", size: bytes.length });
    expect((await sendBytes(upload, bytes)).status).toBe(201);
    const unknown = `${file.uri.slice(0, file.uri.lastIndexOf("/") + 1)}01JUNKNOWNUNKNOWNUNKNOWN00`;
    const theirs = draftFiles(bob);
    for (const method of ["authorizeDownload", "getDownload", "completeUpload"] as const) {
      const stolen = await rpcError(theirs[method](file.uri));
      const missing = await rpcError(theirs[method](unknown));
      expect(stolen.code).toBe(-32602);
      expect(stolen.data).toMatchObject({ reason: "fileNotFound", code: "NOT_FOUND" });
      expect({ ...(stolen.data as object), uri: "" }).toEqual({ ...(missing.data as object), uri: "" });
    }
    const tool = (await bob.callTool({ name: "concat", arguments: { files: [file.uri] } })) as ToolResult;
    expect(tool.isError).toBe(true);
  });

  it("refuses a body whose digest or size is not the declared one, and stores nothing", async () => {
    const { alice } = await clients();
    const files = draftFiles(alice);
    const bytes = randomBytes(4000);
    const declared = draftDigest(randomBytes(4000));
    const wrongDigest = await files.authorizeUpload({ name: "a.bin", size: bytes.length, digest: declared });
    const refused = await sendBytes(wrongDigest.upload, bytes);
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error: { reason: string } }).error.reason).toBe("digestMismatch");
    expect((await rpcError(files.completeUpload(wrongDigest.file.uri))).data).toMatchObject({
      reason: "fileNotFound",
    });

    const wrongSize = await files.authorizeUpload({ name: "b.bin", size: 100 });
    const tooLong = await sendBytes(wrongSize.upload, bytes);
    expect(tooLong.status).toBe(413);
    expect(((await tooLong.json()) as { error: { reason: string } }).error.reason).toBe("maxSizeExceeded");
    const tooShort = await sendBytes(wrongSize.upload, bytes.subarray(0, 50));
    expect(tooShort.status).toBe(400);
    expect(((await tooShort.json()) as { error: { reason: string } }).error.reason).toBe("sizeMismatch");
    // The ticket was not used up by the refusals: the right bytes still go through.
    expect((await sendBytes(wrongSize.upload, bytes.subarray(0, 100))).status).toBe(201);
    expect((await files.completeUpload(wrongSize.file.uri)).file.size).toBe(100);
  });

  it("refuses text uploaded under a declared image/png on its bytes (415 mimeTypeNotAccepted), stores nothing", async () => {
    const { alice } = await clients();
    const files = draftFiles(alice);
    const text = Buffer.from("plain text, not an image.\n".repeat(20));
    const declared = await files.authorizeUpload({ name: "p.png", mimeType: "image/png", size: text.length });
    const refused = await sendBytes(declared.upload, text);
    expect(refused.status).toBe(415);
    expect(((await refused.json()) as { error: { reason: string } }).error.reason).toBe(
      "mimeTypeNotAccepted",
    );
    expect((await rpcError(files.completeUpload(declared.file.uri))).data).toMatchObject({
      reason: "fileNotFound",
    });
  });

  it("takes a declared digest in hex, base64 or base64url and answers in unpadded base64url", async () => {
    const { alice } = await clients();
    const files = draftFiles(alice);
    const bytes = randomBytes(300);
    const sha = createHash("sha256").update(bytes).digest();
    for (const value of [sha.toString("hex"), sha.toString("base64"), sha.toString("base64url")]) {
      const { file, upload } = await files.authorizeUpload({
        name: "d.bin",
        size: bytes.length,
        digest: { algorithm: "sha-256", value },
      });
      expect(file.digest).toEqual(draftDigest(bytes));
      expect((await sendBytes(upload, bytes)).status).toBe(201);
      const { file: offered, download } = await files.authorizeDownload(file.uri);
      const got = await fetchBytes(download);
      expect(() => verifyFile(offered, got)).not.toThrow();
    }
  });

  it("refuses declarations over the limits with the draft's reasons", async () => {
    const { alice } = await clients();
    const files = draftFiles(alice);
    const big = await rpcError(files.authorizeUpload({ name: "big.bin", size: 4 * 1024 * 1024 + 1 }));
    expect(big.code).toBe(-32602);
    expect(big.data).toMatchObject({
      reason: "maxSizeExceeded",
      maxSize: 4 * 1024 * 1024,
      actualSize: 4 * 1024 * 1024 + 1,
    });
    const algorithm = await rpcError(files.authorizeUpload({ digest: { algorithm: "md5", value: "00" } }));
    expect(algorithm.data).toMatchObject({ reason: "unsupportedDigestAlgorithm" });
  });

  it("serves the Codex variant: prepareUpload → PUT → completeUpload → getDownload", async () => {
    const { alice } = await clients();
    const files = draftFiles(alice);
    const bytes = Buffer.from("variant bytes\n");
    const { file, transfer } = await files.prepareUpload({
      name: "v.txt",
      mimeType: "text/plain",
      size: bytes.length,
    });
    expect(transfer.method).toBe("PUT");
    expect((await rpcError(files.completeUpload(file.uri))).data).toMatchObject({ reason: "fileNotFound" });
    expect((await sendBytes(transfer, bytes)).status).toBe(201);
    const completed = await files.completeUpload(file.uri);
    expect(completed.file).toMatchObject({ uri: file.uri, size: bytes.length, digest: draftDigest(bytes) });
    expect(() => verifyFile(completed.file, bytes)).not.toThrow();
    const { file: offered, transfer: download } = await files.getDownload(file.uri);
    const got = await fetchBytes(download);
    expect(() => verifyFile(offered, got)).not.toThrow();
    expect(Buffer.from(got).toString()).toBe("variant bytes\n");
  });

  it("adds the output's FileValue to structuredContent for a client that declared files (in every era), and nothing for one that did not", async () => {
    const { url, auth } = await serve(setup);
    const alice = await connect(setup.client, url, auth ? "token-alice" : undefined);
    // The tool result as the draft's client reads it (its SDK's own schema does not know the file block).
    const loose = z.looseObject({
      content: z.array(z.looseObject({ type: z.string() })),
      structuredContent: z.looseObject({}).optional(),
    });
    const result = (await alice.request(
      { method: "tools/call", params: { name: "make_report", arguments: {} } },
      loose as never,
    )) as z.infer<typeof loose>;
    // No {type: "file"} block: both SDK generations' servers refuse an unknown block type in a result.
    expect(result.content.map((block) => block.type)).toEqual(["resource_link", "text"]);
    const value = (
      result.structuredContent as { file: { uri: string; digest: { algorithm: string; value: string } } }
    ).file;
    expect(value.digest).toEqual(draftDigest(Buffer.from(REPORT)));
    const { file: offered, download } = await draftFiles(alice).authorizeDownload(value.uri);
    const got = await fetchBytes(download);
    expect(() => verifyFile(value, got)).not.toThrow();
    expect(() => verifyFile(offered, got)).not.toThrow();

    const plain = await connect(setup.client, url, auth ? "token-bob" : undefined, {});
    const today = (await plain.callTool({ name: "make_report", arguments: {} })) as ToolResult;
    expect(today.content.map((block) => block.type)).toEqual(["resource_link", "text"]);
    expect(today.structuredContent).not.toHaveProperty("file");
  });
});
