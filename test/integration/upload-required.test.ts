/**
 * The files extension revision Claude Code ships (issue 45), end to end on a real stateless SDK v2
 * server over Streamable HTTP on 127.0.0.1, 2026-07-28, with a client written from the revision's
 * rules (test/support/revision-files-client.ts): probe → tools/list → a call with descriptors →
 * `upload_required` → PUT → retry with `requestState` → the handler reads the exact bytes; the
 * refusals; two files; the download offer of an output.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/server";
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type RunningV2Server, serveHttpV2, staticTokens } from "../../examples/shared/serve-http-v2.js";
import {
  Artifacts,
  createFileRoutes,
  FileBridge,
  fileInput,
  fsStore,
  memoryState,
  type ResolvedFile,
  ResourceRegistry,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../src/index.js";
import { toNodeHandler } from "../../src/node/index.js";
import {
  classifyArgument,
  classifyTool,
  connectRevisionClient,
  descriptorOf,
  errorCode,
  FILES_KEY,
  type RevisionClient,
  sendTo,
  serverTakesFiles,
  sha256Base64url,
  uploadTargets,
} from "../support/revision-files-client.js";

const SECRET = "upload-required-secret-upload-required-0123";
const TOKENS = { "token-alice": "alice", "token-bob": "bob" } as const;

interface App {
  http: RunningV2Server;
  /** Each handler run: the bytes it read, per file. */
  runs: Buffer[][];
  dir: string;
}

let app: App;
const clients: RevisionClient[] = [];

async function start(options: { ttl?: "1s"; rateLimit?: () => boolean } = {}): Promise<App> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-upload-required-"));
  let origin = "http://127.0.0.1:1";
  const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: () => origin, state });
  const registry = new ResourceRegistry({ store, minter, notifyDelayMs: 10 });
  const bridge = new FileBridge({ tmpDir: join(dir, "tmp") });
  bridge.addResolver(registry.resolver());
  const uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    bridge,
    maxBytes: 4 * 1024 * 1024,
    ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
  });
  const artifacts = new Artifacts({ store, minter, registry, tmpDir: join(dir, "tmp") });
  const routes = toNodeHandler(createFileRoutes({ store, minter, state, registry }));
  const runs: Buffer[][] = [];
  const read = async (files: ResolvedFile[]) => {
    const bytes = await Promise.all(files.map((file) => file.bytes()));
    runs.push(bytes);
    const lines = files.map(
      (file, i) =>
        `${file.name} ${file.size} ${createHash("sha256")
          .update(bytes[i] as Buffer)
          .digest("hex")}`,
    );
    return { content: [{ type: "text" as const, text: lines.join("\n") }] };
  };
  const mount = () => {
    const server = new McpServer({ name: "upload-required", version: "1.0.0" });
    uploads.attach(server, { files: { uploadWait: "100ms" } });
    registry.attach(server);
    server.registerTool(
      "ingest",
      {
        description: "Reads one file",
        inputSchema: { document: fileInput({ marks: "object" }), note: z.string().optional() },
      },
      bridge.withFiles(async ({ document }) => read([document as unknown as ResolvedFile]), {
        fields: ["document"],
        pass: "file",
      }),
    );
    server.registerTool(
      "ingest_many",
      { description: "Reads files", inputSchema: { files: z.array(fileInput({ marks: "object" })) } },
      bridge.withFiles(async ({ files }) => read(files as unknown as ResolvedFile[]), {
        fields: ["files[]"],
        pass: "file",
      }),
    );
    server.registerTool(
      "legacy_marks",
      {
        description: "Reads one file",
        inputSchema: { document: fileInput(), pages: z.array(fileInput()).optional() },
      },
      bridge.withFiles(async ({ document }) => read([document as unknown as ResolvedFile]), {
        fields: ["document"],
        pass: "file",
      }),
    );
    server.registerTool(
      "make_report",
      { description: "Writes a report", inputSchema: { output: z.string().optional() } },
      artifacts.withArtifacts(
        async ({ output }) => {
          await writeFile(output as string, REPORT);
          return { content: [{ type: "text" as const, text: "Report written." }] };
        },
        { outputPathArg: "output", outputName: "report.txt" },
      ),
    );
    return server;
  };
  const http = await serveHttpV2({ createServer: mount, routes, authenticate: staticTokens(TOKENS) });
  origin = http.url;
  return { http, runs, dir };
}

