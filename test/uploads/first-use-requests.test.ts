/**
 * `FileRequests`' async bodies, the direct strategy's work, `await_upload`'s wait and
 * `get_upload_url`'s answer load on first use (issue 39): arguments are checked before the load
 * (synchronously where they were), two first calls share one load, and a load that fails is the
 * call's error while the next call loads again.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McpHost } from "../../src/mcp/host.js";
import type { DirectUploads, StoredFile } from "../../src/storage/types.js";
import { countLoads } from "../support/first-use.js";
import { codeOf, codeOfSync } from "../support/helpers.js";

const SECRET = "first-use-requests-secret-0123456789";
const BASE = "http://127.0.0.1:9";

const WORK = {
  requests: "src/uploads/request-files-work.js",
  direct: "src/uploads/direct-upload-work.js",
  awaitUpload: "src/uploads/await-upload-work.js",
  later: "src/uploads/resolver-later.js",
} as const;

afterEach(() => {
  vi.resetModules();
});

/** Mocks `path` (from the repository root) so its first load fails with `failure`; counts the loads. */
function failFirstLoad(path: string, failure: Error): { attempts: () => number } {
  const { loads } = countLoads(path, { failFirst: failure });
  return { attempts: () => loads.attempts };
}

/** Under vitest a mocked module's failure arrives wrapped, with the load's error as its cause. */
function isFailure(error: unknown, failure: Error): boolean {
  return error === failure || (error as Error | undefined)?.cause === failure;
}

async function failureOf(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => undefined,
    (caught: unknown) => caught,
  );
}

async function requestsSetup() {
  const { SignedUrlMinter } = await import("../../src/signing/signed-url-minter.js");
  const { memoryState } = await import("../../src/storage/memory-state.js");
  const { memoryStore } = await import("../../src/storage/memory-store.js");
  const { FileRequests } = await import("../../src/uploads/request-files.js");
  const store = memoryStore();
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, state });
  return { FileRequests, store, state, minter };
}

describe("FileRequests, its work loaded on first use", () => {
  it("two first calls at once share the load; each request is its own", async () => {
    vi.resetModules();
    const { FileRequests, store, state, minter } = await requestsSetup();
    const requests = new FileRequests({ store, state, minter, pollInterval: "20ms" });
    const [a, b] = await Promise.all([
      requests.create("s1", { message: "First" }),
      requests.create("s2", { message: "Second", maxFiles: 1 }),
    ]);
    expect(a.id).not.toBe(b.id);
    expect([a.scope, b.scope]).toEqual(["s1", "s2"]);
    expect(await Promise.all([a.files(), requests.filesOf("s2", b.id)])).toEqual([null, null]);
    expect(await requests.expiryOf("s1", a.id)).toBe(a.expiresAt);
    expect(await requests.expiryOf("s2", a.id)).toBeNull();
    expect(await requests.progressOf("s1", a.id)).toBeNull();
    expect(await codeOf(a.wait({ timeout: "50ms" }))).toBe("TIMEOUT");
  });

  it("checks options and arguments before the load; a failed load fails the call, the next loads again", async () => {
    const failure = Object.assign(new Error("work could not load"), { code: "ERR_MODULE_NOT_FOUND" });
    vi.resetModules();
    const load = failFirstLoad(WORK.requests, failure);
    const { FileRequests, store, state, minter } = await requestsSetup();
    // The constructor's checks throw synchronously, as before the split.
    expect(codeOfSync(() => new FileRequests({ store, state, minter, pollInterval: "1ms" }))).toBe(
      "INVALID_OPTION",
    );
    const requests = new FileRequests({ store, state, minter, maxFiles: 2, pollInterval: "20ms" });
    expect(await codeOf(requests.create("s1", { message: "" }))).toBe("INVALID_INPUT");
    expect(await codeOf(requests.create("s1", { message: "Files", maxFiles: 3 }))).toBe("INVALID_INPUT");
    expect(await codeOf(requests.create("", { message: "Files" }))).toBe("INVALID_INPUT");
    expect(await codeOf(requests.waitFor("s1", ""))).toBe("INVALID_INPUT");
    expect(codeOfSync(() => requests.filesOf("", "id"))).toBe("INVALID_INPUT");
    expect(await requests.filesOf("s1", "")).toBeNull();
    expect(await requests.expiryOf("s1", "")).toBeNull();
    expect(await requests.progressOf("s1", "")).toBeNull();
    expect(load.attempts()).toBe(0);
    expect(isFailure(await failureOf(requests.create("s1", { message: "Files" })), failure)).toBe(true);
    expect(load.attempts()).toBe(1);
    const request = await requests.create("s1", { message: "Files" });
    expect(await request.files()).toBeNull();
    expect(load.attempts()).toBe(2);
  });
});

