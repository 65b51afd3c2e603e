/**
 * The proxy's upload consumers answer the files extension revision Claude Code ships (issue 45):
 * `createFileProxy` (SDK v2 downstream, 2026-07-28 over HTTP on 127.0.0.1) in front of the fixture
 * upstream, with a client written from the revision's rules (test/support/revision-files-client.ts):
 * probe → tools/list shows the descriptor mark → a call with descriptors → `upload_required` →
 * PUT → retry with `requestState` → the upstream reads the exact bytes from a path in its handoff
 * folder; two files; a wrong digest; another user's state; a replay.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerTokens, parseBearerTokens } from "../../src/proxy/bearer-tokens.js";
import { createFileProxy, type FileProxy } from "../../src/proxy/file-proxy.js";
import {
  classifyTool,
  connectRevisionClient,
  descriptorOf,
  errorCode,
  type RevisionClient,
  sendTo,
  serverTakesFiles,
  uploadTargets,
} from "../support/revision-files-client.js";
import { fixtureCommand, removeDirs, tempDir } from "./support.js";

const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789ab";
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
type Json = Record<string, unknown>;

let out: string;
let handoff: string;
let proxy: FileProxy;
let mcpUrl: URL;
const clients: RevisionClient[] = [];

beforeAll(async () => {
  out = await tempDir("proxy-upload-required-out-");
  handoff = await tempDir("proxy-upload-required-handoff-");
  proxy = await createFileProxy({
    sdk: "v2",
    authenticate: bearerTokens(parseBearerTokens(`alice:${ALICE},bob:${BOB}`, "test")),
    config: {
      mcpServers: { up: fixtureCommand({ OUTPUT_DIR: out, MARKER_DIR: out }) },
      servers: {
        up: {
          handoffDir: handoff,
          outputDirs: [out],
          tools: {
            read_file: { upload: { args: ["path"] } },
            read_many: { upload: { args: ["paths[]"] } },
            read_base64: { upload: { args: ["content"], as: "base64" } },
          },
        },
      },
    },
    upstreamStderr: "ignore",
  });
  mcpUrl = new URL((await proxy.listen()).mcpUrl);
});

afterAll(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await proxy?.close({ timeoutMs: 1000 });
  await removeDirs(out, handoff);
});

async function connect(token = ALICE, capabilities?: Json): Promise<RevisionClient> {
  const client = await connectRevisionClient(mcpUrl, token, capabilities);
  clients.push(client);
  return client;
}

/** The upstream's answer as the proxy passes it on (the fixture's structuredContent). */
const structured = (result: Json) => result.structuredContent as Json;