const REPORT = Buffer.from("the quarterly report\n");

async function connect(token: keyof typeof TOKENS = "token-alice"): Promise<RevisionClient> {
  const client = await connectRevisionClient(app.http.mcpUrl, token);
  clients.push(client);
  return client;
}

/** A first call with descriptors, answered `upload_required`, checked as the client checks it. */
async function firstRound(
  client: RevisionClient,
  tool: string,
  args: Record<string, unknown>,
  fileIds: string[],
) {
  const answer = await client.call(tool, args);
  return uploadTargets(answer, fileIds);
}

beforeEach(async () => {
  app = await start();
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await app.http.close();
  await rm(app.dir, { recursive: true, force: true, maxRetries: 3 });
});

describe("the files extension revision Claude Code ships (upload_required)", () => {
  it("probe, tools/list, descriptors, upload_required, PUT, retry: the handler reads the exact bytes once", async () => {
    const client = await connect();
    // Probe: an `upload` object and no `revision` in the server's entry.
    expect(serverTakesFiles(client.serverCapabilities())).toBe(true);
    // …beside what the draft's and the variant's probes read, in the same entry.
    const extensions = client.serverCapabilities()?.extensions as Record<string, Record<string, unknown>>;
    const entry = extensions[FILES_KEY];
    expect(entry).toMatchObject({
      authorizeUpload: true,
      authorizeDownload: true,
      prepareUpload: true,
      getDownload: true,
    });
    // tools/list: the object mark is taken; today's marks (a string branch) are not.
    const { tools } = await client.client.listTools();
    const schemaOf = (name: string) =>
      tools.find((tool) => tool.name === name)?.inputSchema as Record<string, unknown>;
    const ingest = schemaOf("ingest");
    expect(classifyArgument((ingest.properties as Record<string, unknown>).document, ingest)).toEqual({
      kind: "file",
      list: false,
    });
    expect(classifyArgument((ingest.properties as Record<string, unknown>).note, ingest).kind).toBe(
      "unmarked",
    );
    const many = schemaOf("ingest_many");
    expect(classifyArgument((many.properties as Record<string, unknown>).files, many)).toEqual({
      kind: "file",
      list: true,
    });
    // The default fileInput() too: this client is shown the marks on the descriptor object only.
    const legacy = schemaOf("legacy_marks");
    expect(classifyTool(legacy).document).toEqual({ kind: "file", list: false });

    const bytes = randomBytes(70_000);
    const args = {
      document: descriptorOf("file-1", { bytes, name: "scan.bin", mimeType: "application/octet-stream" }),
      note: "n",
    };
    const { requestState, targets } = await firstRound(client, "ingest", args, ["file-1"]);
    expect(app.runs).toHaveLength(0);
    const [target] = targets;
    expect(target?.method).toBe("PUT");
    expect(target?.credentials).toBe("omit");
    expect(Date.parse(target?.expiresAt as string)).toBeGreaterThan(Date.now());
    // Opaque: no scope, no user, no path in the request state.
    expect(requestState).not.toMatch(/alice|upload:|\/|store/);
    expect((await sendTo(target as never, bytes, app.http.mcpUrl)).status).toBeLessThan(300);

    const done = await client.call("ingest", args, requestState);
    expect(done.isError).toBeFalsy();
    expect(done.resultType).toBe("complete");
    expect(app.runs).toHaveLength(1);
    expect(Buffer.compare(app.runs[0]?.[0] as Buffer, bytes)).toBe(0);
    expect((done.content as Array<{ text: string }>)[0]?.text).toContain(
      createHash("sha256").update(bytes).digest("hex"),
    );

    // Replay: refused, the handler does not run again.
    const replay = await client.call("ingest", args, requestState);
    expect(errorCode(replay)).toBe("TOKEN_ALREADY_USED");
    expect(app.runs).toHaveLength(1);
  });

  it("two files in one call: two targets, two uploads, one run with both files in order", async () => {
    const client = await connect();
    const one = Buffer.from("first file\n");
    const two = randomBytes(5000);
    const args = {
      files: [
        descriptorOf("file-1", { bytes: one, name: "a.txt", mimeType: "text/plain" }),
        descriptorOf("file-2", { bytes: two, name: "b.bin" }),
      ],
    };
    const { requestState, targets } = await firstRound(client, "ingest_many", args, ["file-1", "file-2"]);
    expect(targets.map((target) => target.fileId)).toEqual(["file-1", "file-2"]);
    expect(new Set(targets.map((target) => target.url)).size).toBe(2);
    await sendTo(targets[1] as never, two, app.http.mcpUrl);
    await sendTo(targets[0] as never, one, app.http.mcpUrl);
    const done = await client.call("ingest_many", args, requestState);
    expect(done.isError).toBeFalsy();
    expect(app.runs).toEqual([[one, two]]);
  });

  it("a wrong digest or a wrong size: the PUT is refused and nothing runs; the retry waits (input_required), bounded", async () => {
    const client = await connect();
    const bytes = Buffer.from("declared bytes\n");
    const args = { document: descriptorOf("file-1", { bytes, name: "d.txt", mimeType: "text/plain" }) };
    const { requestState, targets } = await firstRound(client, "ingest", args, ["file-1"]);
    const target = targets[0] as never;
    const otherSameSize = Buffer.from("DECLARED BYTES\n");
    const wrongDigest = await sendTo(target, otherSameSize, app.http.mcpUrl);
    expect(wrongDigest.status).toBe(422);
    expect(((await wrongDigest.json()) as { error: { code: string } }).error.code).toBe("DIGEST_MISMATCH");
    const wrongSize = await sendTo(target, Buffer.from("longer than declared\n"), app.http.mcpUrl);
    expect(wrongSize.status).toBeGreaterThanOrEqual(400);
    // The bytes never arrived: a state-only input_required, and the handler does not run.
    const waiting = await client.call("ingest", args, requestState);
    expect(waiting.resultType).toBe("input_required");
    expect(waiting.requestState).toBe(requestState);
    expect(waiting.inputRequests ?? {}).toEqual({});
    // Bounded: the client's own retries of the state-only answer end in TIMEOUT after 5 rounds.
    expect(client.rounds.map((round) => round.resultType)).toEqual([
      ...Array(5).fill("input_required"),
      "complete",
    ]);
    expect(errorCode(client.rounds.at(-1) as Record<string, unknown>)).toBe("TIMEOUT");
    expect(app.runs).toHaveLength(0);
    // The ticket is still good for the right bytes.
    expect((await sendTo(target, bytes, app.http.mcpUrl)).status).toBeLessThan(300);
    const done = await client.call("ingest", args, requestState);
    expect(done.isError).toBeFalsy();
    expect(app.runs).toEqual([[bytes]]);
  });

  it("a descriptor whose size or digest differs from the first round's does not open the request state", async () => {
    const client = await connect();
    const bytes = Buffer.from("abc");
    const args = { document: descriptorOf("file-1", { bytes, name: "a.txt" }) };
    const { requestState, targets } = await firstRound(client, "ingest", args, ["file-1"]);
    await sendTo(targets[0] as never, bytes, app.http.mcpUrl);
    const bigger = { document: { ...(args.document as object), size: 4 } };
    expect(errorCode(await client.call("ingest", bigger, requestState))).toBe("NOT_FOUND");
    const otherDigest = { document: descriptorOf("file-1", { bytes: Buffer.from("abd"), name: "a.txt" }) };
    expect(errorCode(await client.call("ingest", otherDigest, requestState))).toBe("NOT_FOUND");
    expect(app.runs).toHaveLength(0);
    // Still usable with the right descriptors.
    expect((await client.call("ingest", args, requestState)).isError).toBeFalsy();
  });

  it("another user's requestState is refused exactly like an unknown one, and stays usable by its owner", async () => {
    const alice = await connect("token-alice");
    const bob = await connect("token-bob");
    const bytes = Buffer.from("alice's file\n");
    const args = { document: descriptorOf("file-1", { bytes, name: "mine.txt" }) };
    const { requestState, targets } = await firstRound(alice, "ingest", args, ["file-1"]);
    await sendTo(targets[0] as never, bytes, app.http.mcpUrl);
    const stolen = await bob.call("ingest", args, requestState);
    const unknown = await bob.call("ingest", args, `mfbu1.${randomBytes(16).toString("base64url")}`);
    expect(errorCode(stolen)).toBe("NOT_FOUND");
    expect(stolen.content).toEqual(unknown.content);
    expect(app.runs).toHaveLength(0);
    expect((await alice.call("ingest", args, requestState)).isError).toBeFalsy();
    expect(app.runs).toEqual([[bytes]]);
  });

  it("zero-byte files get no target; a call of only empty files needs no round", async () => {
    const client = await connect();
    const empty = Buffer.alloc(0);
    const data = Buffer.from("some bytes");
    const args = {
      files: [
        descriptorOf("file-1", { bytes: empty, name: "empty.txt" }),
        descriptorOf("file-2", { bytes: data, name: "d.txt" }),
      ],
    };
    const { requestState, targets } = await firstRound(client, "ingest_many", args, ["file-2"]);
    expect(targets).toHaveLength(1);
    await sendTo(targets[0] as never, data, app.http.mcpUrl);
    // The bridge's own rule for empty files applies (allowEmpty is off by default).
    const done = await client.call("ingest_many", args, requestState);
    expect(errorCode(done)).toBe("EMPTY_FILE");
    const onlyEmpty = await client.call("ingest", { document: descriptorOf("file-1", { bytes: empty }) });
    expect(errorCode(onlyEmpty)).toBe("EMPTY_FILE");
    expect(app.runs).toHaveLength(0);
  });

  it("a client that did not declare the revision gets a tool error, not upload_required", async () => {
    const client = await connectRevisionClient(app.http.mcpUrl, "token-alice", {});
    clients.push(client);
    const answer = await client.call("ingest", {
      document: descriptorOf("file-1", { bytes: Buffer.from("x") }),
    });
    expect(answer.resultType).toBe("complete");
    expect(errorCode(answer)).toBe("UNSUPPORTED_INPUT");
  });

  it("an output carries the download offer: its URL gives the exact bytes, its digest is the sha-256 in base64url", async () => {
    const client = await connect();
    const result = await client.call("make_report", {});
    expect(result.isError).toBeFalsy();
    const offers = (
      (result._meta as Record<string, unknown>)[FILES_KEY] as { downloads: Array<Record<string, unknown>> }
    ).downloads;
    expect(offers).toHaveLength(1);
    const offer = offers[0] as {
      name: string;
      mimeType: string;
      size: number;
      digest: { algorithm: string; value: string };
      url: string;
      credentials: string;
    };
    expect(offer).toMatchObject({ name: "report.txt", size: REPORT.length, credentials: "omit" });
    expect(offer.mimeType).toMatch(/^text\/plain/);
    expect(offer.digest.algorithm).toBe("sha-256");
    expect(offer.digest.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(offer.digest.value, "base64url").toString("hex")).toBe(
      createHash("sha256").update(REPORT).digest("hex"),
    );
    const response = await fetch(offer.url, { credentials: "omit" });
    const body = Buffer.from(await response.arrayBuffer());
    expect(Buffer.compare(body, REPORT)).toBe(0);
    expect(sha256Base64url(body)).toBe(offer.digest.value);
    // Today's forms stay beside it.
    expect((result.content as Array<{ type: string }>).map((block) => block.type)).toContain("resource_link");
  });

  it("a client that declared no download gets no offer", async () => {
    const client = await connectRevisionClient(app.http.mcpUrl, "token-alice", {
      extensions: { [FILES_KEY]: { upload: {} } },
    });
    clients.push(client);
    const result = await client.call("make_report", {});
    expect((result._meta as Record<string, unknown> | undefined)?.[FILES_KEY]).toBeUndefined();
  });
});

