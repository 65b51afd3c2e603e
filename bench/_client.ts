/**
 * The bench client in a process of its own. Commands on stdin (one JSON line each), each timed here
 * and answered with `DONE {"seconds": ...}`:
 * - `small`: `count` uploads of `size` bytes, `concurrency` at a time; `ours` mints an upload ticket
 *   per file (the tool's job) and PUTs to it, `raw` PUTs straight to the raw server.
 * - `upload`: PUT one file (`ours`: to a fresh ticket; `raw`: to `/up`); `tus`: create + PATCH.
 * - `download`: GET a URL and count the bytes.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Agent, type IncomingMessage, request } from "node:http";
import { built } from "./_built.js";
import { BENCH_SECRET, servePeer } from "./_lib.js";

// Our code as its published build (bench/_built.ts).
const { SignedUrlMinter, memoryState } = await built<typeof import("../src/index.js")>("index");

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

interface Reply {
  status: number;
  headers: IncomingMessage["headers"];
  bytes: number;
}

/** A file body, whole or a byte range of it (`end` exclusive). */
type FileBody = string | { path: string; start: number; end: number };

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: Buffer | FileBody,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (body === undefined) req.end();
    else if (typeof body === "string") createReadStream(body, { highWaterMark: 256 * 1024 }).pipe(req);
    else if (Buffer.isBuffer(body)) req.end(body);
    else {
      const range = { start: body.start, end: body.end - 1, highWaterMark: 256 * 1024 };
      if (body.end > body.start) createReadStream(body.path, range).pipe(req);
      else req.end();
    }
  });
}

function expect(reply: Reply, status: number, what: string): void {
  if (reply.status !== status) throw new Error(`${what}: HTTP ${reply.status}, expected ${status}`);
}

async function small(command: Record<string, unknown>): Promise<void> {
  const url = String(command.url);
  const count = Number(command.count);
  const body = Buffer.alloc(Number(command.size), 7);
  const ours = command.mode === "ours";
  const minter = new SignedUrlMinter({ secret: BENCH_SECRET, baseUrl: url, state: memoryState(), ttl: "1h" });
  let next = 0;
  async function worker(): Promise<void> {
    while (next < count) {
      const i = next++;
      const headers = { "content-length": String(body.length), "content-type": "text/plain" };
      if (ours) {
        const ticket = await minter.mint({ scope: "bench", fileId: `t${i}`, action: "upload" });
        expect(await send(`${ticket.url}?filename=n${i}.txt`, "PUT", headers, body), 201, "upload");
      } else {
        expect(await send(`${url}/up/${i}`, "PUT", headers, body), 200, "raw upload");
      }
    }
  }
  await Promise.all(Array.from({ length: Number(command.concurrency) }, worker));
}

async function upload(command: Record<string, unknown>): Promise<void> {
  const url = String(command.url);
  const file = String(command.file);
  const size = (await stat(file)).size;
  const headers = { "content-length": String(size), "content-type": "application/octet-stream" };
  if (command.mode === "ours") {
    const minter = new SignedUrlMinter({ secret: BENCH_SECRET, baseUrl: url, state: memoryState() });
    const ticket = await minter.mint({ scope: "bench", fileId: "big", action: "upload" });
    expect(await send(`${ticket.url}?filename=big.bin`, "PUT", headers, file), 201, "upload");
  } else if (command.mode === "tus") {
    const created = await send(`${url}/files`, "POST", {
      "tus-resumable": "1.0.0",
      "upload-length": String(size),
    });
    expect(created, 201, "tus create");
    const location = new URL(String(created.headers.location), url).href;
    const patched = await send(
      location,
      "PATCH",
      {
        "tus-resumable": "1.0.0",
        "upload-offset": "0",
        "content-type": "application/offset+octet-stream",
        "content-length": String(size),
      },
      file,
    );
    expect(patched, 204, "tus patch");
  } else {
    expect(await send(`${url}/up`, "PUT", headers, file), 200, "raw upload");
  }
}

const TUS = { "tus-resumable": "1.0.0" };

/** The tus endpoint: ours (a fresh ticket's `/files/tus/{token}`) or `@tus/server`'s `/files`. */
async function tusEndpoint(url: string, ours: boolean): Promise<string> {
  if (!ours) return `${url}/files`;
  const minter = new SignedUrlMinter({ secret: BENCH_SECRET, baseUrl: url, state: memoryState() });
  const ticket = await minter.mint({
    scope: "bench",
    fileId: `tus-${Date.now()}`,
    action: "upload",
    ttl: "1h",
  });
  return ticket.url.replace("/files/upload/", "/files/tus/");
}

/** A tus PATCH of `[start, end)` of `file`. */
function tusPatch(location: string, file: string, start: number, end: number): Promise<Reply> {
  const headers = {
    ...TUS,
    "upload-offset": String(start),
    "content-type": "application/offset+octet-stream",
    "content-length": String(end - start),
  };
  return send(location, "PATCH", headers, { path: file, start, end });
}

