/**
 * A bench server in a process of its own: `ours-fs`, `ours-memory` (the file routes on fsStore /
 * memoryStore), `ours-s3` (the file routes on s3Store + s3TusStaging, the S3 endpoint from
 * `BENCH_S3` as `startServices()` describes it; `{"cmd": "commit-mode", "mode": "copy" | "restream"}`
 * switches the store's server-side-copy adoption on or off, `{"cmd": "commit-seconds"}` answers how
 * long the last commit took, its own peak RSS growth, and this process's peak before it started),
 * `raw` (a plain node:http server that pipes bodies to files and files to responses)
 * or `tus` (`@tus/server` with `@tus/file-store`). Prints `READY {"url": ...}`; then answers
 * `{"cmd": "clean"}` (drop stored files), `{"cmd": "gc"}` (this process's garbage collections so far, major and minor, and its `arrayBuffers`, `heapUsed` and V8 `oldGeneration` bytes), `{"cmd": "collect"}` (a full collection now), `{"cmd": "fresh", "round": name}` (go on in a new empty
 * folder, removing nothing: `ours-fs`, `ours-memory`, `raw`) and `{"cmd": "prepare", "source": path}`
 * (store a file to download; replies with its download URL) on stdin.
 *
 *   node --import tsx bench/_server.ts ours-fs /tmp/dir
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { pipeline } from "node:stream/promises";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type * as Root from "../src/index.js";
import type * as NodeEntry from "../src/node/index.js";
import type * as S3Entry from "../src/s3/index.js";
import type { FileStore, StagedFile, StateStore } from "../src/storage/types.js";
import type { TusStaging } from "../src/uploads/tus/fs-staging.js";
import { built } from "./_built.js";
import { BENCH_SECRET, peakRssMiB, resetPeakRss, rssMiB, servePeer } from "./_lib.js";

const [mode, dir] = process.argv.slice(2) as [string, string];
const MAX_BYTES = 4 * 1024 * 1024 * 1024;

/**
 * Garbage collections of this process so far, by kind (`{"cmd": "gc"}` answers them): a server that
 * falls into back-to-back full collections spends up to twice the CPU on the same upload.
 */
const gcCounts = { major: 0, minor: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gcCounts.major++;
    else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gcCounts.minor++;
  }
}).observe({ entryTypes: ["gc"] });

/**
 * A full garbage collection now (`{"cmd": "collect"}`), so a round's RSS growth is measured from a
 * collected heap rather than from whatever garbage the round before left resident.
 */
function fullGc(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/**
 * Bytes in V8's old generation (old, code and large-object spaces): what V8 compares with its 8 MiB
 * activation threshold before it starts incremental marking at its allocation limit. Above it, the
 * ~32 MB of socket buffers a body leaves between two scavenges count against a limit set with ~9 MB
 * of slack, and every scavenge can end in a full GC (docs/performance.md, Session 21).
 */
function oldGeneration(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (/^(old_space|code_space|large_object_space|code_large_object_space)$/.test(space.space_name)) {
      bytes += space.space_used_size;
    }
  }
  return bytes;
}

/**
 * `BENCH_RAW_RETAIN_MB` (raw mode only, default 0): small objects the raw server keeps for its life,
 * about that many MB of its old generation, so that its heap is the size of a server with more code
 * loaded (ours, or an app with a framework) while its upload path stays the plain `pipeline`. It
 * shows whether a row's full GCs follow the heap's size or the upload path (Session 21).
 */
const retained: unknown[] = [];
function retain(megabytes: number): void {
  for (let i = 0; i < (megabytes * 1024 * 1024) / 100; i++) retained.push({ i, name: `retained-${i}` });
}

/** A young-generation collection now (`{"cmd": "gc", "scavenge": true}`). */
function scavenge(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as (options: { type: "minor" }) => void)({ type: "minor" });
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
const server = createServer((req, res) => handler(req, res));
// Every mode alike: the client's keep-alive sockets sit idle while the other servers' rounds run; with
// Node's 5 s default a socket closed as the next round reused it failed a run with "socket hang up".
server.keepAliveTimeout = 120_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
await mkdir(dir, { recursive: true });

/** More commands of a mode (`ours-s3`). */
let extra: (command: Record<string, unknown>) => Promise<Record<string, unknown> | undefined> = async () =>
  undefined;

let clean: () => Promise<void> = async () => {};
/**
 * Moves on to a new, empty folder named `round` without removing anything: small-file rounds use it
 * instead of `clean`, because creating files on ext4 right after thousands were removed costs up
 * to 10× more (see docs/performance.md), which would measure the last round's clean-up, not this one.
 */
