/**
 * Small files, what users feel (issue 24), each row ours ÷ a named baseline in the same run,
 * alternating rounds, min / median / max:
 * - 2,000 uploads of 4 KiB, 16 at a time, ticket + PUT, server and client in processes of their own,
 *   vs a raw node:http server writing each body to a file (and the same route on memoryStore);
 * - `fsStore.put(4 KiB)` vs `fs.writeFile`, 16 at a time;
 * - `FileBridge.resolve()` of a `data:` URL vs `Buffer.from(b64)` + `writeFile`, at 4 KiB and 1 MiB.
 *
 *   npm run bench -- small-files          # 9 rounds per row (BENCH_ROUNDS to change), BENCH_SMALL_COUNT=2000
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FileStore } from "../src/storage/types.js";
import { built } from "./_built.js";
import {
  compare,
  KiB,
  loadLine,
  MiB,
  type Peer,
  positiveInt,
  type Row,
  report,
  roundsAtLeast,
  type Sample,
  serverRound,
  startPeer,
} from "./_lib.js";

// Our code as its published build (bench/_built.ts).
const { FileBridge, fsStore } = await built<typeof import("../src/index.js")>("index");

const COUNT = positiveInt("BENCH_SMALL_COUNT", 2000);
const CONCURRENCY = 16;
/** Rounds per row: each takes under a second, so more of them steady the median. */
const SMALL_ROUNDS = roundsAtLeast(9);
const dir = await mkdtemp(join(tmpdir(), "mfb-bench-small-"));
const rows: Row[] = [];
console.log(`small files · ${loadLine()}`);

let rounds = 0;

/** One `small` run of the client against a server, the server's peak RSS taken exactly. */
async function httpRound(client: Peer, server: Peer, mode: "ours" | "raw"): Promise<Sample> {
  // A new empty folder per round, nothing removed until the end (see `fresh` in _server.ts).
  await server.ask({ cmd: "fresh", round: String(++rounds) });
  return serverRound(server, async () => {
    const { seconds } = await client.ask({
      cmd: "small",
      url: server.ready.url,
      mode,
      count: COUNT,
      size: 4 * KiB,
      concurrency: CONCURRENCY,
    });
    return Number(seconds);
  });
}

/** `count` runs of `task`, `concurrency` at a time. */
async function batch(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
): Promise<Sample> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
  return { seconds: (performance.now() - started) / 1000 };
}

try {
  const client = await startPeer("_client.ts");
  const raw = await startPeer("_server.ts", ["raw", join(dir, "raw")]);
  const oursFs = await startPeer("_server.ts", ["ours-fs", join(dir, "ours-fs")]);
  const oursMemory = await startPeer("_server.ts", ["ours-memory", join(dir, "ours-memory")]);
  const baseline = { name: "raw node:http server writing files", run: () => httpRound(client, raw, "raw") };
  // One untimed warm-up of each, so JIT and connection setup do not land in round one.
  await httpRound(client, raw, "raw");
  await httpRound(client, oursFs, "ours");
  await httpRound(client, oursMemory, "ours");
  rows.push(
    await compare(
      `${COUNT} uploads of 4 KiB, ${CONCURRENCY} at a time, ticket + PUT (fsStore)`,
      () => httpRound(client, oursFs, "ours"),
      baseline,
      { goal: 0.8, rounds: SMALL_ROUNDS },
    ),
  );
  rows.push(
    await compare(
      `${COUNT} uploads of 4 KiB, ${CONCURRENCY} at a time, ticket + PUT (memoryStore)`,
      () => httpRound(client, oursMemory, "ours"),
      baseline,
      { rounds: SMALL_ROUNDS },
    ),
  );
  for (const peer of [client, raw, oursFs, oursMemory]) await peer.stop();

  // Each round in a new empty folder on both sides, nothing removed until the end: on ext4, creating
  // files right after thousands were removed costs up to 10× more (docs/performance.md).
  const body = randomBytes(4 * KiB);
  const stores: FileStore[] = [];
  const puts = async () => {
    const store = fsStore(join(dir, "store", String(++rounds)), { sweepInterval: 0 });
    stores.push(store);
    return batch(COUNT, CONCURRENCY, (i) => store.put(body, { scope: "bench", name: `n${i}.txt` }));
  };
  const writes = async () => {
    const plain = join(dir, "plain", String(++rounds));
    await mkdir(plain, { recursive: true });
    return batch(COUNT, CONCURRENCY, (i) => writeFile(join(plain, `n${i}.txt`), body));
  };
  await puts();
  await writes();
  rows.push(
    await compare(
      `fsStore.put(4 KiB) × ${COUNT}, ${CONCURRENCY} at a time`,
      puts,
      {
        name: "fs.writeFile",
        run: writes,
      },
      { goal: 0.8, rounds: SMALL_ROUNDS },
    ),
  );
  for (const store of stores) await store.close?.();

  const bridge = new FileBridge({ tmpDir: join(dir, "bridge"), maxBytes: 64 * MiB });
  // Enough calls that a round takes 0.3–0.7 s: with 500 and 50 calls, rounds of 0.04–0.27 s let one
  // disturbed round move the median (1 MiB read 0.73 in one run, 0.79–0.96 in eight others).
  for (const [label, size, count] of [
    ["4 KiB", 4 * KiB, COUNT],
    ["1 MiB", MiB, Math.max(1, Math.round(COUNT / 8))],
  ] as const) {
    const bytes = randomBytes(size);
    // Strings as a server receives them: out of JSON.parse (a tool argument), not external strings.
    const payload: string = JSON.parse(JSON.stringify(bytes.toString("base64")));
    const url: string = JSON.parse(
      JSON.stringify(`data:application/octet-stream;name=b.bin;base64,${payload}`),
    );
    const target = join(dir, "baseline.bin");
    const resolves = () =>
      batch(count, 1, async () => {
        const file = await bridge.resolve(url, { scope: "bench" });
        if (file.size !== size) throw new Error("size mismatch");
        await file.dispose();
      });
    const decodes = () =>
      batch(count, 1, async () => {
        await writeFile(target, Buffer.from(payload, "base64"));
        await rm(target);
      });
    await resolves();
    await decodes();
    rows.push(
      await compare(
        `resolve() of a ${label} data: URL (+ dispose) × ${count}`,
        resolves,
        {
          name: "Buffer.from(b64) + writeFile (+ rm)",
          run: decodes,
        },
        { goal: 0.8, rounds: SMALL_ROUNDS },
      ),
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
report("small-files", rows, { count: COUNT, concurrency: CONCURRENCY });
