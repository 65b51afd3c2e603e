/**
 * Upload and download throughput of the file routes over loopback, against a raw node:http server
 * that pipes the body to a file / a file to the response, in the same run. Also: the routes behind
 * hono (the web-stream path, no Node fast path) and a multipart upload, plus mint + verify ops/s.
 *
 *   npx tsx bench/http-transfer.ts            # 1 GiB
 *   BENCH_SIZE_MB=128 npx tsx bench/http-transfer.ts
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, open, rm, stat, unlink, writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { serve } from "@hono/node-server";
import { createFileRoutes, type FileRoutes } from "../src/http/create-file-routes.js";
import { toNodeHandler } from "../src/node/index.js";
import { SignedUrlMinter } from "../src/signing/signed-url-minter.js";
import { fsStore } from "../src/storage/fs-store.js";
import { memoryState } from "../src/storage/memory-state.js";

const SIZE_MB = Number(process.env.BENCH_SIZE_MB ?? 1024);
const SIZE = SIZE_MB * 1024 * 1024;
const SECRET = "bench-secret-bench-secret-bench-secret-0123";
const MiB = 1024 * 1024;

interface Measure {
  seconds: number;
  mibPerSecond: number;
  peakRssGrowthMiB: number;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Runs `task`, sampling RSS; reports throughput and peak RSS above the level at the start. */
async function measure(task: () => Promise<void>): Promise<Measure> {
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  const started = process.hrtime.bigint();
  await task();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  return {
    seconds,
    mibPerSecond: SIZE / MiB / seconds,
    peakRssGrowthMiB: (peak - baseline) / MiB,
  };
}

function upload(url: string, source: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "PUT", headers: { "content-length": String(SIZE), ...headers } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    createReadStream(source, { highWaterMark: 256 * 1024 }).pipe(req);
  });
}

function multipartUpload(url: string, source: string): Promise<number> {
  const boundary = "----bench-boundary-0123456789";
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
      "Content-Type: application/octet-stream\r\n\r\n",
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "content-length": String(head.length + SIZE + tail.length),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    async function* body() {
      yield head;
      yield* createReadStream(source, { highWaterMark: 256 * 1024 });
      yield tail;
    }
    pipeline(Readable.from(body()), req).catch(reject);
  });
}