let fresh: (round: string) => Promise<void> = async () => {
  throw new Error(`${mode} has no fresh folders`);
};
let prepare: (source: string) => Promise<string> = async () => {
  throw new Error(`${mode} serves no downloads`);
};

/**
 * Our package as its published build (bench/_built.ts). Only the `ours-*` servers load it: the raw and
 * tus servers run as their users run them, without our package (or the AWS SDK) in the process.
 *
 * An upload server imports what it uses from `mcp-file-bridge/node`, which loads no zod and no MCP
 * code (src/node/index.ts). `BENCH_OURS_ENTRY=index` takes the same functions from the root entry
 * instead, as a server that also serves MCP tools has them: the root loads zod and the MCP pieces,
 * about 4 MB more of V8 old generation (docs/performance.md, Session 21).
 */
interface Ours {
  root: Pick<
    typeof Root,
    "createFileRoutes" | "fsStore" | "fsTusStaging" | "memoryState" | "memoryStore" | "SignedUrlMinter"
  >;
  node: typeof NodeEntry;
}

const OURS_ENTRY = process.env.BENCH_OURS_ENTRY ?? "node";
if (OURS_ENTRY !== "node" && OURS_ENTRY !== "index")
  throw new Error("BENCH_OURS_ENTRY must be node or index");

async function loadOurs(): Promise<Ours> {
  const node = await built<typeof NodeEntry>("node");
  return { root: OURS_ENTRY === "index" ? await built<typeof Root>("index") : node, node };
}

/** The file routes of `ours-*` modes as a node:http handler (tus uploads staged on `staging`). */
function fileRoutes(
  ours: Ours,
  store: FileStore,
  minter: Root.SignedUrlMinter,
  state: StateStore,
  staging: TusStaging,
): Handler {
  return ours.node.toNodeHandler(
    ours.root.createFileRoutes({
      store,
      minter,
      state,
      maxBytes: MAX_BYTES,
      basePath: "/files",
      tus: { staging },
    }),
  );
}

if (mode === "ours-fs" || mode === "ours-memory") {
  const ours = await loadOurs();
  const { fsStore, fsTusStaging, memoryState, memoryStore, SignedUrlMinter } = ours.root;
  const state = memoryState();
  const minter = new SignedUrlMinter({ secret: BENCH_SECRET, baseUrl: url, state, ttl: "1h" });
  let storeDir = join(dir, "store");
  let store: FileStore;
  /** The file routes on a new store (fsStore over `storeDir`, or an empty memoryStore). */
  const mount = () => {
    store = mode === "ours-fs" ? fsStore(storeDir, { sweepInterval: 0 }) : memoryStore({ sweepInterval: 0 });
    handler = fileRoutes(ours, store, minter, state, fsTusStaging(join(dir, "tus-staging")));
  };
  mount();
  clean = async () => {
    if (mode === "ours-fs") await rm(storeDir, { recursive: true, force: true });
    mount();
  };
  fresh = async (round) => {
    storeDir = join(dir, "store", round);
    mount();
  };
  prepare = async (source) => {
    const file = await store.put(createReadStream(source), { scope: "bench", name: "big.bin" });
    return (await minter.downloadUrl(file)).url;
  };
} else if (mode === "ours-s3") {
  await oursS3();
} else if (mode === "raw") {
  const retainMb = Number(process.env.BENCH_RAW_RETAIN_MB ?? 0);
  if (!(retainMb >= 0)) throw new Error("BENCH_RAW_RETAIN_MB must be a number of megabytes");
  retain(retainMb);
  let n = 0;
  let files = join(dir, "raw");
  await mkdir(files, { recursive: true });
  let download = "";
  handler = (req, res) => {
    if (req.method === "PUT") {
      pipeline(req, createWriteStream(join(files, `${n++}`))).then(
        () => res.end("ok"),
        () => res.destroy(),
      );
      return;
    }
    stat(download).then((info) => {
      res.writeHead(200, { "content-length": String(info.size), "content-type": "application/octet-stream" });
      pipeline(createReadStream(download), res).catch(() => undefined);
    });
  };
  clean = async () => {
    await rm(files, { recursive: true, force: true });
    await mkdir(files, { recursive: true });
  };
  fresh = async (round) => {
    files = join(dir, "raw", round);
    await mkdir(files, { recursive: true });
  };
  prepare = async (source) => {
    download = source;
    return `${url}/down`;
  };
} else if (mode === "tus") {
  const { Server } = await import("@tus/server");
  const { FileStore } = await import("@tus/file-store");
  const files = join(dir, "tus");
  await mkdir(files, { recursive: true });
  const tus = new Server({ path: "/files", datastore: new FileStore({ directory: files }) });
  handler = (req, res) => {
    tus.handle(req, res);
  };
  clean = async () => {
    await rm(files, { recursive: true, force: true });
    await mkdir(files, { recursive: true });
  };
} else {
  throw new Error(`unknown mode ${mode}`);
}

