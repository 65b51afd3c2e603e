import { describe, expect, it } from "vitest";
import { createFileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { memoryStore } from "../../src/storage/memory-store.js";
import { uploadPageForToken } from "../../src/ui/upload-page.js";
import { FileRequests } from "../../src/uploads/request-files.js";
import { UploadHandleResolver } from "../../src/uploads/upload-handle-resolver.js";
import { codeOf, codeOfSync, sha256 } from "../support/helpers.js";

function setup(options: { timeout?: `${number}ms` | number } = {}) {
  const store = memoryStore();
  const state = memoryState();
  const minter = new SignedUrlMinter({
    secret: "request-files-secret-0123456789abcdef",
    baseUrl: "http://127.0.0.1:9",
    state,
  });
  const routes = createFileRoutes({ store, minter, state });
  const requests = new FileRequests({ store, state, minter, pollInterval: "20ms", maxFiles: 4, ...options });
  const upload = async (url: string, files: Array<[string, string]>) => {
    const form = new FormData();
    for (const [name, text] of files) form.append("file", new Blob([text], { type: "text/plain" }), name);
    return routes(new Request(url, { method: "POST", body: form }));
  };
  return { store, state, minter, routes, requests, upload };
}

describe("FileRequests", () => {
  it("mints a single-use link carrying the request, waits for the upload and returns the files", async () => {
    const { requests, upload, minter, store, state } = setup();
    const request = await requests.create("s1", {
      message: "Upload the two reports",
      accept: [".pdf", "text/*"],
      maxFiles: 2,
    });
    expect(request.elicitation).toEqual({
      mode: "url",
      message: "Upload the two reports",
      url: request.url,
      elicitationId: request.id,
    });
    expect(request.url).toBe(request.uploadUrl);
    expect(request.maxFiles).toBe(2);
    expect(await request.files()).toBeNull();

    // The page a browser gets shows the request text and the accept list.
    const token = request.uploadUrl.split("/").at(-1) as string;
    const page = await (
      await uploadPageForToken(new Request(request.url, { headers: { accept: "text/html" } }), {
        verifier: minter,
        token,
      })
    ).text();
    expect(page).toContain('<p id="message" class="message">Upload the two reports</p>');
    expect(page).toContain('accept=".pdf,text/*"');

    const waiting = request.wait();
    setTimeout(
      () =>
        void upload(request.uploadUrl, [
          ["a.txt", "alpha"],
          ["b.txt", "beta"],
        ]),
      60,
    );
    const files = await waiting;
    expect(files.map((file) => [file.name, file.sha256])).toEqual([
      ["a.txt", sha256("alpha")],
      ["b.txt", sha256("beta")],
    ]);
    expect(await requests.filesOf("s1", request.id)).toEqual(files);
    expect(await requests.filesOf("other-scope", request.id)).toBeNull();
    // The request's own handle stands for every file of the upload; where one file is asked for,
    // it is INVALID_INPUT naming how many files it holds.
    const resolver = new UploadHandleResolver({ store, minter, state });
    expect((await resolver.filesFor(request.handle, { scope: "s1" }))?.map((file) => file.name)).toEqual([
      "a.txt",
      "b.txt",
    ]);
    await expect(resolver.fileFor(request.handle, { scope: "s1" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      data: { count: 2 },
    });

    const result = request.resultFor(files);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({
      status: "uploaded",
      request_id: request.id,
      files: [
        { name: "a.txt", handle: resolver.handleFor(files[0] as never), sha256: sha256("alpha") },
        { name: "b.txt", handle: resolver.handleFor(files[1] as never), sha256: sha256("beta") },
      ],
    });
    expect(result.content[0]?.text).toContain(resolver.handleFor(files[1] as never));
    // Single-use: a second upload is refused.
    expect((await upload(request.uploadUrl, [["c.txt", "c"]]))?.status).toBe(410);
  });

  it("enforces the request's limits in the link", async () => {
    const { requests, upload } = setup();
    const request = await requests.create("s1", { message: "one small file", maxFiles: 1, maxBytes: 4 });
    expect((await upload(request.uploadUrl, [["big.txt", "12345"]]))?.status).toBe(413);
    expect(
      (
        await upload(request.uploadUrl, [
          ["a.txt", "1"],
          ["b.txt", "2"],
        ])
      )?.status,
    ).toBe(400);
    expect((await upload(request.uploadUrl, [["ok.txt", "1234"]]))?.status).toBe(201);
  });

  it("waits a bounded time (TIMEOUT) and stops on abort (ABORTED)", async () => {
    const { requests } = setup({ timeout: "150ms" });
    const request = await requests.create("s1", { message: "never uploaded" });
    const started = Date.now();
    expect(await codeOf(request.wait())).toBe("TIMEOUT");
    expect(Date.now() - started).toBeLessThan(2000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    expect(await codeOf(request.wait({ signal: controller.signal, timeout: 60 }))).toBe("ABORTED");
    expect(await codeOf(request.wait({ signal: AbortSignal.abort() }))).toBe("ABORTED");
  });

  it("fallback and declined results carry the link, the handle and a clear status", async () => {
    const { requests } = setup();
    const request = await requests.create("s1", { message: "Upload the logs", maxFiles: 3 });
    const fallback = request.fallbackResult();
    expect(fallback.isError).toBeUndefined();
    expect(fallback.content[0]?.text).toContain(request.url);
    expect(fallback.content[0]?.text).toContain(request.handle);
    expect(fallback.structuredContent).toMatchObject({
      status: "upload_required",
      request_id: request.id,
      url: request.url,
      handle: request.handle,
      max_files: 3,
    });
    expect(request.declinedResult("decline")).toMatchObject({
      isError: true,
      structuredContent: { status: "declined" },
    });
    expect(request.declinedResult("cancel")).toMatchObject({
      isError: true,
      structuredContent: { status: "cancelled" },
    });
  });

  it("validates options and requests", async () => {
    const { requests, store, state, minter } = setup();
    expect(codeOfSync(() => new FileRequests({ store, state, minter: {} as never }))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => new FileRequests({ store, state, minter, pollInterval: "1ms" }))).toBe(
      "INVALID_OPTION",
    );
    expect(codeOfSync(() => new FileRequests({ store, state, minter, maxFiles: 0 }))).toBe("INVALID_OPTION");
    expect(await codeOf(requests.create("s1", { message: "" }))).toBe("INVALID_INPUT");
    expect(await codeOf(requests.create("s1", { message: "x".repeat(1025) }))).toBe("INVALID_INPUT");
    expect(await codeOf(requests.create("s1", { message: "x", maxFiles: 5 }))).toBe("INVALID_INPUT");
    expect(await codeOf(requests.create("s1", { message: "x", accept: ["a,b"] }))).toBe("INVALID_INPUT");
    expect(await requests.filesOf("s1", "")).toBeNull();
    const paged = new FileRequests({
      store,
      state,
      minter,
      pageUrl: (url) => url.replace("/upload/", "/page/"),
    });
    expect((await paged.create("s1", { message: "x" })).url).toMatch(/\/files\/page\//);
  });
});