/** A store's `directUploads` that presigns a fixed form and commits nothing yet. */
function fakeDirect(): DirectUploads {
  return {
    presignUpload: async () => ({
      method: "POST",
      url: "https://bucket.example/",
      fileField: "file",
      fields: { key: "staging" },
    }),
    commit: async () => null,
    discard: async () => false,
  } as unknown as DirectUploads;
}

async function directSetup() {
  const { memoryState } = await import("../../src/storage/memory-state.js");
  const { memoryStore } = await import("../../src/storage/memory-store.js");
  const { UNKEYED_SCOPE_REFS } = await import("../../src/scope/scope-refs.js");
  const { DirectUploadStrategy } = await import("../../src/uploads/direct-upload.js");
  const { uploadHandleOf } = await import("../../src/uploads/upload-handle.js");
  const plain = memoryStore();
  const store = Object.assign(Object.create(plain), { directUploads: fakeDirect() }) as typeof plain;
  const deps = { store, state: memoryState(), refs: UNKEYED_SCOPE_REFS };
  const request = (ticketId: string) => ({
    scope: "s1",
    ticketId,
    uri: uploadHandleOf({ scope: "s1", id: ticketId } as StoredFile, UNKEYED_SCOPE_REFS),
    issuedAt: Date.now(),
    expiresAt: Date.now() + 60_000,
    maxBytes: 1024,
    fileTtl: 60,
  });
  return { DirectUploadStrategy, plain, deps, request };
}

describe("DirectUploadStrategy, its work loaded on first use", () => {
  it("two first calls at once share the load", async () => {
    vi.resetModules();
    const { DirectUploadStrategy, deps, request } = await directSetup();
    const strategy = new DirectUploadStrategy(deps, {});
    const [a, b] = await Promise.all([strategy.authorize(request("t1")), strategy.authorize(request("t2"))]);
    expect("upload" in a && a.upload.url).toBe("https://bucket.example/");
    expect("upload" in b && b.file.uri).toBe(request("t2").uri);
    expect(await strategy.commitPending("t1", "s1")).toBeNull();
    expect(await strategy.commitPending("t1", "s2")).toBeNull();
  });

  it("checks the store synchronously and other scopes' URIs before the load; a failed load is retried", async () => {
    const failure = Object.assign(new Error("work could not load"), { code: "ERR_MODULE_NOT_FOUND" });
    vi.resetModules();
    const load = failFirstLoad(WORK.direct, failure);
    const { DirectUploadStrategy, plain, deps, request } = await directSetup();
    expect(codeOfSync(() => new DirectUploadStrategy({ ...deps, store: plain }, {}))).toBe("INVALID_OPTION");
    const strategy = new DirectUploadStrategy(deps, {});
    expect(await strategy.complete("upload://sessions/x/y", "s1")).toBeUndefined();
    expect(await strategy.complete(request("t1").uri, "s2")).toBeUndefined();
    expect(load.attempts()).toBe(0);
    expect(isFailure(await failureOf(strategy.authorize(request("t1"))), failure)).toBe(true);
    expect(load.attempts()).toBe(1);
    expect("upload" in (await strategy.authorize(request("t1")))).toBe(true);
    expect(await strategy.complete(request("t1").uri, "s1")).toBeNull();
    expect(load.attempts()).toBe(2);
  });
});

