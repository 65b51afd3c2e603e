import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import type { ResolvedFile } from "../../src/bridge/types.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StateStore } from "../../src/storage/types.js";
import { formatUploadHandle, type TicketRecord, ticketStateKey } from "../../src/uploads/upload-handle.js";
import { UploadHandleResolver, type UploadTicket } from "../../src/uploads/upload-handle-resolver.js";
import { codeOf, sha256 } from "../support/helpers.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";

let dir: string;
let clock: number;
let store: FileStore;
let state: StateStore;
let minter: SignedUrlMinter;
let routes: FileRoutes;
let bridge: FileBridge;
let uploads: UploadHandleResolver;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-one-handle-"));
  clock = Date.UTC(2030, 0, 1);
  store = fsStore(join(dir, "store"), { sweepInterval: 0, now: () => clock });
  state = memoryState({ now: () => clock });
  minter = new SignedUrlMinter({
    secret: SECRET,
    baseUrl: "http://127.0.0.1:9",
    state,
    now: () => clock,
  });
  routes = createFileRoutes({ store, minter, state });
  bridge = new FileBridge({ tmpDir: join(dir, "bridge"), maxFiles: 6 });
  uploads = new UploadHandleResolver({
    store,
    minter,
    state,
    bridge,
    maxFiles: 8,
    handleTtl: "30m",
    tmpDir: join(dir, "tmp"),
  });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function tempEntries(folder: string): Promise<string[]> {
  return tempLeftovers(join(dir, folder));
}

/** Uploads `parts` with a fresh ticket of `scope`; the ticket, the reply and the bytes. */
async function upload(scope: string, parts: Buffer[]) {
  const ticket: UploadTicket = await uploads.createTicket(scope);
  const form = new FormData();
  parts.forEach((bytes, i) => {
    form.append(ticket.field, new Blob([new Uint8Array(bytes)]), `p${i}.bin`);
  });
  const response = (await routes(new Request(ticket.upload_url, { method: "POST", body: form }))) as Response;
  expect(response.status).toBe(201);
  const reply = (await response.json()) as { handle?: string; files: Array<{ handle: string; id: string }> };
  return { ticket, reply };
}

async function contents(files: ResolvedFile[]): Promise<string[]> {
  const digests = await Promise.all(files.map(async (file) => sha256(await file.bytes())));
  await Promise.all(files.map((file) => file.dispose()));
  return digests;
}

