import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { UploadHandleResolver, type UploadTicket } from "../../src/uploads/upload-handle-resolver.js";
import { connectInMemory } from "../support/in-memory-client.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const BASE = "http://127.0.0.1:9";

let dir: string;
let clock: number;
let store: FileStore;
let state: StateStore;
let minter: SignedUrlMinter;
let routes: FileRoutes;
let uploads: UploadHandleResolver;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-uploads-"));
  clock = Date.UTC(2030, 0, 1);
  store = fsStore(join(dir, "store"), { sweepInterval: 0, now: () => clock });
  state = memoryState({ now: () => clock });
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, state, now: () => clock });
  routes = createFileRoutes({ store, minter, state });
  uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    maxBytes: 1000,
    maxFiles: 3,
    handleTtl: "30m",
    tmpDir: join(dir, "tmp"),
  });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function uploadWith(ticket: UploadTicket, files: Array<[string, Uint8Array]>): Promise<Response> {
  const form = new FormData();
  for (const [name, bytes] of files) form.append(ticket.field, new Blob([new Uint8Array(bytes)]), name);
  return (await routes(new Request(ticket.upload_url, { method: ticket.method, body: form }))) as Response;
}

describe("UploadHandleResolver", () => {
  it("validates its options with INVALID_OPTION", () => {
    const bad: Array<Record<string, unknown>> = [
      { store, minter },
      { store, minter, state, toolName: "has space" },
      { store, minter, state, maxBytes: -1 },
      { store, minter, state, maxFiles: 0 },
      { store, minter, state, ttl: "later" },
      { store, minter, state, bridge: {} },
      { minter, state },
    ];
    for (const options of bad) {
      expect(() => new UploadHandleResolver(options as never)).toThrowError(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
    }
  });

  it("agrees with the bridge on the size limit: takes the bridge's by default, refuses a larger one", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), maxBytes: 2000 });
    const derived = new UploadHandleResolver({ store, minter, state, bridge });
    expect(derived.maxBytes).toBe(2000);
    expect((await derived.createTicket("s1")).max_bytes).toBe(2000);
    expect(new UploadHandleResolver({ store, minter, state, bridge, maxBytes: 1500 }).maxBytes).toBe(1500);
    expect(() => new UploadHandleResolver({ store, minter, state, bridge, maxBytes: 2001 })).toThrowError(
      expect.objectContaining({
        code: "INVALID_OPTION",
        message: expect.stringContaining("above the bridge's maxBytes (2000 bytes)"),
      }),
    );
    // So an upload the tool would refuse is refused at the upload, before anything is stored.
    const ticket = await derived.createTicket("s1");
    const tooBig = await uploadWith(ticket, [["big.bin", randomBytes(2001)]]);
    expect(tooBig.status).toBe(413);
    expect((await store.list("s1")).files).toEqual([]);
  });

  it("mints a single-use ticket bound to the scope and carrying the caps", async () => {
    const ticket = await uploads.createTicket("s1", { filename: "report's.pdf" });
    expect(ticket).toMatchObject({
      method: "POST",
      field: "file",
      max_bytes: 1000,
      max_files: 3,
      single_use: true,
    });
    // The handle carries the scope's reference, never the scope (security: session ids are bearer values).
    expect(ticket.handle.startsWith(`upload://sessions/${scopeRef("s1", minter)}/`)).toBe(true);
    expect(ticket.curl).toBe(`curl -sS -F 'file=@report'\\''s.pdf' '${ticket.upload_url}'`);
    const token = ticket.upload_url.slice(`${BASE}/files/upload/`.length);
    const claims = await minter.verify(token, { action: "upload" });
    expect(claims).toMatchObject({
      scope: "s1",
      singleUse: true,
      claims: { max_bytes: 1000, max_files: 3, file_ttl: 1800 },
    });
    expect(Date.parse(ticket.expires_at)).toBe(clock + 10 * 60_000);
    const replay = await uploadWith(ticket, [["a.txt", Buffer.from("a")]]);
    expect(replay.status).toBe(410);
  });

  it("mints reusable tickets with singleUse: false", async () => {
    const reusable = new UploadHandleResolver({ store, minter, state, singleUse: false });
    const ticket = await reusable.createTicket("s1");
    expect(ticket.single_use).toBe(false);
    expect((await uploadWith(ticket, [["a.txt", Buffer.from("a")]])).status).toBe(201);
    expect((await uploadWith(ticket, [["b.txt", Buffer.from("b")]])).status).toBe(201);
    expect((await store.list("s1")).files).toHaveLength(2);
  });

  it("registers get_upload_url on an McpServer, bound to the caller's scope", async () => {
    const server = new McpServer({ name: "t", version: "1.0.0" });
    const scoped = new UploadHandleResolver({
      store,
      minter,
      state,
      scope: () => "chat-7",
      toolName: "upload_url",
    });
    scoped.attach(server);
    const { client } = await connectInMemory(server, { name: "c", version: "1.0.0" });
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain("upload_url");
    const result = await client.callTool({ name: "upload_url", arguments: {} });
    const ticket = result.structuredContent as UploadTicket;
    expect(ticket.handle.startsWith(`upload://sessions/${scopeRef("chat-7", minter)}/`)).toBe(true);
    expect(JSON.stringify(result)).not.toContain("chat-7");
    const response = await uploadWith(ticket, [["x.bin", randomBytes(10)]]);
    expect(response.status).toBe(201);
    expect((await store.list("chat-7")).files).toHaveLength(1);
    await client.close();
  });

  it("resolves file and ticket handles only in their scope, and only within their TTL", async () => {
    const ticket = await uploads.createTicket("s1");
    expect(await uploads.fileFor(ticket.handle, { scope: "s1" })).toBeNull(); // not uploaded yet
    const content = randomBytes(500);
    const response = await uploadWith(ticket, [["a.bin", content]]);
    const [entry] = ((await response.json()) as { files: Array<{ id: string; handle: string }> }).files;
    const byFile = await uploads.fileFor(entry?.handle as string, { scope: "s1" });
    const byTicket = await uploads.fileFor(ticket.handle, { scope: "s1" });
    expect(byFile?.id).toBe(entry?.id);
    expect(byTicket?.id).toBe(entry?.id);
    expect(uploads.handleFor(byFile as never)).toBe(entry?.handle);
    expect(await uploads.fileFor(entry?.handle as string, { scope: "s2" })).toBeNull();
    expect(
      await uploads.fileFor(String(entry?.handle).replace(scopeRef("s1", minter), scopeRef("s2", minter)), {
        scope: "s2",
      }),
    ).toBeNull();
    expect(await uploads.fileFor(`upload://sessions/${scopeRef("s1", minter)}`, { scope: "s1" })).toBeNull();
    expect(
      await uploads.fileFor(`upload://sessions/${scopeRef("s1", minter)}/%E0%A4%A`, { scope: "s1" }),
    ).toBeNull();
    clock += 31 * 60_000;
    expect(await uploads.fileFor(entry?.handle as string, { scope: "s1" })).toBeNull();
    expect(await uploads.fileFor(ticket.handle, { scope: "s1" })).toBeNull();
  });

  it("plugs into FileBridge: withFiles tools accept handles, other scopes get NOT_FOUND", async () => {
    const bridge = new FileBridge({ tmpDir: join(dir, "bridge") });
    const withBridge = new UploadHandleResolver({ store, minter, state, bridge });
    const ticket = await withBridge.createTicket("s1");
    const content = randomBytes(800);
    await uploadWith(ticket, [["doc.bin", content]]);
    const file = await bridge.resolve(ticket.handle, { scope: "s1" });
    expect((await file.bytes()).equals(content)).toBe(true);
    expect(file.name).toBe("doc.bin");
    await file.dispose();
    await expect(bridge.resolve(ticket.handle, { scope: "s2" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("rewrites handles at argument paths to local copies and removes them on dispose", async () => {
    const a = randomBytes(100);
    const b = randomBytes(200);
    const ticket = await uploads.createTicket("s1");
    const response = await uploadWith(ticket, [
      ["a.bin", a],
      ["b.bin", b],
    ]);
    const handles = ((await response.json()) as { files: Array<{ handle: string }> }).files.map(
      (f) => f.handle,
    );
    const args = { file: handles[0], files: [handles[1], "not-a-handle"], other: handles[0] };
    const rewritten = await uploads.rewrite(args, ["file", "files[]"], { scope: "s1" });
    expect(args.file).toBe(handles[0]); // the input is not mutated
    expect(rewritten.args.other).toBe(handles[0]); // not a listed path
    expect(rewritten.args.files[1]).toBe("not-a-handle");
    expect((await readFile(rewritten.args.file as string)).equals(a)).toBe(true);
    expect((await readFile(rewritten.args.files[0] as string)).equals(b)).toBe(true);
    expect((rewritten.args.file as string).endsWith("a.bin")).toBe(true);
    await rewritten.dispose();
    await rewritten.dispose();
    expect(await tempLeftovers(join(dir, "tmp"))).toEqual([]);
  });

  it("fails rewrite with NOT_FOUND for a foreign handle and keeps no copies", async () => {
    const ticket = await uploads.createTicket("s1");
    const response = await uploadWith(ticket, [["a.bin", randomBytes(10)]]);
    const [entry] = ((await response.json()) as { files: Array<{ handle: string }> }).files;
    const foreign = await uploads.createTicket("s2");
    await uploadWith(foreign, [["b.bin", randomBytes(10)]]);
    await expect(
      uploads.rewrite({ files: [entry?.handle, foreign.handle] }, ["files[]"], { scope: "s1" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Every handle is looked up before anything is copied: no copy was made at all.
    expect(await tempLeftovers(join(dir, "tmp"))).toEqual([]);
  });
});
