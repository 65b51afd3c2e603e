/**
 * Benchmark (not a timed test) behind the upload page's choice of tus client: the page's own client
 * (`src/ui/client/tus-client.ts`) against `tus-js-client` bundled for the browser — bundle size
 * (minified, gzipped) and the time of one upload of the same file from Chromium to the same tus
 * endpoint, in alternating rounds. docs/resumable-uploads.md reports the figures.
 *
 *   npx tsx scripts/browser/bench-tus-clients.ts              # 64 MiB, 5 rounds, 16 MiB chunks
 *   BENCH_MIB=256 BENCH_ROUNDS=3 BENCH_CHUNK_MIB=8 npx tsx scripts/browser/bench-tus-clients.ts
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tusEndpointOf } from "../../src/uploads/upload-handle.js";
import { launchChromium } from "../../test/browser/support/chromium.js";
import { startFileServer } from "../../test/browser/support/file-server.js";
import {
  gzipBytes,
  serveTusClients,
  type TusClientName,
  tusClientBundle,
} from "../../test/browser/support/tus-clients.js";

const mib = Number(process.env.BENCH_MIB ?? 64);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const chunk = Number(process.env.BENCH_CHUNK_MIB ?? 16) * 1024 * 1024;
const size = mib * 1024 * 1024;

for (const name of ["own", "tus-js-client"] as const) {
  const code = await tusClientBundle(name);
  console.log(`${name}: ${code.length} bytes minified, ${gzipBytes(code)} bytes gzipped`);
}

const dir = await mkdtemp(join(tmpdir(), "bench-tus-clients-"));
const path = join(dir, "big.bin");
await writeFile(path, randomBytes(size));
const server = await startFileServer({
  maxBytes: size,
  maxFiles: 1,
  node: (req, res) => serveTusClients(req.url, res),
});
const browser = await launchChromium();

/** One upload with `name` in a fresh page; milliseconds from start to the last answer. */
async function once(name: TusClientName, round: number): Promise<number> {
  const ticket = await server.uploads.createTicket(`${name}-${round}`);
  const endpoint = tusEndpointOf(ticket.upload_url);
  const page = await browser.context.newPage();
  try {
    // tsx keeps function names through a `__name` helper the page does not have.
    await page.addInitScript("window.__name = (f) => f;");
    await page.goto(`${server.origin}/interop/${name}.html`);
    await page.setInputFiles("#f", path);
    return await page.evaluate(
      async ({ name, endpoint, chunk }) => {
        const file = (document.getElementById("f") as HTMLInputElement).files?.[0] as File;
        // biome-ignore lint/suspicious/noExplicitAny: the bundles set window.tusClient
        const client = (window as any).tusClient;
        const started = performance.now();
        if (name === "own") {
          const outcome = await client.tusUpload({ endpoint, file, chunkSize: chunk, storage: null });
          if (outcome.kind !== "stored") throw new Error(`own: ${JSON.stringify(outcome)}`);
        } else {
          await new Promise<void>((resolve, reject) => {
            new client.Upload(file, {
              endpoint,
              chunkSize: chunk,
              storeFingerprintForResuming: false,
              metadata: { filename: file.name, filetype: file.type },
              onSuccess: () => resolve(),
              onError: reject,
            }).start();
          });
        }
        return performance.now() - started;
      },
      { name, endpoint, chunk },
    );
  } finally {
    await page.close();
  }
}

try {
  const runs: Record<"own" | "tus-js-client", number[]> = { own: [], "tus-js-client": [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0
      ? (["own", "tus-js-client"] as const)
      : (["tus-js-client", "own"] as const)) {
      runs[name].push(await once(name, round));
    }
  }
  const median = (values: number[]) =>
    [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
  console.log(`file: ${mib} MiB, chunks of ${chunk / 1024 / 1024} MiB, ${rounds} rounds`);
  for (const [name, values] of Object.entries(runs)) {
    const best = Math.min(...values);
    console.log(
      `${name}: best ${best.toFixed(0)} ms (${(mib / (best / 1000)).toFixed(0)} MiB/s), median ${median(values).toFixed(0)} ms; all ${values.map((ms) => ms.toFixed(0)).join(" ")}`,
    );
  }
  console.log(
    `own / tus-js-client time: median ${(median(runs.own) / median(runs["tus-js-client"])).toFixed(2)}`,
  );
} finally {
  await browser.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