/**
 * `tus-upload`: create + PATCHes of `chunk` bytes (0: one PATCH) to ours (`ours: true`) or
 * `@tus/server`; with `parallel: n` (ours), n partial uploads of equal size sent at once, each in
 * one PATCH, then the final upload that concatenates them (as `tus-js-client`'s `parallelUploads`).
 */
async function tusUpload(command: Record<string, unknown>): Promise<Record<string, unknown>> {
  const file = String(command.file);
  const size = (await stat(file)).size;
  const endpoint = await tusEndpoint(String(command.url), command.ours === true);
  const parallel = Number(command.parallel) || 0;
  if (parallel > 1) {
    const piece = Math.ceil(size / parallel);
    const paths = await Promise.all(
      Array.from({ length: parallel }, async (_, index) => {
        const start = index * piece;
        const end = Math.min(size, start + piece);
        const created = await send(endpoint, "POST", {
          ...TUS,
          "upload-concat": "partial",
          "upload-length": String(end - start),
        });
        expect(created, 201, "tus create partial");
        const location = new URL(String(created.headers.location), endpoint);
        const headers = {
          ...TUS,
          "upload-offset": "0",
          "content-type": "application/offset+octet-stream",
          "content-length": String(end - start),
        };
        expect(await send(location.href, "PATCH", headers, { path: file, start, end }), 204, "tus patch");
        return location.pathname;
      }),
    );
    const final = await send(endpoint, "POST", { ...TUS, "upload-concat": `final;${paths.join(" ")}` });
    expect(final, 201, "tus final");
    return {};
  }
  const created = await send(endpoint, "POST", { ...TUS, "upload-length": String(size) });
  expect(created, 201, "tus create");
  const location = new URL(String(created.headers.location), endpoint).href;
  const chunk = Number(command.chunk) || size;
  for (let offset = 0; offset < size; offset += chunk) {
    expect(await tusPatch(location, file, offset, Math.min(size, offset + chunk)), 204, "tus patch");
  }
  return {};
}

/**
 * `tus-resume`: one PATCH whose connection is cut after half the file went out, then HEAD (one round
 * trip) and one PATCH of the missing bytes. Answers the bytes sent before the cut, the offset the
 * server kept, and the bytes of the resuming PATCH.
 */
async function tusResume(command: Record<string, unknown>): Promise<Record<string, unknown>> {
  const file = String(command.file);
  const size = (await stat(file)).size;
  const endpoint = await tusEndpoint(String(command.url), command.ours === true);
  const created = await send(endpoint, "POST", { ...TUS, "upload-length": String(size) });
  expect(created, 201, "tus create");
  const location = new URL(String(created.headers.location), endpoint).href;
  const half = Math.floor(size / 2);
  const sentBeforeCut = await new Promise<number>((resolve) => {
    const req = request(location, {
      method: "PATCH",
      headers: {
        ...TUS,
        "upload-offset": "0",
        "content-type": "application/offset+octet-stream",
        "content-length": String(size),
      },
    });
    req.on("error", () => undefined);
    const source = createReadStream(file, { start: 0, end: half - 1, highWaterMark: 256 * 1024 });
    source.pipe(req, { end: false });
    source.on("end", () => {
      req.destroy();
      resolve(half);
    });
  });
  const resumedAt = performance.now();
  let offset = 0;
  let roundTrips = 0;
  for (;;) {
    const head = await send(location, "HEAD", TUS);
    roundTrips++;
    offset = Number(head.headers["upload-offset"]);
    const patched = await tusPatch(location, file, offset, size);
    if (patched.status === 204) break;
    // The server may still be closing the cut request (423) or recording its offset (409).
    if (patched.status !== 423 && patched.status !== 409) expect(patched, 204, "tus resume");
  }
  return {
    sentBeforeCut,
    keptOffset: offset,
    resentBytes: size - offset,
    missingBytes: size - sentBeforeCut,
    headRoundTrips: roundTrips,
    resumeSeconds: (performance.now() - resumedAt) / 1000,
  };
}

await servePeer({}, async (command) => {
  const started = performance.now();
  if (command.cmd === "tus-upload") {
    await tusUpload(command);
    return { seconds: (performance.now() - started) / 1000 };
  }
  if (command.cmd === "tus-resume") return tusResume(command);
  if (command.cmd === "small") await small(command);
  else if (command.cmd === "upload") await upload(command);
  else if (command.cmd === "download") {
    const reply = await send(String(command.url), "GET", {});
    expect(reply, 200, "download");
    if (reply.bytes !== Number(command.size)) throw new Error(`downloaded ${reply.bytes} bytes`);
  } else throw new Error(`unknown command ${JSON.stringify(command)}`);
  return { seconds: (performance.now() - started) / 1000 };
});