describe("the proxy's upload consumers and the revision Claude Code ships", () => {
  it("probe and tools/list: an upload object in the entry, the consumer arguments marked on the descriptor only", async () => {
    const client = await connect();
    expect(serverTakesFiles(client.serverCapabilities())).toBe(true);
    const { tools } = await client.client.listTools();
    const schemaOf = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema as Json;
    expect(classifyTool(schemaOf("read_file")).path).toEqual({ kind: "file", list: false });
    expect(classifyTool(schemaOf("read_many")).paths).toEqual({ kind: "file", list: true });
    expect(classifyTool(schemaOf("echo")).text?.kind).toBe("unmarked");
    // A client of the draft sees the marks it reads, on the property.
    const plain = await connect(ALICE, {});
    const listed = (await plain.client.listTools()).tools.find((tool) => tool.name === "read_file");
    const path = ((listed?.inputSchema.properties ?? {}) as Record<string, Json>).path as Json;
    expect(path["x-mcp-file"]).toEqual({});
  });

  it("a descriptor: upload_required, PUT, retry — the upstream reads the exact bytes from its handoff folder; a replay is refused", async () => {
    const client = await connect();
    const bytes = randomBytes(50_000);
    const args = { path: descriptorOf("file-1", { bytes, name: "scan.bin" }) };
    const first = await client.call("read_file", args);
    const { requestState, targets } = uploadTargets(first, ["file-1"]);
    const [target] = targets;
    expect(target?.method).toBe("PUT");
    expect(target?.credentials).toBe("omit");
    expect(Date.parse(target?.expiresAt as string)).toBeGreaterThan(Date.now());
    expect(requestState).not.toMatch(/alice|upload:|\/|handoff/);
    expect((await sendTo(target as never, bytes, mcpUrl)).status).toBeLessThan(300);
    const done = await client.call("read_file", args, requestState);
    expect(done.isError).toBeFalsy();
    expect(structured(done).sha256).toBe(sha(bytes));
    expect(structured(done).size).toBe(bytes.length);
    expect(String(structured(done).path).startsWith(`${handoff}/`)).toBe(true);
    const replay = await client.call("read_file", args, requestState);
    expect(errorCode(replay)).toBe("TOKEN_ALREADY_USED");
  });

  it("two files in one call: two targets, one upstream call with both files in order", async () => {
    const client = await connect();
    const one = Buffer.from("first file\n");
    const two = randomBytes(9000);
    const args = {
      paths: [
        descriptorOf("file-1", { bytes: one, name: "a.txt", mimeType: "text/plain" }),
        descriptorOf("file-2", { bytes: two, name: "b.bin" }),
      ],
    };
    const { requestState, targets } = uploadTargets(await client.call("read_many", args), [
      "file-1",
      "file-2",
    ]);
    expect(new Set(targets.map((target) => target.url)).size).toBe(2);
    await sendTo(targets[1] as never, two, mcpUrl);
    await sendTo(targets[0] as never, one, mcpUrl);
    const done = await client.call("read_many", args, requestState);
    expect(done.isError).toBeFalsy();
    expect(structured(done).hashes).toEqual([sha(one), sha(two)]);
  });

  it("as base64: the upstream gets the uploaded bytes, not a path", async () => {
    const client = await connect();
    const bytes = Buffer.from("base64 please\n");
    const args = { content: descriptorOf("file-1", { bytes, name: "b.txt", mimeType: "text/plain" }) };
    const { requestState, targets } = uploadTargets(await client.call("read_base64", args), ["file-1"]);
    await sendTo(targets[0] as never, bytes, mcpUrl);
    const done = await client.call("read_base64", args, requestState);
    expect((done.content as Array<{ text: string }>)[0]?.text).toBe(`sha256 ${sha(bytes)}`);
  });

  it("a wrong digest: the PUT is refused, the retry with other descriptors does not open the state", async () => {
    const client = await connect();
    const bytes = Buffer.from("declared bytes\n");
    const args = { path: descriptorOf("file-1", { bytes, name: "d.txt", mimeType: "text/plain" }) };
    const { requestState, targets } = uploadTargets(await client.call("read_file", args), ["file-1"]);
    const wrong = await sendTo(targets[0] as never, Buffer.from("DECLARED BYTES\n"), mcpUrl);
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("DIGEST_MISMATCH");
    const other = { path: descriptorOf("file-1", { bytes: Buffer.from("DECLARED BYTES\n"), name: "d.txt" }) };
    expect(errorCode(await client.call("read_file", other, requestState))).toBe("NOT_FOUND");
    await sendTo(targets[0] as never, bytes, mcpUrl);
    const done = await client.call("read_file", args, requestState);
    expect(structured(done).sha256).toBe(sha(bytes));
  });

  it("another user's requestState is refused like an unknown one and stays usable by its owner", async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    const bytes = Buffer.from("alice's file\n");
    const args = { path: descriptorOf("file-1", { bytes, name: "mine.txt" }) };
    const { requestState, targets } = uploadTargets(await alice.call("read_file", args), ["file-1"]);
    await sendTo(targets[0] as never, bytes, mcpUrl);
    expect(errorCode(await bob.call("read_file", args, requestState))).toBe("NOT_FOUND");
    expect(structured(await alice.call("read_file", args, requestState)).sha256).toBe(sha(bytes));
  });

  it("a descriptor from a client that did not declare the revision is a tool error", async () => {
    const plain = await connect(ALICE, {});
    const answer = await plain.call("read_file", {
      path: descriptorOf("file-1", { bytes: Buffer.from("x") }),
    });
    expect(answer.resultType).toBe("complete");
    expect(errorCode(answer)).toBe("UNSUPPORTED_INPUT");
  });
});
