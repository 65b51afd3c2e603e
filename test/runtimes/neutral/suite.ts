/**
 * The core suite's runtime-neutral part (issue 46): stores (memory), signing, registry, routes,
 * uploads and the no-disk `FileBridge`, written against web-standard APIs only (no `node:*` import,
 * no `Buffer`, no `process`), so the same file runs on Node, Deno and Bun. `run-suite.test.ts`
 * bundles it with esbuild and runs it on each runtime; it prints one JSON line
 * `{"runtime","passed","failed","failures"}` and exits 1 when a case failed.
 */
import {
  Artifacts,
  createFileRoutes,
  FileBridge,
  isFileBridgeError,
  memoryState,
  memoryStore,
  ResourceRegistry,
  SignedUrlMinter,
  UploadHandleResolver,
} from "../../../src/index.js";
import { uploadPageRenderer } from "../../../src/ui/index.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const BASE = "http://127.0.0.1:9";

type Case = { name: string; run: () => Promise<void> };
const cases: Case[] = [];
function test(name: string, run: () => Promise<void>): void {
  cases.push({ name, run });
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
async function codeOf(promise: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    return isFileBridgeError(error) ? error.code : `not a FileBridgeError: ${String(error)}`;
  }
  return "no error";
}
async function readAll(stream: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as AsyncIterable<Uint8Array>) chunks.push(chunk);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
function randomBytes(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += 65536)
    crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65536)));
  return bytes;
}

function setup() {
  const store = memoryStore();
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, state });
  const routes = createFileRoutes({ store, minter, state, maxBytes: 1024 * 1024 });
  const uploads = new UploadHandleResolver({ store, minter, state, maxBytes: 1024 * 1024, maxFiles: 3 });
  return { store, state, minter, routes, uploads };
}

const runtime =
  typeof (globalThis as { Deno?: unknown }).Deno === "object"
    ? "deno"
    : typeof (globalThis as { Bun?: unknown }).Bun === "object"
      ? "bun"
      : "node";

// ---- stores (memory) ----

test("memoryStore: put, head, ranged read, list, delete", async () => {
  const { store } = setup();
  const bytes = randomBytes(5000);
  const file = await store.put(bytes, { scope: "s1", name: "a.bin", mimeType: "application/octet-stream" });
  assert(file.size === 5000, "size");
  assert(/^[0-9a-f]{64}$/.test(file.sha256), "sha256 is hex");
  const whole = await store.read("s1", file.id);
  assert(whole && equalBytes(await readAll(whole), bytes), "whole read");
  const part = await store.read("s1", file.id, { start: 100, end: 199 });
  assert(part && equalBytes(await readAll(part), bytes.subarray(100, 200)), "ranged read");
  assert((await store.head("s2", file.id)) === null, "other scope sees nothing");
  assert((await store.list("s1")).files.length === 1, "listed");
  assert(await store.delete("s1", file.id), "deleted");
  assert((await store.head("s1", file.id)) === null, "gone");
});

test("memoryStore: a web ReadableStream source is streamed, and the cap refuses more", async () => {
  const store = memoryStore({ maxTotalBytes: 1000, maxScopeShare: 1 });
  const body = new Blob([randomBytes(600), randomBytes(600)]).stream();
  assert((await codeOf(store.put(body, { scope: "s1", name: "big.bin" }))) === "FILE_TOO_LARGE", "cap");
  assert((await store.list("s1")).files.length === 0, "nothing stored");
});

test("memoryState: set, get, setIfAbsent once, delete", async () => {
  const state = memoryState();
  await state.set("k", { a: 1 }, { ttl: 60 });
  assert(JSON.stringify(await state.get("k")) === '{"a":1}', "get");
  assert((await state.setIfAbsent("once", 1)) === true, "first claim");
  assert((await state.setIfAbsent("once", 1)) === false, "second claim");
  assert(await state.delete("k"), "delete");
  assert((await state.get("k")) === null, "gone");
});

// ---- signing ----

