import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createFileRoutes,
  type DownloadEvent,
  type FileRoutes,
  type UploadReplyFile,
} from "../../src/routes/create-file-routes.js";
import { scopeRef } from "../../src/scope/scope.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StateStore, StoredFile } from "../../src/storage/types.js";
import { ticketStateKey } from "../../src/uploads/upload-handle.js";
import { sha256 } from "../support/helpers.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const BASE = "http://127.0.0.1:9";

let dir: string;
let store: FileStore;
let state: StateStore;
let clock: number;
let minter: SignedUrlMinter;
let downloads: DownloadEvent[];
let stored: StoredFile[];
let routes: FileRoutes;

async function allFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  // A store that never wrote a byte has no folder yet (a refused small upload touches no disk).
  const entries = await readdir(root, { withFileTypes: true, recursive: true }).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  });
  for (const entry of entries) {
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

async function listAll(scope: string): Promise<StoredFile[]> {
  return (await store.list(scope)).files;
}

async function uploadUrl(scope: string, claims: Record<string, number> = {}, singleUse = false) {
  return minter.mint({ scope, fileId: "ticket-1", action: "upload", claims, singleUse });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-routes-"));
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  state = memoryState();
  clock = Date.UTC(2030, 0, 1);
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, state, now: () => clock });
  downloads = [];
  stored = [];
  routes = createFileRoutes({
    store,
    minter,
    state,
    maxBytes: 1024 * 1024,
    onDownload: (event) => {
      downloads.push(event);
    },
    onStored: (file) => {
      stored.push(file);
    },
    resourceUri: (file) => `file://uploads/${file.scope}/${encodeURIComponent(file.name)}`,
    authorize: (request) => request.headers.get("authorization") === "Bearer trusted-key",
  });
});

