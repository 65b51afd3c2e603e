/**
 * Benchmark (not a timed test): the upload page moving one large file, against a plain `fetch` +
 * `FormData` upload of the same file from the same Chromium to the same server. Issue 15 asks for
 * the page to reach at least 0.8× the plain upload's throughput.
 *
 *   npx tsx scripts/browser/bench-upload-page.ts            # 512 MiB
 *   BENCH_MIB=64 BENCH_ROUNDS=3 npx tsx scripts/browser/bench-upload-page.ts
 *
 * Both are timed inside the page (click to done state for the page, the fetch call for fetch), in
 * alternating rounds; the best and the median of each are reported. On a small shared machine the
 * spread between rounds is large, so look at both.
 */
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "../../test/browser/support/chromium.js";
import { startFileServer } from "../../test/browser/support/file-server.js";

const mib = Number(process.env.BENCH_MIB ?? 512);
const size = mib * 1024 * 1024;
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

const dir = await mkdtemp(join(tmpdir(), "bench-upload-page-"));
const path = join(dir, "big.bin");
await new Promise<void>((resolve, reject) => {
  const out = createWriteStream(path);
  const chunk = Buffer.alloc(1024 * 1024, 7);
  let written = 0;
  const write = () => {
    while (written < size) {
      written += chunk.length;
      if (!out.write(chunk)) return out.once("drain", write);
    }
    out.end(resolve);
  };
  out.on("error", reject);
  write();
});

const server = await startFileServer({ maxBytes: size + 1, maxFiles: 1 });
const browser = await launchChromium();
try {
  const runs: Record<"page" | "fetch", number[]> = { page: [], fetch: [] };
  for (let round = 0; round < rounds; round++) {
    // The upload page.
    {
      const ticket = await server.uploads.createTicket(`page-${round}`);
      const page = await browser.context.newPage();
      await page.goto(ticket.upload_url);
      await page.setInputFiles("#picker", path);
      // Timed inside the page, as the fetch run is: from the click to the done state.
      const timing = page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const upload = document.getElementById("upload") as HTMLElement;
            const done = document.getElementById("done") as HTMLElement;
            let started = 0;
            upload.addEventListener(
              "click",
              () => {
                started = performance.now();
              },
              { capture: true, once: true },
            );
            new MutationObserver(() => {
              if (!done.hidden) resolve(performance.now() - started);
            }).observe(done, { attributes: true, attributeFilter: ["hidden"] });
          }),
      );
      await page.locator("#upload").click();
      runs.page.push(await timing);
      await page.close();
    }
    // Plain fetch + FormData from the same origin.
    {
      const ticket = await server.uploads.createTicket(`fetch-${round}`);
      const page = await browser.context.newPage();
      await page.goto(`${server.origin}/files/none`).catch(() => {});
      await page.setContent('<input type="file" id="f">');
      await page.setInputFiles("#f", path);
      const ms = await page.evaluate(async (url) => {
        const file = (document.getElementById("f") as HTMLInputElement).files?.[0] as File;
        const form = new FormData();
        form.append("file", file, file.name);
        const started = performance.now();
        const response = await fetch(url, { method: "POST", body: form });
        if (response.status !== 201) throw new Error(`upload failed: ${response.status}`);
        return performance.now() - started;
      }, ticket.upload_url);
      runs.fetch.push(ms);
      await page.close();
    }
  }
  const best = (values: number[]) => Math.min(...values);
  const median = (values: number[]) =>
    [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
  const mbps = (ms: number) => (mib / (ms / 1000)).toFixed(0);
  console.log(`file: ${mib} MiB, ${rounds} rounds`);
  for (const [label, values] of [
    ["upload page", runs.page],
    ["plain fetch", runs.fetch],
  ] as const) {
    console.log(
      `${label}: best ${best(values).toFixed(0)} ms (${mbps(best(values))} MiB/s), median ${median(values).toFixed(0)} ms; all ${values.map((ms) => ms.toFixed(0)).join(" ")}`,
    );
  }
  console.log(
    `page throughput / fetch throughput: best ${(best(runs.fetch) / best(runs.page)).toFixed(2)}, median ${(median(runs.fetch) / median(runs.page)).toFixed(2)} (goal ≥ 0.80)`,
  );
} finally {
  await browser.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
}
