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
import { SignedUrlMinter } from "../src/signing/signed-url-minter.js";
import { memoryState } from "../src/storage/memory-state.js";
import { BENCH_SECRET, servePeer } from "./_lib.js";

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

interface Reply {
  status: number;
  headers: IncomingMessage["headers"];
  bytes: number;
}

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: Buffer | string,
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
    else req.end(body);
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

await servePeer({}, async (command) => {
  const started = performance.now();
  if (command.cmd === "small") await small(command);
  else if (command.cmd === "upload") await upload(command);
  else if (command.cmd === "download") {
    const reply = await send(String(command.url), "GET", {});
    expect(reply, 200, "download");
    if (reply.bytes !== Number(command.size)) throw new Error(`downloaded ${reply.bytes} bytes`);
  } else throw new Error(`unknown command ${JSON.stringify(command)}`);
  return { seconds: (performance.now() - started) / 1000 };
});
