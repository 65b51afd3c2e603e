/**
 * tus requests through the Node adapter take a native path, as downloads and ticket `PUT`s do: the
 * routes read the `IncomingMessage` through a request view and answer with a plain status, headers
 * and text, and no web `Request`, `Response` or `Headers` is made. A tus server then never loads
 * Node's fetch implementation (undici, about 1.2 MB of V8 old generation), which kept the tus bench
 * server at the 8 MB above which V8 runs full GCs while big bodies stream in (issue 43).
 *
 * The same tus client flow (written from the tus 1.0 text: discovery, CORS preflight, creation,
 * HEAD, PATCH in two chunks, a wrong offset, a bad `Tus-Resumable`, `X-HTTP-Method-Override`,
 * termination, a foreign origin) runs against two servers on the same routes: one with the routes
 * given to `toNodeHandler` (the native path), one with them wrapped in a plain function (which the
 * adapter can only serve through a web `Request`). Every answer must be the same, byte for byte,
 * but for the upload's own id, dates and handle.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toNodeHandler } from "../../src/node/index.js";
import { createFileRoutes, type FileRoutes } from "../../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { fsStore } from "../../src/storage/fs-store.js";
import { memoryState } from "../../src/storage/memory-state.js";
import type { FileStore, StoredFile } from "../../src/storage/types.js";
import { fsTusStaging } from "../../src/uploads/tus/fs-staging.js";
import { close, listen } from "../http/server-helpers.js";
import { type Reply, send, WebObjects } from "./raw-request.js";

const SECRET = "a-test-secret-that-is-long-enough-0123456789";
const APP = "https://app.example";

let dir: string;
let store: FileStore;
let minter: SignedUrlMinter;
let routes: FileRoutes;
let native: Server;
let web: Server;
let nativeOrigin: string;
let webOrigin: string;
let stored: StoredFile[];
/** The scopes a creation asked the rate limit about (a hook that never reads `info.request`). */
let limited: string[];
let next = 0;

/** Web objects made while a native request was served, by class. */
const webObjects = new WebObjects();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-native-tus-"));
  store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  const state = memoryState();
  native = createServer();
  web = createServer();
  nativeOrigin = await listen(native);
  webOrigin = await listen(web);
  minter = new SignedUrlMinter({ secret: SECRET, baseUrl: nativeOrigin, state });
  stored = [];
  limited = [];
  routes = createFileRoutes({
    store,
    minter,
    state,
    allowedOrigins: [APP],
    onStored: (file) => void stored.push(file),
    rateLimit: (info) => {
      limited.push(info.scope);
      return true;
    },
    tus: { staging: fsTusStaging(join(dir, "staging")) },
  });
  native.on("request", toNodeHandler(routes));
  // A plain function: the adapter knows no native answer of it, so it takes the web path.
  web.on(
    "request",
    toNodeHandler((request) => routes(request)),
  );
  webObjects.reset();
  webObjects.counting = false;
  webObjects.install();
});

