/**
 * Downloads through the Node adapter take a native path, as ticket `PUT`s do: the routes read the
 * `IncomingMessage` through a request view and answer with a status, headers and the store's stream,
 * and no web `Request`, `Response` or `Headers` is made. A server that serves files only then never
 * loads Node's fetch implementation (undici, about 1.5 MB of V8 old generation), which kept an upload
 * server above the 8 MB at which V8 can run a full GC after every young-generation GC while big
 * bodies stream in (docs/performance.md, Session 21). Every answer of the download route is checked
 * here against what the web path answers: 200, 206, HEAD, 304, 416, 401, and CORS headers.
 */
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredFile } from "../../src/storage/types.js";
import { useDownloadServer } from "./download-server.js";
import { type Reply, send, WebObjects } from "./raw-request.js";

const live = useDownloadServer("mfb-native-download-", { allowedOrigins: ["https://app.example"] });
let file: StoredFile;
const content = randomBytes(300_000);
/** Web objects made while a download was served, by class. */
const webObjects = new WebObjects();

beforeEach(async () => {
  file = await live.store.put(content, { scope: "s1", name: "report.bin" });
  webObjects.reset();
  webObjects.install();
});

afterEach(() => {
  webObjects.restore();
});

/** The same request through the web path (`routes` called with a `Request`), for comparison. */
async function throughWeb(url: string, method = "GET", headers: Record<string, string> = {}): Promise<Reply> {
  const response = (await live.routes(new Request(url, { method, headers }))) as Response;
  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    out[key] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  // The adapter gives a text answer its length, as it does on the web path (`withLength`).
  if (out["content-length"] === undefined && body.length > 0) out["content-length"] = String(body.length);
  return { status: response.status, headers: out, body };
}

const link = async () => (await live.minter.downloadUrl(file)).url;
const noWebObjects = () => expect(webObjects.made).toEqual({ Request: 0, Response: 0, Headers: 0 });
/** The headers both paths must agree on (the Node side adds date, connection, keep-alive). */
const SHARED = [
  "content-type",
  "content-length",
  "content-range",
  "content-disposition",
  "etag",
  "accept-ranges",
  "cache-control",
  "x-content-type-options",
  "content-security-policy",
  "last-modified",
  "access-control-allow-origin",
  "vary",
];
const shared = (reply: Reply) => Object.fromEntries(SHARED.map((name) => [name, reply.headers[name]]));

describe("downloads through the Node adapter, with no web Request or Response", () => {
  it("a whole file: every byte, the web path's headers, onDownload once", async () => {
    const url = await link();
    const reply = await send(url, "GET", { origin: "https://app.example" });
    noWebObjects();
    expect(reply.status).toBe(200);
    expect(reply.body.equals(content)).toBe(true);
    expect(reply.headers["access-control-allow-origin"]).toBe("https://app.example");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(live.downloads.map((event) => event.bytes)).toEqual([content.length]);
    const web = await throughWeb(url, "GET", { origin: "https://app.example" });
    expect(shared(reply)).toEqual(shared(web));
  });

  it("a range (206), HEAD, a matching If-None-Match (304), an unsatisfiable range (416)", async () => {
    const url = await link();
    const cases: Array<[string, Record<string, string>, number]> = [
      ["GET", { range: "bytes=1000-1999" }, 206],
      ["HEAD", {}, 200],
      ["GET", { "if-none-match": `"${file.sha256}"` }, 304],
      ["GET", { range: `bytes=${content.length + 10}-` }, 416],
    ];
    for (const [method, headers, status] of cases) {
      const reply = await send(url, method, headers);
      noWebObjects();
      expect(reply.status, `${method} ${JSON.stringify(headers)}`).toBe(status);
      if (status === 206) expect(reply.body.equals(content.subarray(1000, 2000))).toBe(true);
      if (method === "HEAD" || status === 304) expect(reply.body.length).toBe(0);
      if (status === 416) expect(JSON.parse(reply.body.toString()).error.code).toBe("RANGE_NOT_SATISFIABLE");
      const web = await throughWeb(url, method, headers);
      expect(shared(reply)).toEqual(shared(web));
      webObjects.reset();
    }
    // Only the 200-free GET of the range sent bytes: one event, for its 1,000 bytes.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(live.downloads.map((event) => event.bytes)).toEqual([1000, 1000]);
  });

  it("a bad token is 401 with the error's JSON; a foreign origin is 403 before the token is read", async () => {
    const url = await link();
    const forged = `${url.slice(0, -4)}AAAA`;
    const reply = await send(forged);
    noWebObjects();
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body.toString()).error.code).toBe("INVALID_TOKEN");
    const foreign = await send(url, "GET", { origin: "https://evil.example" });
    noWebObjects();
    expect(foreign.status).toBe(403);
    expect(live.downloads).toEqual([]);
  });
});