describe("await_upload and get_upload_url, their call bodies loaded on first use", () => {
  const ctx = { signal: new AbortController().signal, extra: {}, transport: "local" } as never;

  it("registers name, schema and description without loading; two first calls share the load", async () => {
    vi.resetModules();
    const awaitLoad = failFirstLoad(WORK.awaitUpload, new Error("unused"));
    const urlLoad = failFirstLoad(WORK.later, new Error("unused"));
    const { FileRequests, store, state, minter } = await requestsSetup();
    const { awaitUploadTool } = await import("../../src/uploads/await-upload.js");
    const { uploadUrlTool } = await import("../../src/uploads/upload-url-tool.js");
    const { FileBridgeError } = await import("../../src/errors/file-bridge-error.js");
    const requests = new FileRequests({ store, state, minter });
    const waitTool = awaitUploadTool("await_upload", requests, () => "s1");
    const urlTool = uploadUrlTool({ kind: "test" } as unknown as McpHost, {
      name: "get_upload_url",
      statusName: undefined,
      meta: undefined,
      scope: () => "s1",
      assertTicketAllowed: async () => undefined,
      createTicket: async () => {
        throw new FileBridgeError("RATE_LIMITED", "No tickets here");
      },
    });
    expect([waitTool.name, Object.keys(waitTool.inputSchema ?? {})]).toEqual([
      "await_upload",
      ["request_id", "wait_seconds"],
    ]);
    expect(urlTool.inputSchema).toHaveProperty("filename");
    expect(typeof urlTool.description).toBe("string");
    expect([awaitLoad.attempts(), urlLoad.attempts()]).toEqual([0, 0]);
    // The first load of each fails: the call's error result; the next call loads again.
    expect((await waitTool.handler({ request_id: "nope" }, ctx)).isError).toBe(true);
    expect((await urlTool.handler({}, ctx)).isError).toBe(true);
    expect([awaitLoad.attempts(), urlLoad.attempts()]).toEqual([1, 1]);
    const [first, second] = await Promise.all([
      waitTool.handler({ request_id: "nope" }, ctx),
      waitTool.handler({ request_id: "other" }, ctx),
    ]);
    expect([first.isError, second.isError]).toEqual([true, true]);
    const answered = await urlTool.handler({}, ctx);
    expect(answered.content).toEqual([
      expect.objectContaining({ text: expect.stringMatching(/^Error RATE_LIMITED: No tickets here/) }),
    ]);
    expect([awaitLoad.attempts(), urlLoad.attempts()]).toEqual([2, 2]);
  });
});

describe("ticketRateLimit, its counting loaded on first use", () => {
  it("checks options synchronously; two first asks share the load; a failed load is retried", async () => {
    const failure = Object.assign(new Error("later could not load"), { code: "ERR_MODULE_NOT_FOUND" });
    vi.resetModules();
    const load = failFirstLoad(WORK.later, failure);
    const { memoryState } = await import("../../src/storage/memory-state.js");
    const { ticketRateLimit } = await import("../../src/uploads/ticket-rate-limit.js");
    const state = memoryState();
    expect(codeOfSync(() => ticketRateLimit({ state, max: 0 }))).toBe("INVALID_OPTION");
    const limit = ticketRateLimit({ state, max: 2, now: () => 60_000 });
    expect(load.attempts()).toBe(0);
    expect(isFailure(await failureOf(limit({ scope: "a" })), failure)).toBe(true);
    expect(await Promise.all([limit({ scope: "a" }), limit({ scope: "a" }), limit({ scope: "b" })])).toEqual([
      true,
      true,
      true,
    ]);
    expect(await limit({ scope: "a" })).toBe(false);
    expect(load.attempts()).toBe(2);
  });
});