afterEach(async () => {
  await store.close?.();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

describe("createFileRoutes options", () => {
  it("refuses bad options with INVALID_OPTION", () => {
    const bad: Array<Record<string, unknown>> = [
      { store: undefined, minter },
      { store, minter: undefined },
      { store, minter, maxBytes: 0 },
      { store, minter, maxFiles: 1.5 },
      { store, minter, uploadTtl: "soon" },
      { store, minter, basePath: "files" },
      { store, minter, inlineTypes: ["png"] },
      { store, minter, onDownload: "yes" },
    ];
    for (const options of bad) {
      expect(() => createFileRoutes(options as never)).toThrowError(
        expect.objectContaining({ code: "INVALID_OPTION" }),
      );
    }
  });

  it("answers undefined for requests that are not its own", async () => {
    expect(await routes(new Request(`${BASE}/other/download/x`))).toBeUndefined();
    expect(await routes(new Request(`${BASE}/files`))).toBeUndefined();
    expect(await routes(new Request(`${BASE}/files/unknown/x`))).toBeUndefined();
    expect(await routes(new Request(`${BASE}/files/download/a/b`))).toBeUndefined();
    const noDirect = createFileRoutes({ store, minter });
    const response = await noDirect(new Request(`${BASE}/files/scopes/s/files/a.txt`, { method: "POST" }));
    expect(response).toBeUndefined();
  });
});

describe("download route", () => {
  const content = randomBytes(1000);
  let file: StoredFile;

  beforeEach(async () => {
    file = await store.put(content, {
      scope: "s1",
      name: "naïve report.bin",
      mimeType: "application/x-thing",
    });
  });

  it("streams the file with safe headers and fires onDownload once the body was read", async () => {
    const { url } = await minter.downloadUrl(file);
    const response = (await routes(new Request(url))) as Response;
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/x-thing");
    expect(response.headers.get("content-length")).toBe("1000");
    expect(response.headers.get("etag")).toBe(`"${sha256(content)}"`);
    expect(response.headers.get("accept-ranges")).toBe("bytes");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("cache-control")).toBe("private, no-store");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="naive report.bin"; filename*=UTF-8''na%C3%AFve%20report.bin`,
    );
    expect(downloads).toHaveLength(0);
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.equals(content)).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(downloads).toHaveLength(1);
    expect(downloads[0]).toMatchObject({ scope: "s1", bytes: 1000 });
    expect(downloads[0]?.file.id).toBe(file.id);
  });

  it("does not fire onDownload for HEAD, 304 or a body that was cancelled", async () => {
    const { url } = await minter.downloadUrl(file);
    const head = (await routes(new Request(url, { method: "HEAD" }))) as Response;
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("1000");
    expect(head.body).toBeNull();
    const notModified = (await routes(
      new Request(url, { headers: { "if-none-match": `"${sha256(content)}"` } }),
    )) as Response;
    expect(notModified.status).toBe(304);
    const cancelled = (await routes(new Request(url))) as Response;
    await cancelled.body?.cancel();
    await new Promise((resolve) => setImmediate(resolve));
    expect(downloads).toHaveLength(0);
  });

  it("serves inline only for allowlisted essences, parsed not substring-matched", async () => {
    const png = await store.put(randomBytes(10), { scope: "s1", name: "a.png", mimeType: "IMAGE/PNG; x=1" });
    const html = await store.put(Buffer.from("<script>"), {
      scope: "s1",
      name: "a.html",
      mimeType: "text/html; image/png",
    });
    const pngResponse = (await routes(new Request((await minter.downloadUrl(png)).url))) as Response;
    expect(pngResponse.headers.get("content-disposition")?.startsWith("inline;")).toBe(true);
    const htmlResponse = (await routes(new Request((await minter.downloadUrl(html)).url))) as Response;
    expect(htmlResponse.headers.get("content-disposition")?.startsWith("attachment;")).toBe(true);
    await pngResponse.body?.cancel();
    await htmlResponse.body?.cancel();
  });

  it.each([
    ["bytes=0-0", 206, 0, 0],
    ["bytes=-5", 206, 995, 999],
    ["bytes=990-", 206, 990, 999],
    ["bytes=10-5000", 206, 10, 999],
  ])("answers Range %s with %i", async (range, status, start, end) => {
    const { url } = await minter.downloadUrl(file);
    const response = (await routes(new Request(url, { headers: { range } }))) as Response;
    expect(response.status).toBe(status);
    expect(response.headers.get("content-range")).toBe(`bytes ${start}-${end}/1000`);
    expect(response.headers.get("content-length")).toBe(String(end - start + 1));
    const body = Buffer.from(await response.arrayBuffer());
    expect(body.equals(content.subarray(start, end + 1))).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(downloads[0]).toMatchObject({ bytes: end - start + 1, range: { start, end } });
  });

  it("answers a range past the end with 416 and ignores malformed or multi ranges", async () => {
    const { url } = await minter.downloadUrl(file);
    const past = (await routes(new Request(url, { headers: { range: "bytes=1000-" } }))) as Response;
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe("bytes */1000");
    expect(((await past.json()) as { error: { code: string } }).error.code).toBe("RANGE_NOT_SATISFIABLE");
    for (const range of ["bytes=5-1", "items=0-1", "bytes=0-1,5-6"]) {
      const response = (await routes(new Request(url, { headers: { range } }))) as Response;
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
    const staleIfRange = (await routes(
      new Request(url, { headers: { range: "bytes=0-0", "if-range": '"other"' } }),
    )) as Response;
    expect(staleIfRange.status).toBe(200);
    await staleIfRange.body?.cancel();
  });

  it("hands onDownload the verified extra claims of the token", async () => {
    const { url } = await minter.downloadUrl(file, { claims: { key: "key_abc", tier: 2, paid: true } });
    const response = (await routes(new Request(url))) as Response;
    await response.arrayBuffer();
    const plain = (await routes(new Request((await minter.downloadUrl(file)).url))) as Response;
    await plain.arrayBuffer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(downloads.map((event) => event.claims)).toEqual([{ key: "key_abc", tier: 2, paid: true }, {}]);
  });

  it("uses up a single-use download link only when it sends bytes (not on 304 or 416)", async () => {
    const { url } = await minter.mint({ scope: "s1", fileId: file.id, action: "download", singleUse: true });
    const notModified = (await routes(
      new Request(url, { headers: { "if-none-match": `"${sha256(content)}"` } }),
    )) as Response;
    expect(notModified.status).toBe(304);
    const past = (await routes(new Request(url, { headers: { range: "bytes=5000-" } }))) as Response;
    expect(past.status).toBe(416);
    const get = (await routes(new Request(url, { headers: { range: "bytes=0-9" } }))) as Response;
    expect(get.status).toBe(206);
    expect(Buffer.from(await get.arrayBuffer()).equals(content.subarray(0, 10))).toBe(true);
    const replay = (await routes(new Request(url))) as Response;
    expect(replay.status).toBe(410);
    expect(((await replay.json()) as { error: { code: string } }).error.code).toBe("TOKEN_ALREADY_USED");
  });

  it("lets only one of several concurrent GETs of a single-use download link through", async () => {
    const { url } = await minter.mint({ scope: "s1", fileId: file.id, action: "download", singleUse: true });
    const responses = (await Promise.all(
      Array.from({ length: 6 }, () => routes(new Request(url))),
    )) as Response[];
    expect(responses.map((r) => r.status).sort()).toEqual([200, 410, 410, 410, 410, 410]);
    await Promise.all(responses.map((r) => r.arrayBuffer()));
  });

  it("does not use up a single-use download link on HEAD", async () => {
    const { url } = await minter.mint({ scope: "s1", fileId: file.id, action: "download", singleUse: true });
    expect(((await routes(new Request(url, { method: "HEAD" }))) as Response).status).toBe(200);
    const get = (await routes(new Request(url))) as Response;
    expect(get.status).toBe(200);
    expect(Buffer.from(await get.arrayBuffer()).equals(content)).toBe(true);
    expect(((await routes(new Request(url))) as Response).status).toBe(410);
  });

  it("maps token failures to 401, 410 and 404", async () => {
    const { url, token } = await minter.downloadUrl(file);
    const status = async (target: string) => {
      const response = (await routes(new Request(target))) as Response;
      const body = (await response.json()) as { error: { code: string } };
      return [response.status, body.error.code];
    };
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const flipped = signature.startsWith("A") ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
    expect(await status(`${BASE}/files/download/${header}.${payload}.${flipped}`)).toEqual([
      401,
      "INVALID_TOKEN",
    ]);
    expect(await status(`${BASE}/files/download/not-a-token`)).toEqual([401, "INVALID_TOKEN"]);
    const upload = await uploadUrl("s1");
    expect(await status(`${BASE}/files/download/${upload.token}`)).toEqual([404, "NOT_FOUND"]);
    const missing = await minter.mint({ scope: "s2", fileId: file.id, action: "download" });
    expect(await status(missing.url)).toEqual([404, "NOT_FOUND"]);
    // Even an authentic token naming a path is only ever looked up as a store id.
    for (const [scope, fileId] of [
      ["s1", "../../../../etc/passwd"],
      ["../..", file.id],
      ["s1", `../s1/${file.id}`],
    ] as const) {
      const traversal = await minter.mint({ scope, fileId, action: "download" });
      expect(await status(traversal.url)).toEqual([404, "NOT_FOUND"]);
    }
    clock += 10 * 60_000;
    expect(await status(url)).toEqual([410, "TOKEN_EXPIRED"]);
  });

  it("answers other methods with 405 and an Allow header", async () => {
    const { url } = await minter.downloadUrl(file);
    const response = (await routes(new Request(url, { method: "DELETE" }))) as Response;
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
    const upload = await uploadUrl("s1");
    const get = (await routes(new Request(upload.url))) as Response;
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, PUT");
    const body = (await get.json()) as { error: { code: string; message: string } };
    expect(body.error).toMatchObject({ code: "METHOD_NOT_ALLOWED" });
    expect(body.error.message).toBe(
      "This is an upload link: send files to it with POST or PUT (multipart/form-data or the raw bytes); GET does nothing here",
    );
    expect(await (await routes(new Request(url, { method: "DELETE" })))?.json()).toMatchObject({
      error: { message: "This route accepts GET, HEAD only" },
    });
  });

  it("tells a person who opens an upload link in a browser what it is for (no upload page configured)", async () => {
    const upload = await uploadUrl("s1");
    const page = (await routes(
      new Request(upload.url, { headers: { accept: "text/html,*/*" } }),
    )) as Response;
    expect(page.status).toBe(405);
    expect(page.headers.get("allow")).toBe("POST, PUT");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain("This is an upload link");
    // The link is not used up: an upload with it still works.
    const form = new FormData();
    form.append("file", new Blob(["still works"]), "a.txt");
    const post = (await routes(new Request(upload.url, { method: "POST", body: form }))) as Response;
    expect(post.status).toBe(201);
  });
});

describe("upload route", () => {
  interface Reply {
    files: UploadReplyFile[];
  }

  it("stores a multipart batch, replies with handles, and records the ticket", async () => {
    const a = randomBytes(5000);
    const b = Buffer.from("hello, world");
    const form = new FormData();
    form.append("file", new Blob([a], { type: "application/octet-stream" }), "a.bin");
    form.append("sha256", sha256(a));
    form.append("file", new Blob([b], { type: "text/plain" }), "b.txt");
    form.append("sha256", sha256(b));
    const { url } = await uploadUrl("s1");
    const response = (await routes(new Request(url, { method: "POST", body: form }))) as Response;
    expect(response.status).toBe(201);
    const reply = (await response.json()) as Reply;
    expect(reply.files.map((f) => [f.name, f.size, f.sha256])).toEqual([
      ["a.bin", 5000, sha256(a)],
      ["b.txt", 12, sha256(b)],
    ]);
    expect(reply.files[0]?.handle).toBe(`upload://sessions/${scopeRef("s1", minter)}/${reply.files[0]?.id}`);
    expect(reply.files[1]?.uri).toBe("file://uploads/s1/b.txt");
    expect(reply.files[1]?.mimeType.startsWith("text/plain")).toBe(true);
    const files = await listAll("s1");
    expect(files.map((f) => f.kind)).toEqual(["upload", "upload"]);
    expect(files.every((f) => f.expiresAt !== undefined)).toBe(true);
    expect(stored.map((f) => f.id)).toEqual(reply.files.map((f) => f.id));
    expect(await state.get(ticketStateKey("ticket-1"))).toEqual({
      scope: "s1",
      files: reply.files.map((f) => f.id),
    });
  });

  it("stores a raw body named by Content-Disposition or ?filename=", async () => {
    // A PDF by its first bytes: the stored type is what the bytes show (random bytes named .pdf are not one).
    const bytes = Buffer.concat([Buffer.from("%PDF-1.7\n"), randomBytes(291)]);
    const first = await uploadUrl("s1");
    const byHeader = (await routes(
      new Request(first.url, {
        method: "PUT",
        body: bytes,
        headers: {
          "content-disposition": `attachment; filename="x.bin"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.pdf`,
          "x-content-sha256": sha256(bytes),
        },
      }),
    )) as Response;
    expect(byHeader.status).toBe(201);
    expect(((await byHeader.json()) as Reply).files[0]).toMatchObject({
      name: "日本.pdf",
      mimeType: "application/pdf",
    });
    const second = await uploadUrl("s1");
    const byQuery = (await routes(
      new Request(`${second.url}?filename=../../etc/passwd`, { method: "POST", body: bytes }),
    )) as Response;
    expect(((await byQuery.json()) as Reply).files[0]?.name).toBe("passwd");
    const names = (await listAll("s1")).map((f) => f.name).sort();
    expect(names).toEqual(["passwd", "日本.pdf"]);
  });

  it("refuses a file over the ticket cap with 413 and stores nothing", async () => {
    const { url } = await uploadUrl("s1", { max_bytes: 100 });
    const raw = (await routes(new Request(url, { method: "POST", body: randomBytes(101) }))) as Response;
    expect(raw.status).toBe(413);
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe("FILE_TOO_LARGE");
    // Without a Content-Length the cap is enforced while streaming.
    const chunks = [randomBytes(60), randomBytes(60)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const second = await uploadUrl("s1", { max_bytes: 100 });
    const streamed = (await routes(
      new Request(second.url, { method: "POST", body, duplex: "half" } as RequestInit),
    )) as Response;
    expect(streamed.status).toBe(413);
    expect(await listAll("s1")).toEqual([]);
    expect(await allFiles(join(dir, "store"))).toEqual([]);
  });

  it("is all-or-nothing: one bad file in a batch stores none of them", async () => {
    const good = randomBytes(50);
    const form = new FormData();
    form.append("file", new Blob([good]), "good.bin");
    form.append("file", new Blob([randomBytes(150)]), "big.bin");
    const { url } = await uploadUrl("s1", { max_bytes: 100 });
    const response = (await routes(new Request(url, { method: "POST", body: form }))) as Response;
    expect(response.status).toBe(413);
    const mismatch = new FormData();
    mismatch.append("file", new Blob([good]), "one.bin");
    mismatch.append("file", new Blob([good]), "two.bin");
    mismatch.append("sha256", sha256(good));
    mismatch.append("sha256", "0".repeat(64));
    const second = await uploadUrl("s1");
    const bad = (await routes(new Request(second.url, { method: "POST", body: mismatch }))) as Response;
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("DIGEST_MISMATCH");
    expect(await listAll("s1")).toEqual([]);
    expect(await allFiles(join(dir, "store"))).toEqual([]);
    expect(stored).toEqual([]);
  });

  it("matches sha256 fields to files by order, wherever they sit, and an empty one skips a file", async () => {
    const a = randomBytes(100);
    const b = randomBytes(200);
    const c = randomBytes(300);
    const form = new FormData();
    form.append("sha256", sha256(a)); // before its file
    form.append("file", new Blob([a]), "a.bin");
    form.append("file", new Blob([b]), "b.bin");
    form.append("sha256", ""); // b: no digest
    form.append("file", new Blob([c]), "c.bin");
    form.append("sha256", sha256(c).toUpperCase());
    const { url } = await uploadUrl("s1");
    const response = (await routes(new Request(url, { method: "POST", body: form }))) as Response;
    expect(response.status).toBe(201);
    expect(((await response.json()) as Reply).files.map((f) => f.sha256)).toEqual([
      sha256(a),
      sha256(b),
      sha256(c),
    ]);

    // Swapped digests are caught (the order is what binds a digest to a file).
    const swapped = new FormData();
    swapped.append("file", new Blob([a]), "a.bin");
    swapped.append("file", new Blob([b]), "b.bin");
    swapped.append("sha256", sha256(b));
    swapped.append("sha256", sha256(a));
    const second = await uploadUrl("s2");
    const bad = (await routes(new Request(second.url, { method: "POST", body: swapped }))) as Response;
    expect(bad.status).toBe(422);
    expect(await listAll("s2")).toEqual([]);
  });

  it("refuses a number of sha256 fields other than one per file with 400 and stores nothing", async () => {
    const a = randomBytes(100);
    const b = randomBytes(100);
    const fewer = new FormData();
    fewer.append("file", new Blob([a]), "a.bin");
    fewer.append("file", new Blob([b]), "b.bin");
    fewer.append("sha256", sha256(b)); // meant for b: must not be checked against a, nor dropped
    const more = new FormData();
    more.append("file", new Blob([a]), "a.bin");
    more.append("sha256", sha256(a));
    more.append("sha256", sha256(a));
    const malformed = new FormData();
    malformed.append("file", new Blob([a]), "a.bin");
    malformed.append("sha256", "not-hex");
    for (const form of [fewer, more, malformed]) {
      const { url } = await uploadUrl("s1");
      const response = (await routes(new Request(url, { method: "POST", body: form }))) as Response;
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("INVALID_REQUEST");
    }
    expect(await listAll("s1")).toEqual([]);
    expect(await allFiles(join(dir, "store"))).toEqual([]);
  });

  it("rolls back files already committed when a later commit of the batch fails", async () => {
    let commits = 0;
    const flaky: FileStore = {
      ...store,
      async stage(source, options) {
        const staged = await store.stage(source, options);
        return {
          ...staged,
          file: staged.file,
          abort: () => staged.abort(),
          async commit() {
            if (++commits === 2) {
              await staged.abort();
              throw new Error("disk full");
            }
            return staged.commit();
          },
        };
      },
    };
    const errors: unknown[] = [];
    const flakyRoutes = createFileRoutes({ store: flaky, minter, onError: (error) => errors.push(error) });
    const form = new FormData();
    for (const name of ["a.bin", "b.bin", "c.bin"]) form.append("file", new Blob([randomBytes(64)]), name);
    const { url } = await uploadUrl("s1");
    const response = (await flakyRoutes(new Request(url, { method: "POST", body: form }))) as Response;
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("STORAGE_ERROR");
    expect(errors).toHaveLength(1);
    expect(await listAll("s1")).toEqual([]);
    expect(await allFiles(join(dir, "store"))).toEqual([]);
  });

  it("answers malformed multipart, a missing boundary and too many files with 400", async () => {
    const cases: Array<{
      headers: Record<string, string>;
      body: string | FormData;
      claims?: Record<string, number>;
    }> = [
      { headers: { "content-type": "multipart/form-data" }, body: "x" },
      {
        headers: { "content-type": "multipart/form-data; boundary=XX" },
        body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc',
      },
      { headers: { "content-type": "multipart/form-data; boundary=XX" }, body: "--XX--\r\n" },
    ];
    const many = new FormData();
    for (let i = 0; i < 3; i++) many.append("file", new Blob(["x"]), `${i}.txt`);
    cases.push({ headers: {}, body: many, claims: { max_files: 2 } });
    for (const { headers, body, claims } of cases) {
      const { url } = await uploadUrl("s1", claims);
      const response = (await routes(new Request(url, { method: "POST", headers, body }))) as Response;
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("INVALID_REQUEST");
    }
    expect(await listAll("s1")).toEqual([]);
    expect(await allFiles(join(dir, "store"))).toEqual([]);
  });

  it("sanitizes traversal in multipart file names; bytes never leave the store folder", async () => {
    const form = new FormData();
    form.append("file", new Blob(["evil"]), "../../../../tmp/evil.sh");
    form.append("file", new Blob(["evil2"]), "..\\..\\windows\\evil.bat");
    const { url } = await uploadUrl("s1");
    const response = (await routes(new Request(url, { method: "POST", body: form }))) as Response;
    expect(response.status).toBe(201);
    const names = (await listAll("s1")).map((f) => f.name);
    expect(names).toEqual(["evil.sh", "evil.bat"]);
    const onDisk = await allFiles(dir);
    expect(onDisk.every((path) => path.startsWith(join(dir, "store")))).toBe(true);
    expect(onDisk.some((path) => path.includes("evil"))).toBe(false);
  });

  it("refuses a replayed single-use ticket with 410", async () => {
    const { url } = await uploadUrl("s1", {}, true);
    const first = (await routes(new Request(url, { method: "POST", body: "one" }))) as Response;
    expect(first.status).toBe(201);
    const again = (await routes(new Request(url, { method: "POST", body: "two" }))) as Response;
    expect(again.status).toBe(410);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("TOKEN_ALREADY_USED");
    expect(await listAll("s1")).toHaveLength(1);
  });

  it("does not use up a single-use ticket when the upload fails, so it can be retried", async () => {
    const { url } = await uploadUrl("s1", { max_bytes: 100 }, true);
    const tooBig = (await routes(new Request(url, { method: "POST", body: randomBytes(101) }))) as Response;
    expect(tooBig.status).toBe(413);
    const badDigest = (await routes(
      new Request(`${url}?sha256=${"0".repeat(64)}`, { method: "POST", body: "abc" }),
    )) as Response;
    expect(badDigest.status).toBe(422);
    expect(await listAll("s1")).toEqual([]);
    const retry = (await routes(new Request(url, { method: "POST", body: "fits" }))) as Response;
    expect(retry.status).toBe(201);
    const replay = (await routes(new Request(url, { method: "POST", body: "again" }))) as Response;
    expect(replay.status).toBe(410);
    expect(await listAll("s1")).toHaveLength(1);
  });

  it("lets only one of several concurrent uploads on one single-use ticket commit", async () => {
    const { url } = await uploadUrl("s1", {}, true);
    const responses = (await Promise.all(
      Array.from({ length: 8 }, (_, i) => routes(new Request(url, { method: "POST", body: `body ${i}` }))),
    )) as Response[];
    const statuses = responses.map((response) => response.status).sort();
    // The others are refused: 409 while the winner's upload runs (the ticket is claimed when an
    // upload starts), 410 once it has used the ticket up.
    expect(statuses.filter((status) => status === 201)).toEqual([201]);
    expect(
      statuses.filter((status) => status !== 201).every((status) => status === 409 || status === 410),
    ).toBe(true);
    expect(await listAll("s1")).toHaveLength(1);
    expect(await allFiles(join(dir, "store"))).toHaveLength(1); // one small file: its record, bytes inline
  });

  it("answers an aborted request body without storing anything", async () => {
    const controller = new AbortController();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(streamController) {
        sent++;
        if (sent === 3) {
          controller.abort();
          streamController.error(new Error("client went away"));
          return;
        }
        streamController.enqueue(randomBytes(1000));
      },
    });
    const { url } = await uploadUrl("s1");
    const response = (await routes(
      new Request(url, { method: "POST", body, duplex: "half", signal: controller.signal } as RequestInit),
    )) as Response;
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ABORTED");
    expect(await listAll("s1")).toEqual([]);
    expect(await allFiles(join(dir, "store"))).toEqual([]);
  });
});

describe("direct upload route", () => {
  it("stores for an authorized caller and runs onStored", async () => {
    const response = (await routes(
      new Request(`${BASE}/files/scopes/chat%2042/files/notes%2Fa%20b.txt`, {
        method: "POST",
        body: "direct",
        headers: { authorization: "Bearer trusted-key", "content-type": "text/plain" },
      }),
    )) as Response;
    expect(response.status).toBe(201);
    const files = await listAll("chat 42");
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ name: "notes/a b.txt", kind: "upload", size: 6 });
    expect(stored.map((f) => f.id)).toEqual([files[0]?.id]);
  });

  it("refuses a caller authorize rejects with 403 and stores nothing", async () => {
    const response = (await routes(
      new Request(`${BASE}/files/scopes/s1/files/a.txt`, {
        method: "POST",
        body: "x",
        headers: { authorization: "Bearer wrong" },
      }),
    )) as Response;
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect(await listAll("s1")).toEqual([]);
  });
});