test("SignedUrlMinter: mint and verify a download URL", async () => {
  const { minter } = setup();
  // A scope long enough that the token's random base64url (jti, signature) never contains it by
  // chance: "s1" did, in about one run in forty (2 of 4,096 pairs at each of ~100 positions).
  const scope = "tenant-scope-not-in-urls";
  const minted = await minter.downloadUrl({ scope, id: "file-1" });
  const token = minted.url.slice(minted.url.lastIndexOf("/") + 1);
  const verified = await minter.verify(token, { action: "download", scope, fileId: "file-1" });
  assert(verified.fileId === "file-1" && verified.scope === scope, "claims");
  assert(!minted.url.includes(scope), "scope not printed into the URL");
});

test("SignedUrlMinter: tampered, other-scope, other-action and expired tokens are refused", async () => {
  let clock = Date.UTC(2030, 0, 1);
  const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE, now: () => clock });
  const minted = await minter.downloadUrl({ scope: "s1", id: "file-1" });
  const token = minted.url.slice(minted.url.lastIndexOf("/") + 1);
  const [h, p, s] = token.split(".") as [string, string, string];
  const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith("AA") ? "BA" : "AA"}`;
  assert((await codeOf(minter.verify(flipped, { action: "download" }))) === "INVALID_TOKEN", "signature");
  const otherPayload = `${h}.${p.slice(0, -1)}${p.endsWith("A") ? "B" : "A"}.${s}`;
  assert((await codeOf(minter.verify(otherPayload, { action: "download" }))) === "INVALID_TOKEN", "payload");
  const other = new SignedUrlMinter({ secret: `${SECRET}-other`, baseUrl: BASE });
  assert((await codeOf(other.verify(token, { action: "download" }))) === "INVALID_TOKEN", "other key");
  assert((await codeOf(minter.verify(token, { action: "download", scope: "s2" }))) === "NOT_FOUND", "scope");
  assert((await codeOf(minter.verify(token, { action: "upload" }))) === "NOT_FOUND", "action");
  clock += 3_600_000;
  assert((await codeOf(minter.verify(token, { action: "download" }))) === "TOKEN_EXPIRED", "expired");
});

test("SignedUrlMinter: a single-use token works once", async () => {
  const { minter } = setup();
  const minted = await minter.mint({ scope: "s1", fileId: "t1", action: "upload", singleUse: true });
  const token = minted.url.slice(minted.url.lastIndexOf("/") + 1);
  await minter.verify(token, { action: "upload" });
  assert((await codeOf(minter.verify(token, { action: "upload" }))) === "TOKEN_ALREADY_USED", "reuse");
});

// ---- registry and artifacts ----

test("ResourceRegistry: add, URI, link with a download URL, resolve in scope only", async () => {
  const { store, minter } = setup();
  const registry = new ResourceRegistry({ store, minter });
  const bytes = new TextEncoder().encode("hello registry");
  const file = await registry.add(bytes, { scope: "s1", name: "hello world.txt", mimeType: "text/plain" });
  const uri = registry.uriFor(file);
  assert(uri.startsWith("file://uploads/") && !uri.includes("/s1/"), `opaque scope in ${uri}`);
  assert(registry.parseUri(uri)?.path === file.name, "parsed back");
  const link = await registry.link(file);
  assert(JSON.stringify(link).includes(`${BASE}/files/download/`), "download URL in the link");
  const resolver = registry.resolver();
  const found = await resolver.resolve(uri, { scope: "s1" } as never);
  assert(found && typeof found === "object", "resolved in scope");
  assert((await resolver.resolve(uri, { scope: "s2" } as never)) === null, "other scope: like unknown");
  await registry.close();
});

test("Artifacts: capture bytes, link and download URL", async () => {
  const { store, minter, routes } = setup();
  const artifacts = new Artifacts({ store, minter });
  const bytes = new TextEncoder().encode("an artifact");
  const captured = await artifacts.capture({ scope: "s1", bytes, name: "out.txt" });
  assert(captured.uri.startsWith("artifact://"), "artifact URI");
  const url = captured._meta.download_url;
  assert(typeof url === "string", "download URL");
  const response = (await routes(new Request(url))) as Response;
  assert(response.status === 200, `status ${response.status}`);
  assert(equalBytes(new Uint8Array(await response.arrayBuffer()), bytes), "downloaded bytes");
});

// ---- routes ----

test("routes: an upload with a signed ticket, the handle resolves to the exact bytes", async () => {
  const { routes, uploads } = setup();
  const ticket = await uploads.createTicket("s1");
  const bytes = randomBytes(70_000);
  const form = new FormData();
  form.append(ticket.field, new Blob([bytes]), "data.bin");
  const response = (await routes(new Request(ticket.upload_url, { method: "POST", body: form }))) as Response;
  assert(response.status === 201 || response.status === 200, `upload status ${response.status}`);
  const files = await uploads.filesFor(ticket.handle, { scope: "s1" });
  assert(files?.length === 1 && files[0]?.size === bytes.byteLength, "one file");
  const again = (await routes(new Request(ticket.upload_url, { method: "POST", body: form }))) as Response;
  assert(again.status >= 400, "a single-use ticket works once");
});

test("routes: a raw PUT upload, then a ranged download of the exact bytes", async () => {
  const { routes, uploads, minter, store } = setup();
  const ticket = await uploads.createTicket("s1", { filename: "raw.bin" });
  const bytes = randomBytes(10_000);
  const put = (await routes(
    new Request(ticket.upload_url, {
      method: "PUT",
      body: bytes,
      headers: {
        "content-type": "application/octet-stream",
        "content-disposition": 'attachment; filename="raw.bin"',
      },
    }),
  )) as Response;
  assert(put.status === 201 || put.status === 200, `put status ${put.status}`);
  const [file] = (await store.list("s1")).files;
  assert(file, "stored");
  const { url } = await minter.downloadUrl(file);
  const ranged = (await routes(new Request(url, { headers: { range: "bytes=1000-1999" } }))) as Response;
  assert(ranged.status === 206, `range status ${ranged.status}`);
  assert(ranged.headers.get("content-range") === "bytes 1000-1999/10000", "content-range");
  assert(equalBytes(new Uint8Array(await ranged.arrayBuffer()), bytes.subarray(1000, 2000)), "ranged bytes");
  const whole = (await routes(new Request(url))) as Response;
  assert(equalBytes(new Uint8Array(await whole.arrayBuffer()), bytes), "whole bytes");
});

test("routes: another scope's handle and download are refused exactly like unknown ones", async () => {
  const { routes, uploads, minter, store } = setup();
  const ticket = await uploads.createTicket("s1");
  const form = new FormData();
  form.append(ticket.field, new Blob([randomBytes(100)]), "a.bin");
  await routes(new Request(ticket.upload_url, { method: "POST", body: form }));
  const foreign = await codeOf(uploads.filesFor(ticket.handle, { scope: "s2" }));
  const unknownTicket = await uploads.createTicket("s1");
  const unknownHandle = `${unknownTicket.handle.slice(0, -4)}zzzz`;
  const unknown = await codeOf(uploads.filesFor(unknownHandle, { scope: "s2" }));
  assert(foreign === unknown, `foreign ${foreign} vs unknown ${unknown}`);
  const [file] = (await store.list("s1")).files;
  assert(file, "stored");
  assert((await store.head("s2", file.id)) === null, "store: other scope");
  const wrong = await minter.downloadUrl({ scope: "s2", id: file.id });
  const missing = await minter.downloadUrl({ scope: "s1", id: "no-such-file" });
  const a = (await routes(new Request(wrong.url))) as Response;
  const b = (await routes(new Request(missing.url))) as Response;
  assert(a.status === 404 && b.status === 404, `statuses ${a.status} ${b.status}`);
  assert((await a.text()) === (await b.text()), "same body");
});

test("routes: tus upload (create, patch in two chunks, head) to the exact bytes", async () => {
  const { routes, uploads, store } = setup();
  const ticket = await uploads.createTicket("s1");
  const bytes = randomBytes(3000);
  const endpoint = ticket.upload_url.replace("/upload/", "/tus/");
  const created = (await routes(
    new Request(endpoint, {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": "3000",
        "upload-metadata": `filename ${btoa("t.bin")}`,
      },
    }),
  )) as Response;
  assert(created.status === 201, `create status ${created.status}`);
  const location = new URL(created.headers.get("location") as string, endpoint).href;
  for (const [from, to] of [
    [0, 1000],
    [1000, 3000],
  ] as const) {
    const patched = (await routes(
      new Request(location, {
        method: "PATCH",
        body: bytes.slice(from, to),
        headers: {
          "tus-resumable": "1.0.0",
          "upload-offset": String(from),
          "content-type": "application/offset+octet-stream",
        },
      }),
    )) as Response;
    assert(patched.status === 204, `patch status ${patched.status}`);
  }
  const [file] = (await store.list("s1")).files;
  assert(file?.size === 3000, "committed");
  const read = await store.read("s1", file.id);
  assert(read && equalBytes(await readAll(read), bytes), "tus bytes");
});

test("routes: the upload page is served for a browser", async () => {
  const { store, state, minter, uploads } = setup();
  const routes = createFileRoutes({ store, minter, state, uploadPage: uploadPageRenderer() });
  const ticket = await uploads.createTicket("s1", { message: "The report" });
  const page = (await routes(
    new Request(ticket.upload_url, { headers: { accept: "text/html" } }),
  )) as Response;
  assert(page.status === 200, `page status ${page.status}`);
  assert((page.headers.get("content-type") ?? "").startsWith("text/html"), "html");
  assert((await page.text()).includes("The report"), "message shown");
});

// ---- FileBridge without a disk ----

test("FileBridge without a disk: bytes and stream, path refused with PATH_UNAVAILABLE", async () => {
  const bridge = new FileBridge({ disk: false });
  const file = await bridge.resolve(`data:text/plain;name=n.txt;base64,${btoa("no disk here")}`, {
    scope: "s1",
  });
  try {
    assert(new TextDecoder().decode(await file.bytes()) === "no disk here", "bytes");
    assert(new TextDecoder().decode(await readAll(file.stream())) === "no disk here", "stream");
    assert((await codeOf(() => file.path)) === "PATH_UNAVAILABLE", "path");
  } finally {
    await file.dispose();
  }
});

test("FileBridge detects the disk: none on Deno without permissions, a temp file on Node and Bun", async () => {
  const bridge = new FileBridge();
  const file = await bridge.resolve(`data:text/plain;base64,${btoa("detected")}`, { scope: "s1" });
  try {
    if (runtime === "deno") assert((await codeOf(() => file.path)) === "PATH_UNAVAILABLE", "no disk on deno");
    else assert(typeof file.path === "string" && file.path.endsWith(".txt"), "a temp file");
    assert(new TextDecoder().decode(await file.bytes()) === "detected", "bytes");
  } finally {
    await file.dispose();
    await bridge.close();
  }
});

test("withFiles without a disk: pass 'file' reads bytes, pass 'path' answers PATH_UNAVAILABLE", async () => {
  const bridge = new FileBridge({ disk: false });
  const args = { doc: `data:text/plain;base64,${btoa("tool input")}` };
  const reads = bridge.withFiles(
    async ({ doc }: { doc: { bytes(): Promise<Uint8Array> } }) => ({
      content: [{ type: "text", text: new TextDecoder().decode(await doc.bytes()) }],
    }),
    { fields: ["doc"], pass: "file" },
  );
  const read = (await reads(args as never, {})) as { isError?: boolean; content: Array<{ text: string }> };
  assert(!read.isError && read.content[0]?.text === "tool input", `file: ${JSON.stringify(read)}`);
  let ran = false;
  const paths = bridge.withFiles(
    async () => {
      ran = true;
      return { content: [] };
    },
    { fields: ["doc"] },
  );
  const refused = (await paths(args, {})) as { isError?: boolean; content: Array<{ text: string }> };
  assert(refused.isError === true && !ran, "refused before the handler");
  assert(refused.content[0]?.text.includes("PATH_UNAVAILABLE"), `code named: ${JSON.stringify(refused)}`);
});

const failures: Array<{ name: string; error: string }> = [];
let passed = 0;
for (const c of cases) {
  try {
    await c.run();
    passed++;
  } catch (error) {
    failures.push({
      name: c.name,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
}
console.log(JSON.stringify({ runtime, passed, failed: failures.length, failures }));
if (failures.length > 0) {
  (globalThis as { Deno?: { exit(code: number): never } }).Deno?.exit(1);
  (globalThis as unknown as { process?: { exit(code: number): never } }).process?.exit(1);
}
