/**
 * Scratch: the bench server (ours-fs / raw) with V8's sampling heap profiler over N uploads,
 * keeping only samples not freed by a scavenge. GET /__start, GET /__stop (writes profile to argv[4]).
 */
import { createWriteStream, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Session } from "node:inspector";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { toNodeHandler } from "../src/node/index.js";
import { createFileRoutes } from "../src/routes/create-file-routes.js";
import { SignedUrlMinter } from "../src/signing/signed-url-minter.js";
import { fsStore } from "../src/storage/fs-store.js";
import { memoryState } from "../src/storage/memory-state.js";
import { fsTusStaging } from "../src/uploads/tus/fs-staging.js";
import { BENCH_SECRET } from "./_lib.js";

const [mode, dir, out, countArg] = process.argv.slice(2) as [string, string, string, string];
const count = Number(countArg ?? 40);
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
const session = new Session();
session.connect();
const post = (method: string, params?: object) =>
  new Promise<any>((resolve, reject) =>
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
  );
const server = createServer((req, res) => {
  if (req.url === "/__start") {
    post("HeapProfiler.enable")
      .then(() =>
        post("HeapProfiler.startSampling", {
          samplingInterval: Number(process.env.SAMPLE_INTERVAL ?? 1024),
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: false,
        }),
      )
      .then(() => res.end(JSON.stringify(process.memoryUsage())));
    return;
  }
  if (req.url === "/__stop") {
    post("HeapProfiler.stopSampling").then((r) => {
      writeFileSync(out, JSON.stringify(r.profile));
      res.end(JSON.stringify(process.memoryUsage()));
    });
    return;
  }
  if (req.url === "/__gc") {
    setFlagsFromString("--expose-gc");
    (runInNewContext("gc") as () => void)();
    res.end(JSON.stringify(process.memoryUsage()));
    return;
  }
  if (req.url === "/__mem") {
    res.end(JSON.stringify(process.memoryUsage()));
    return;
  }
  handler(req, res);
});
server.keepAliveTimeout = 120_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
await mkdir(dir, { recursive: true });
const urls: string[] = [];
if (mode === "ours-fs") {
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: BENCH_SECRET, baseUrl: url, state, ttl: "1h" });
  const store = fsStore(join(dir, "store"), { sweepInterval: 0 });
  handler = toNodeHandler(
    createFileRoutes({
      store,
      minter,
      state,
      maxBytes: 4 * 1024 ** 3,
      basePath: "/files",
      tus: { staging: fsTusStaging(join(dir, "tus-staging")) },
    }),
  );
  const cm = new SignedUrlMinter({ secret: BENCH_SECRET, baseUrl: url, state: memoryState(), ttl: "1h" });
  for (let i = 0; i < count + 3; i++)
    urls.push(`${(await cm.mint({ scope: "bench", fileId: `big${i}`, action: "upload" })).url}?filename=big.bin`);
} else {
  let n = 0;
  handler = (req, res) => {
    pipeline(req, createWriteStream(join(dir, `${n++}`))).then(
      () => res.end("ok"),
      () => res.destroy(),
    );
  };
  for (let i = 0; i < count + 3; i++) urls.push(`${url}/up`);
}
writeFileSync(`${out}.urls`, urls.join("\n"));
console.log(`READY ${url}`);