afterEach(async () => {
  webObjects.restore();
  await close(native);
  await close(web);
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

async function endpoint(origin: string): Promise<string> {
  next += 1;
  const { token } = await minter.mint({
    scope: "s1",
    fileId: `ticket-${next}`,
    action: "upload",
    singleUse: true,
    ttl: "1h",
  });
  return `${origin}/files/tus/${token}`;
}

const TUS = { "tus-resumable": "1.0.0" };
const content = randomBytes(300_000);
const first = content.subarray(0, 120_000);
const second = content.subarray(120_000);
const metadata = `filename ${Buffer.from("report.bin").toString("base64")}`;

/** One step of the client flow: what it sent, and the reply. */
interface Step {
  name: string;
  reply: Reply;
}

/**
 * The tus client flow against `origin`; each request is counted for web objects when `count` is set.
 * The client side follows the tus 1.0 text: `Location` of the creation is the upload URL, `HEAD`
 * tells the offset, `PATCH` sends `application/offset+octet-stream` at that offset.
 */
async function flow(origin: string, count: boolean): Promise<Step[]> {
  const steps: Step[] = [];
  const step = async (
    name: string,
    url: string,
    method: string,
    headers: Record<string, string>,
    body?: Buffer,
  ) => {
    webObjects.counting = count;
    const reply = await send(url, method, headers, body);
    webObjects.counting = false;
    if (count)
      expect(webObjects.made, `${name}: no web Request, Response or Headers`).toEqual({
        Request: 0,
        Response: 0,
        Headers: 0,
      });
    steps.push({ name, reply });
    return reply;
  };
  const url = await endpoint(origin);
  await step("discovery", url, "OPTIONS", { ...TUS });
  await step("preflight", url, "OPTIONS", {
    origin: APP,
    "access-control-request-method": "POST",
    "access-control-request-headers": "tus-resumable, upload-length",
  });
  const created = await step("create", url, "POST", {
    ...TUS,
    origin: APP,
    "upload-length": String(content.length),
    "upload-metadata": metadata,
  });
  expect(created.status).toBe(201);
  const upload = new URL(created.headers.location as string, url).href;
  expect(upload.startsWith(`${url}/`)).toBe(true);
  const head0 = await step("head at 0", upload, "HEAD", { ...TUS, origin: APP });
  expect(head0.headers["upload-offset"]).toBe("0");
  const patch = { ...TUS, "content-type": "application/offset+octet-stream" };
  const one = await step("patch 1", upload, "PATCH", { ...patch, "upload-offset": "0" }, first);
  expect(one.status).toBe(204);
  expect(one.headers["upload-offset"]).toBe(String(first.length));
  const stale = await step(
    "patch at a wrong offset",
    upload,
    "PATCH",
    { ...patch, "upload-offset": "0" },
    second,
  );
  expect(stale.status).toBe(409);
  expect(JSON.parse(stale.body.toString()).error.code).toBe("UPLOAD_IN_PROGRESS");
  const old = await step(
    "a bad Tus-Resumable",
    upload,
    "PATCH",
    { ...patch, "tus-resumable": "0.2.2", "upload-offset": String(first.length) },
    second,
  );
  expect(old.status).toBe(412);
  expect(old.headers["tus-version"]).toBe("1.0.0");
  const head1 = await step("head at the first chunk", upload, "HEAD", { ...TUS });
  expect(head1.headers["upload-offset"]).toBe(String(first.length));
  // The last chunk as a POST overridden to PATCH (clients behind proxies that drop PATCH).
  const two = await step(
    "patch 2 (override)",
    upload,
    "POST",
    { ...patch, origin: APP, "x-http-method-override": "PATCH", "upload-offset": String(first.length) },
    second,
  );
  expect(two.status).toBe(204);
  expect(two.headers["upload-sha256"]).toBe(createHash("sha256").update(content).digest("hex"));
  const done = await step("final head", upload, "HEAD", { ...TUS });
  expect(done.status).toBe(200);
  expect(done.headers["upload-offset"]).toBe(String(content.length));

  const other = await endpoint(origin);
  const made2 = await step("create to delete", other, "POST", { ...TUS, "upload-length": "10" });
  const doomed = new URL(made2.headers.location as string, other).href;
  const gone = await step("delete", doomed, "DELETE", { ...TUS });
  expect(gone.status).toBe(204);
  const after = await step("head after delete", doomed, "HEAD", { ...TUS });
  expect(after.status).toBe(404);
  const foreign = await step("a foreign origin", other, "POST", {
    ...TUS,
    origin: "https://evil.example",
    "upload-length": "10",
  });
  expect(foreign.status).toBe(403);
  return steps;
}

/** A reply with what differs between two uploads of the same bytes taken out. */
function comparable(reply: Reply, origin: string) {
  const headers: Record<string, unknown> = { ...reply.headers };
  for (const name of ["date", "connection", "keep-alive", "upload-expires", "upload-handle"]) {
    if (headers[name] !== undefined) headers[name] = "(varies)";
  }
  // An empty body: the native path sends `Content-Length: 0`, the web path an empty chunked body.
  if (reply.body.length === 0 && headers["content-length"] === "0") delete headers["content-length"];
  if (reply.body.length === 0 && headers["transfer-encoding"] === "chunked")
    delete headers["transfer-encoding"];
  if (typeof headers.location === "string") {
    headers.location = headers.location
      .replace(origin, "ORIGIN")
      .replace(/\/tus\/[^/]+\/[^/]+$/, "/tus/T/ID");
  }
  return { status: reply.status, headers, body: reply.body.toString("utf8") };
}

describe("tus through the Node adapter, with no web Request or Response", () => {
  it("a whole client flow: no web objects, the web path's answers, the bytes sent stored", async () => {
    const nativeSteps = await flow(nativeOrigin, true);
    // Both creations that passed CORS asked the rate limit, and made no web object doing so.
    expect(limited).toEqual(["s1", "s1"]);
    expect(stored).toHaveLength(1);
    const stream = await store.read("s1", (stored[0] as StoredFile).id);
    const chunks: Buffer[] = [];
    for await (const chunk of stream ?? []) chunks.push(chunk as Buffer);
    expect(createHash("sha256").update(Buffer.concat(chunks)).digest("hex")).toBe(
      createHash("sha256").update(content).digest("hex"),
    );
    const webSteps = await flow(webOrigin, false);
    expect(stored).toHaveLength(2);
    expect(webSteps.map((s) => s.name)).toEqual(nativeSteps.map((s) => s.name));
    for (const [i, step] of nativeSteps.entries()) {
      const other = webSteps[i] as Step;
      expect(comparable(step.reply, nativeOrigin), step.name).toEqual(comparable(other.reply, webOrigin));
    }
  });

  it("a tus server on the ./node entry never loads Node's fetch implementation (a process of its own)", async () => {
    const src = (path: string) => JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);
    const script = `
      const { createServer, request } = await import("node:http");
      const m = await import(${src("node/index.ts")});
      const dir = ${JSON.stringify(join(dir, "child"))};
      const state = m.memoryState();
      const server = createServer();
      await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
      const origin = "http://127.0.0.1:" + server.address().port;
      const minter = new m.SignedUrlMinter({ secret: ${JSON.stringify(SECRET)}, baseUrl: origin, state });
      const tus = { staging: m.fsTusStaging(dir + "/staging") };
      const routes = m.createFileRoutes({ store: m.fsStore(dir + "/store", { sweepInterval: 0 }), minter, state, tus });
      server.on("request", m.toNodeHandler(routes));
      const send = (url, method, headers, body) => new Promise((resolve, reject) => {
        const req = request(url, { method, headers, agent: false }, (res) => { res.resume(); res.on("end", () => resolve(res)); });
        req.on("error", reject);
        req.end(body);
      });
      const { token } = await minter.mint({ scope: "s1", fileId: "f1", action: "upload", ttl: "1h" });
      const url = origin + "/files/tus/" + token;
      const tusResumable = { "tus-resumable": "1.0.0" };
      const created = await send(url, "POST", { ...tusResumable, "upload-length": "1000" });
      const upload = new URL(created.headers.location, url).href;
      const patched = await send(upload, "PATCH", { ...tusResumable, "content-type": "application/offset+octet-stream", "upload-offset": "0" }, Buffer.alloc(1000, 7));
      const head = await send(upload, "HEAD", tusResumable);
      const undici = process.moduleLoadList.some((name) => name.includes("undici"));
      console.log(JSON.stringify([created.statusCode, patched.statusCode, head.statusCode, patched.headers["upload-sha256"], undici]));
      server.close();
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { timeout: 20_000 },
    );
    const sha = createHash("sha256").update(Buffer.alloc(1000, 7)).digest("hex");
    expect(JSON.parse(stdout.trim())).toEqual([201, 204, 200, sha, false]);
  });
});