function download(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => resolve(bytes));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`bench sanity check failed: ${what}`);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "mfb-bench-"));
  try {
    const source = join(dir, "source.bin");
    const block = Buffer.alloc(MiB);
    for (let i = 0; i < block.length; i++) block[i] = (i * 2654435761) >>> 24;
    const out = createWriteStream(source);
    for (let i = 0; i < SIZE_MB; i++) {
      block[0] = i & 0xff;
      if (!out.write(Buffer.from(block)))
        await new Promise<void>((resolve) => out.once("drain", () => resolve()));
    }
    await new Promise<void>((resolve, reject) =>
      out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );

    // Raw node:http baseline.
    const rawTarget = join(dir, "raw-upload.bin");
    const raw = createServer((req, res) => {
      if (req.method === "PUT") {
        pipeline(req, createWriteStream(rawTarget)).then(
          () => res.end("ok"),
          () => res.destroy(),
        );
        return;
      }
      stat(source).then((info) => {
        res.writeHead(200, {
          "content-length": String(info.size),
          "content-type": "application/octet-stream",
        });
        pipeline(createReadStream(source), res).catch(() => undefined);
      });
    });
    const rawOrigin = await listen(raw);
    // Flush the source to disk first, so its writeback does not slow down whichever case runs first.
    const handle = await open(source, "r");
    await handle.sync();
    await handle.close();
    const rawUpFirst = await measure(async () =>
      check((await upload(`${rawOrigin}/up`, source)) === 200, "raw upload"),
    );
    await unlink(rawTarget);
    const rawDown = await measure(async () =>
      check((await download(`${rawOrigin}/down`)) === SIZE, "raw download"),
    );

    // The file routes through the Node adapter (fast path), and behind hono (web streams only).
    const state = memoryState();
    const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
    let routes: FileRoutes = async () => undefined;
    const nodeServer = createServer(toNodeHandler((r) => routes(r)));
    const nodeOrigin = await listen(nodeServer);
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: nodeOrigin, state, ttl: "1h" });
    routes = createFileRoutes({ store, minter, state, maxBytes: SIZE + MiB, basePath: "/files" });

    const ticket = async () =>
      (await minter.mint({ scope: "bench", fileId: "t1", action: "upload" })).url + "?filename=big.bin";
    const routeUp = await measure(async () =>
      check((await upload(await ticket(), source)) === 201, "route upload"),
    );
    const [stored] = (await store.list("bench")).files;
    check(stored?.size === SIZE, "stored size");
    const routeDownUrl = (await minter.downloadUrl(stored as { id: string; scope: string })).url;
    const routeDown = await measure(async () =>
      check((await download(routeDownUrl)) === SIZE, "route download"),
    );
    await store.delete("bench", stored?.id as string);

    const multipartUrl = (await minter.mint({ scope: "bench", fileId: "t2", action: "upload" })).url;
    const routeMultipart = await measure(async () =>
      check((await multipartUpload(multipartUrl, source)) === 201, "multipart upload"),
    );
    for (const file of (await store.list("bench")).files) await store.delete("bench", file.id);
    await closeServer(nodeServer);

    const hono = serve({
      fetch: async (request: Request) =>
        (await routes(request)) ?? new Response("not found", { status: 404 }),
      port: 0,
      hostname: "127.0.0.1",
    }) as Server;
    await new Promise<void>((resolve) =>
      hono.listening ? resolve() : hono.once("listening", () => resolve()),
    );
    const honoOrigin = `http://127.0.0.1:${(hono.address() as AddressInfo).port}`;
    const honoTicket = (await minter.mint({ scope: "bench", fileId: "t3", action: "upload" })).token;
    const honoUp = await measure(async () =>
      check(
        (await upload(`${honoOrigin}/files/upload/${honoTicket}?filename=big.bin`, source)) === 201,
        "hono up",
      ),
    );
    const [honoFile] = (await store.list("bench")).files;
    const honoToken = (await minter.downloadUrl(honoFile as { id: string; scope: string })).token;
    const honoDown = await measure(async () =>
      check((await download(`${honoOrigin}/files/download/${honoToken}`)) === SIZE, "hono down"),
    );
    await closeServer(hono);
    await store.close?.();
    await rm(join(dir, "store"), { recursive: true, force: true });

    // The raw upload again, after the route uploads: the baseline is the mean of both runs.
    const rawUpLast = await measure(async () =>
      check((await upload(`${rawOrigin}/up`, source)) === 200, "raw upload"),
    );
    await closeServer(raw);
    await unlink(rawTarget);
    const rawUp: Measure = {
      seconds: (rawUpFirst.seconds + rawUpLast.seconds) / 2,
      mibPerSecond: (rawUpFirst.mibPerSecond + rawUpLast.mibPerSecond) / 2,
      peakRssGrowthMiB: Math.max(rawUpFirst.peakRssGrowthMiB, rawUpLast.peakRssGrowthMiB),
    };

    // Mint + verify throughput.
    const signer = new SignedUrlMinter({
      secret: SECRET,
      baseUrl: "http://127.0.0.1:1",
      state: memoryState(),
    });
    const ops = 5000;
    const tokens: string[] = [];
    let t = process.hrtime.bigint();
    for (let i = 0; i < ops; i++)
      tokens.push((await signer.mint({ scope: "s", fileId: `f${i}`, action: "download" })).token);
    const mintOps = ops / (Number(process.hrtime.bigint() - t) / 1e9);
    t = process.hrtime.bigint();
    for (const token of tokens) await signer.verify(token, { action: "download" });
    const verifyOps = ops / (Number(process.hrtime.bigint() - t) / 1e9);

    const rows: Array<[string, Measure, Measure | undefined]> = [
      ["upload (raw body)", routeUp, rawUp],
      ["upload (multipart)", routeMultipart, rawUp],
      ["download", routeDown, rawDown],
      ["upload via hono (web streams)", honoUp, rawUp],
      ["download via hono (web streams)", honoDown, rawDown],
    ];
    console.log(
      `\nHTTP transfer of ${SIZE_MB} MiB over loopback (${process.version}, ${process.platform})\n`,
    );
    console.log("case                              MiB/s   raw MiB/s  ratio  peak RSS +MiB");
    console.log("--------------------------------  ------  ---------  -----  -------------");
    for (const [name, m, base] of rows) {
      const ratio = base ? (m.mibPerSecond / base.mibPerSecond).toFixed(2) : "-";
      console.log(
        `${name.padEnd(32)}  ${m.mibPerSecond.toFixed(0).padStart(6)}  ${(base?.mibPerSecond ?? 0).toFixed(0).padStart(9)}  ${ratio.padStart(5)}  ${m.peakRssGrowthMiB.toFixed(1).padStart(13)}`,
      );
    }
    console.log(
      `raw upload runs: ${rawUpFirst.mibPerSecond.toFixed(0)} and ${rawUpLast.mibPerSecond.toFixed(0)} MiB/s (baseline = mean)`,
    );
    console.log(
      `raw upload peak RSS +${rawUp.peakRssGrowthMiB.toFixed(1)} MiB, raw download +${rawDown.peakRssGrowthMiB.toFixed(1)} MiB`,
    );
    console.log(`mint ${mintOps.toFixed(0)} ops/s, verify ${verifyOps.toFixed(0)} ops/s\n`);

    const round = (n: number) => Math.round(n * 100) / 100;
    const figures = Object.fromEntries(
      rows.map(([name, m, base]) => [
        name,
        {
          mibPerSecond: round(m.mibPerSecond),
          ratioToRaw: base ? round(m.mibPerSecond / base.mibPerSecond) : null,
          peakRssGrowthMiB: round(m.peakRssGrowthMiB),
        },
      ]),
    );
    console.log(
      `BENCH_JSON ${JSON.stringify({
        sizeMiB: SIZE_MB,
        raw: {
          uploadMiBps: round(rawUp.mibPerSecond),
          uploadRunsMiBps: [round(rawUpFirst.mibPerSecond), round(rawUpLast.mibPerSecond)],
          downloadMiBps: round(rawDown.mibPerSecond),
          uploadPeakRssGrowthMiB: round(rawUp.peakRssGrowthMiB),
          downloadPeakRssGrowthMiB: round(rawDown.peakRssGrowthMiB),
        },
        routes: figures,
        mintOpsPerSecond: Math.round(mintOps),
        verifyOpsPerSecond: Math.round(verifyOps),
      })}`,
    );
    await writeFile(join(dir, "done"), "");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