describe("one upload, one handle", () => {
  it("the ticket's handle and the reply's are one, standing for every file in upload order", async () => {
    const parts = [randomBytes(30), randomBytes(40), randomBytes(50)];
    const { ticket, reply } = await upload("s1", parts);
    expect(reply.handle).toBe(ticket.handle);
    const stored = await uploads.filesFor(ticket.handle, { scope: "s1" });
    expect(stored?.map((file) => file.id)).toEqual(reply.files.map((file) => file.id));
    expect(await contents(await bridge.resolveEach(ticket.handle, { scope: "s1" }))).toEqual(
      parts.map(sha256),
    );
    // A file's own handle is that one file, in resolveEach too; other forms give their one file.
    expect(await contents(await bridge.resolveEach(reply.files[1]?.handle, { scope: "s1" }))).toEqual([
      sha256(parts[1] as Buffer),
    ]);
    expect(
      await contents(await bridge.resolveEach("data:text/plain;name=a.txt;base64,aGk=", { scope: "s1" })),
    ).toEqual([sha256(Buffer.from("hi"))]);
  });

  it("is INVALID_INPUT, naming the count and the files' own handles, where one file is taken", async () => {
    const { ticket, reply } = await upload("s1", [randomBytes(10), randomBytes(20)]);
    const expected = {
      code: "INVALID_INPUT",
      data: { count: 2, handles: reply.files.map((file) => file.handle) },
    };
    await expect(bridge.resolve(ticket.handle, { scope: "s1" })).rejects.toMatchObject(expected);
    await expect(bridge.resolveAll([ticket.handle], { scope: "s1" })).rejects.toMatchObject(expected);
    await expect(uploads.fileFor(ticket.handle, { scope: "s1" })).rejects.toMatchObject(expected);
    await expect(uploads.rewrite({ file: ticket.handle }, ["file"], { scope: "s1" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      data: { count: 2, field: "file" },
    });
    expect(await tempEntries("bridge")).toEqual([]);
    expect(await tempEntries("tmp")).toEqual([]);
  });

  it("withFiles: a list item becomes every file of its upload, in place; a one-file field refuses it", async () => {
    const parts = [randomBytes(11), randomBytes(22)];
    const { ticket, reply } = await upload("s1", parts);
    const single = await upload("s1", [randomBytes(33)]);
    let seen: unknown;
    const tool = bridge.withFiles(
      async (args: unknown) => {
        const { jobs, cover } = args as { jobs: Array<{ attachments: string[] }>; cover?: string };
        seen = {
          jobs: await Promise.all(
            jobs.map(async (job) =>
              Promise.all(job.attachments.map(async (path) => sha256(await readFile(path)))),
            ),
          ),
          cover: cover ? sha256(await readFile(cover)) : undefined,
        };
        return { content: [] };
      },
      { fields: ["jobs[].attachments[]", "cover"] },
    );
    const extra = { sessionId: "s1" };
    const ok = await tool(
      {
        jobs: [{ attachments: [single.ticket.handle, ticket.handle] }, { attachments: [ticket.handle] }],
        cover: reply.files[0]?.handle,
      },
      extra,
    );
    expect(ok).toEqual({ content: [] });
    const [a, b] = parts.map(sha256);
    const lone = (await uploads.filesFor(single.ticket.handle, { scope: "s1" }))?.[0]?.sha256;
    expect(seen).toEqual({
      jobs: [
        [lone, a, b],
        [a, b],
      ],
      cover: a,
    });
    const refused = (await tool({ jobs: [], cover: ticket.handle }, extra)) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toContain("INVALID_INPUT");
    expect(refused.content[0]?.text).toContain("stands for 2 files");
    // maxFiles (6, just met above) counts the files the handles stand for: 2 + 2 + 2 + 1 = 7.
    const tooMany = (await tool(
      { jobs: [{ attachments: [ticket.handle, ticket.handle, ticket.handle, single.ticket.handle] }] },
      extra,
    )) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(tooMany.isError).toBe(true);
    expect(tooMany.content[0]?.text).toContain("TOO_MANY_FILES");
    expect(await tempEntries("bridge")).toEqual([]);
  });

  it("rewrite(): a list item becomes a copy of each file; maxFiles counts files, before any copy", async () => {
    const parts = [randomBytes(5), randomBytes(6), randomBytes(7)];
    const { ticket } = await upload("s1", parts);
    const rewritten = await uploads.rewrite({ files: ["keep", ticket.handle, "end"] }, ["files[]"], {
      scope: "s1",
    });
    const [first, ...rest] = rewritten.args.files;
    expect(first).toBe("keep");
    expect(rest.at(-1)).toBe("end");
    expect(await Promise.all(rest.slice(0, 3).map(async (path) => sha256(await readFile(path))))).toEqual(
      parts.map(sha256),
    );
    await rewritten.dispose();
    expect(await tempEntries("tmp")).toEqual([]);
    expect(
      await codeOf(uploads.rewrite({ files: [ticket.handle] }, ["files[]"], { scope: "s1", maxFiles: 2 })),
    ).toBe("TOO_MANY_FILES");
    expect(await tempEntries("tmp")).toEqual([]);
  });

  it("keeps resolving a ticket handle recorded before this change, only in its scope and its lifetime", async () => {
    // What an earlier version wrote for a two-file ticket upload: the record under the ticket id.
    const a = await store.put(randomBytes(9), { scope: "s1", name: "a.bin" });
    const b = await store.put(randomBytes(9), { scope: "s1", name: "b.bin" });
    const record: TicketRecord = { scope: "s1", files: [a.id, b.id] };
    await state.set(ticketStateKey("01jold0000000000000000000a"), record, { ttl: 1800 });
    const handle = formatUploadHandle("s1", "01jold0000000000000000000a");
    expect((await uploads.filesFor(handle, { scope: "s1" }))?.map((file) => file.id)).toEqual([a.id, b.id]);
    expect(await contents(await bridge.resolveEach(handle, { scope: "s1" }))).toEqual([a.sha256, b.sha256]);
    // Another scope: exactly "not found", as for a handle that never existed.
    const moved = handle.replace(scopeRef("s1"), scopeRef("s2"));
    expect(await uploads.filesFor(moved, { scope: "s2" })).toBeNull();
    await expect(bridge.resolveEach(moved, { scope: "s2" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(bridge.resolveEach(handle, { scope: "s2" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    clock += 31 * 60_000;
    expect(await uploads.filesFor(handle, { scope: "s1" })).toBeNull();
  });

  it("without state to record the upload, the reply's handle is the file's when there is one file, else absent", async () => {
    // The same minter (its single-use claims live in its own state), routes without `state`.
    const bare = createFileRoutes({ store, minter });
    const post = async (ticket: UploadTicket, count: number) => {
      const form = new FormData();
      for (let i = 0; i < count; i++)
        form.append(ticket.field, new Blob([new Uint8Array(randomBytes(4))]), `f${i}.bin`);
      const response = (await bare(
        new Request(ticket.upload_url, { method: "POST", body: form }),
      )) as Response;
      expect(response.status).toBe(201);
      return (await response.json()) as { handle?: string; files: Array<{ handle: string }> };
    };
    const one = await post(await uploads.createTicket("s1"), 1);
    expect(one.handle).toBe(one.files[0]?.handle);
    const two = await post(await uploads.createTicket("s1"), 2);
    expect("handle" in two).toBe(false);
    expect(two.files).toHaveLength(2);
  });

  it("an expired ticket stores nothing, and its handle resolves to nothing", async () => {
    const ticket = await uploads.createTicket("s1");
    clock += 11 * 60_000;
    const form = new FormData();
    form.append(ticket.field, new Blob([new Uint8Array(randomBytes(8))]), "late.bin");
    const response = (await routes(
      new Request(ticket.upload_url, { method: "POST", body: form }),
    )) as Response;
    expect(response.status).toBe(410);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("TOKEN_EXPIRED");
    expect((await store.list("s1")).files).toEqual([]);
    expect(await uploads.filesFor(ticket.handle, { scope: "s1" })).toBeNull();
    await expect(bridge.resolveEach(ticket.handle, { scope: "s1" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