describe("the default fileInput() (marks on the property, the uri branch and the descriptor)", () => {
  const schemaOf = async (client: RevisionClient, name: string) => {
    const { tools } = await client.client.listTools();
    return tools.find((tool) => tool.name === name)?.inputSchema as Record<string, unknown>;
  };
  const marksIn = (schema: unknown): number => JSON.stringify(schema).split('"x-mcp-file"').length - 1;

  it("is filled by the revision's client: object-only marks, upload_required, PUT, retry, exact bytes", async () => {
    const client = await connect();
    const legacy = await schemaOf(client, "legacy_marks");
    expect(classifyTool(legacy)).toMatchObject({
      document: { kind: "file", list: false },
      pages: { kind: "file", list: true },
    });
    // Strict validators accept what this client is shown.
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    // ajv-formats is CommonJS: its default export is the plugin under Node, `.default` for the types.
    const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (
      ajv: Ajv2020,
    ) => void;
    addFormats(ajv);
    ajv.addKeyword("x-mcp-file");
    expect(() => ajv.compile(legacy)).not.toThrow();

    const bytes = randomBytes(20_000);
    const args = { document: descriptorOf("file-1", { bytes, name: "scan.bin" }) };
    const { requestState, targets } = await firstRound(client, "legacy_marks", args, ["file-1"]);
    expect((await sendTo(targets[0] as never, bytes, app.http.mcpUrl)).status).toBeLessThan(300);
    const done = await client.call("legacy_marks", args, requestState);
    expect(done.isError).toBeFalsy();
    expect(app.runs).toHaveLength(1);
    expect(Buffer.compare(app.runs[0]?.[0] as Buffer, bytes)).toBe(0);
  });

  it("clients of the draft and the variant see what they saw before: the marks on the property and the uri branch", async () => {
    const plain = await connectRevisionClient(app.http.mcpUrl, "token-alice", {});
    clients.push(plain);
    const draft = await connectRevisionClient(app.http.mcpUrl, "token-alice", {
      extensions: { [FILES_KEY]: { upload: true, download: true } },
    });
    clients.push(draft);
    const revision = await connect();
    for (const client of [plain, draft]) {
      const legacy = await schemaOf(client, "legacy_marks");
      const document = (legacy.properties as Record<string, Record<string, unknown>>).document as Record<
        string,
        unknown
      >;
      expect(document["x-mcp-file"]).toEqual({});
      const branches = document.anyOf as Array<Record<string, unknown>>;
      expect(branches.find((branch) => branch.format === "uri")?.["x-mcp-file"]).toEqual({});
      expect(classifyTool(legacy).document?.kind).toBe("untaken");
    }
    // The revision's client is shown the same schema less the marks off the descriptor: one per argument.
    const tailored = await schemaOf(revision, "legacy_marks");
    const properties = tailored.properties as Record<string, unknown>;
    expect(marksIn(properties.document)).toBe(1);
    expect(marksIn(properties.pages)).toBe(1);
    // A tool whose marks are already object-only is listed unchanged.
    expect(await schemaOf(revision, "ingest")).toEqual(await schemaOf(plain, "ingest"));
  });
});