/** The file routes on s3Store with S3 tus staging; commits timed from staging to visible. */
async function oursS3(): Promise<void> {
  const s3 = JSON.parse(process.env.BENCH_S3 ?? "null") as {
    endpoint: string;
    region: string;
    accessKeyId: string;
    secretAccessKey: string;
    bucket: string;
  } | null;
  if (!s3) throw new Error("ours-s3 needs BENCH_S3");
  const ours = await loadOurs();
  const { memoryState, SignedUrlMinter } = ours.root;
  const { s3Store, s3TusStaging } = await built<typeof S3Entry>("s3");
  const { S3Client } = await import("@aws-sdk/client-s3");
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const state = memoryState();
  const inner = s3Store({ bucket: s3.bucket, client, prefix: "bench-tus/", sweepInterval: 0 });
  let copy = true;
  let commitSeconds = 0;
  // The commit's own peak RSS growth: this process's peak is reset when the commit starts (the peak
  // until then is kept, so the bench still sees the whole round's) and read when it ends.
  const commitRss = { before: 0, growth: 0, peakBefore: 0 };
  const commitStarts = () => {
    commitRss.peakBefore = peakRssMiB(process.pid);
    resetPeakRss(process.pid);
    commitRss.before = rssMiB(process.pid);
    return performance.now();
  };
  const timed = (started: number, staged: StagedFile): StagedFile => ({
    file: staged.file,
    abort: () => staged.abort(),
    async commit() {
      const file = await staged.commit();
      commitSeconds = (performance.now() - started) / 1000;
      commitRss.growth = peakRssMiB(process.pid) - commitRss.before;
      return file;
    },
  });
  const store: FileStore = {
    ...inner,
    async stage(source, options) {
      const started = commitStarts();
      return timed(started, await inner.stage(source, options));
    },
    async adopt(source, options) {
      if (!copy) return null;
      const started = commitStarts();
      const staged = await inner.adopt?.(source, options);
      return staged ? timed(started, staged) : null;
    },
  };
  const minter = new SignedUrlMinter({ secret: BENCH_SECRET, baseUrl: url, state, ttl: "1h" });
  handler = fileRoutes(ours, store, minter, state, s3TusStaging(inner, state, { dir: join(dir, "spool") }));
  const removeAll = async () => {
    for (;;) {
      const page = await inner.list("bench", {});
      if (page.files.length === 0) return;
      for (const file of page.files) await inner.delete("bench", file.id);
    }
  };
  clean = removeAll;
  extra = async (command) => {
    if (command.cmd === "commit-mode") {
      copy = command.mode === "copy";
      return {};
    }
    if (command.cmd === "commit-seconds") {
      return { seconds: commitSeconds, rssGrowthMiB: commitRss.growth, peakBeforeMiB: commitRss.peakBefore };
    }
    return undefined;
  };
}

await servePeer(
  { url },
  async (command) => {
    const answer = await extra(command);
    if (answer) return answer;
    if (command.cmd === "clean") {
      await clean();
      return {};
    }
    if (command.cmd === "fresh") {
      await fresh(String(command.round));
      return {};
    }
    if (command.cmd === "prepare") return { url: await prepare(String(command.source)) };
    if (command.cmd === "gc") {
      // `{"cmd": "gc", "scavenge": true}`: a young-generation collection first, so `arrayBuffers` and
      // `heapUsed` count what was promoted, not what the young generation still holds dead.
      if (command.scavenge === true) scavenge();
      return {
        ...gcCounts,
        arrayBuffers: process.memoryUsage().arrayBuffers,
        heapUsed: process.memoryUsage().heapUsed,
        oldGeneration: oldGeneration(),
      };
    }
    if (command.cmd === "collect") {
      fullGc();
      return {};
    }
    throw new Error(`unknown command ${JSON.stringify(command)}`);
  },
  async () => {
    server.closeAllConnections();
    server.close();
  },
);