describe("an expired requestState", () => {
  beforeEach(async () => {
    await app.http.close();
    await rm(app.dir, { recursive: true, force: true, maxRetries: 3 });
    app = await start({ ttl: "1s" });
  });

  it("is refused with TOKEN_EXPIRED once the targets expired", async () => {
    const client = await connect();
    const bytes = Buffer.from("late");
    const args = { document: descriptorOf("file-1", { bytes, name: "late.txt" }) };
    const { requestState } = await firstRound(client, "ingest", args, ["file-1"]);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(errorCode(await client.call("ingest", args, requestState))).toBe("TOKEN_EXPIRED");
    expect(app.runs).toHaveLength(0);
  });
});

describe("the ticket rate limit", () => {
  beforeEach(async () => {
    await app.http.close();
    await rm(app.dir, { recursive: true, force: true, maxRetries: 3 });
    app = await start({ rateLimit: () => false });
  });

  it("upload_required asks it like every other ticket minter: refused, no target is minted", async () => {
    const client = await connect();
    const bytes = Buffer.from("limited");
    const args = { document: descriptorOf("file-1", { bytes, name: "limited.txt" }) };
    const result = await client.call("ingest", args);
    expect(result.resultType).not.toBe("upload_required");
    expect(errorCode(result)).toBe("RATE_LIMITED");
    expect(app.runs).toHaveLength(0);
  });
});
