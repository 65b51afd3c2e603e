/**
 * End-to-end figures for the four example servers, each driven the way its test drives it (real SDK
 * client, real HTTP on 127.0.0.1): upload → listed, signed download with usage charge, files handed to
 * the local stand-in provider, and pandoc conversions. Peak RSS growth shows that the large transfers
 * stream. Set BENCH_SIZE_MB to change the transfer size (default 64).
 *
 *   npx tsx bench/examples.ts
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type CallToolResult,
  ResourceListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { start as startChat } from "../examples/chat-uploads/server.js";
import { start as startContainer } from "../examples/file-container/server.js";
import { start as startPandoc } from "../examples/pandoc-converter/server.js";
import { start as startProvider } from "../examples/provider-upload/server.js";
import { peakRssMiB, resetPeakRss } from "./_lib.js";

const SIZE_MB = Number(process.env.BENCH_SIZE_MB ?? 64);
const SIZE = SIZE_MB * 1024 * 1024;
const root = await mkdtemp(join(tmpdir(), "bench-examples-"));
const rows: Array<{ example: string; step: string; ms: number; mbps?: number; rssDeltaMb?: number }> = [];

/**
 * Peak RSS growth while `fn` runs, exact: the kernel's high-water mark (VmHWM, reset first) minus the
 * RSS at the start. The example servers run in this process, so this is their memory.
 */
async function measure<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; rssDeltaMb: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss / 2 ** 20;
  resetPeakRss(process.pid);
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0, rssDeltaMb: Math.max(0, peakRssMiB(process.pid) - base) };
}

async function bigFile(path: string): Promise<void> {
  const chunk = randomBytes(1024 * 1024);
  await pipeline(
    Readable.from(
      (function* () {
        for (let i = 0; i < SIZE_MB; i++) yield chunk;
      })(),
    ),
    createWriteStream(path),
  );
}

/** Streams a local file as a request body (no client-side buffering) and returns the status. */
async function postFile(
  url: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number }> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on("error", reject);
    pipeline(createReadStream(path), req).catch(reject);
  });
}

const mbps = (ms: number) => Math.round((SIZE / 2 ** 20 / (ms / 1000)) * 10) / 10;

try {
  const big = join(root, "big.bin");
  await bigFile(big);

  // chat-uploads: a SIZE_MB upload through the direct route until list_changed reaches the chat.
  {
    const app = await startChat({ apiKeys: ["k"], dataDir: join(root, "chat"), maxBytes: SIZE + 1 });
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(app.mcpUrl, {
        requestInit: { headers: { "x-chat-id": "c1", authorization: "Bearer k" } },
      }),
    );
    await client.listResources();
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => resolve()),
    );
    const r = await measure(async () => {
      // node:http + pipeline: undici's fetch buffers a streamed request body, which would hide the server's figure.
      const res = await postFile(`${app.url}/api/uploads/c1/big.bin`, big, {
        authorization: "Bearer k",
        "content-type": "application/octet-stream",
      });
      if (res.status !== 201) throw new Error(`upload ${res.status}`);
      await changed;
    });
    rows.push({
      example: "chat-uploads",
      step: `upload ${SIZE_MB} MiB → list_changed`,
      ms: r.ms,
      mbps: mbps(r.ms),
      rssDeltaMb: r.rssDeltaMb,
    });
    const small = await measure(async () => {
      for (let i = 0; i < 50; i++) {
        await fetch(`${app.url}/api/uploads/c1/n/${i}.txt`, {
          method: "POST",
          headers: { authorization: "Bearer k", "content-type": "text/plain" },
          body: `note ${i}`,
        });
      }
      return (await client.listResources()).resources.length;
    });
    rows.push({ example: "chat-uploads", step: "50 small uploads + list (per upload)", ms: small.ms / 50 });
    await client.close();
    await app.close();
  }

  // file-container: read → signed URL → streamed download of SIZE_MB, charge written to the ledger.
  {
    const app = await startContainer({
      keys: [{ key: "k", container: "acme" }],
      files: [{ container: "acme", name: "doc.md", content: "# doc\n" }],
      dataDir: join(root, "container"),
      ledgerPath: join(root, "usage.jsonl"),
    });
    const file = await app.registry.add({ path: big }, { scope: "acme", name: "big.bin", kind: "file" });
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(app.mcpUrl, {
        requestInit: { headers: { authorization: "Bearer k" } },
      }),
    );
    const read = await measure(async () => {
      for (let i = 0; i < 50; i++) await client.readResource({ uri: app.registry.uriFor(file) });
    });
    rows.push({
      example: "file-container",
      step: "resources/read → signed URL (per read)",
      ms: read.ms / 50,
    });
    const url = (
      (await client.readResource({ uri: app.registry.uriFor(file) })).contents[0] as { text: string }
    ).text.trim();
    const dl = await measure(async () => {
      const res = await fetch(url);
      let n = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) n += chunk.length;
      if (n !== SIZE) throw new Error("short download");
      for (;;) {
        const usage = (await app.ledger.entries()).filter((e) => e.type === "usage");
        if (usage.length === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    });
    rows.push({
      example: "file-container",
      step: `download ${SIZE_MB} MiB + charge`,
      ms: dl.ms,
      mbps: mbps(dl.ms),
      rssDeltaMb: dl.rssDeltaMb,
    });
    await client.close();
    await app.close();
  }

  // provider-upload: a SIZE_MB path + a small inline file to the local stand-in, then cleanup.
  {
    const shared = join(root, "shared");
    await mkdir(shared);
    await bigFile(join(shared, "big.bin"));
    const example = await startProvider({
      roots: [shared],
      tmpDir: join(root, "bridge"),
      maxBytes: SIZE + 1,
    });
    const server = example.createServer();
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "bench", version: "1" });
    await Promise.all([server.connect(b), client.connect(a)]);
    const r = await measure(async () => {
      const result = (await client.callTool({
        name: "chat_with_files",
        arguments: { prompt: "p", files: [join(shared, "big.bin"), { filename: "a.txt", content: "aGk=" }] },
      })) as CallToolResult;
      if (result.isError) throw new Error(JSON.stringify(result.content));
    });
    rows.push({
      example: "provider-upload",
      step: `chat_with_files, ${SIZE_MB} MiB path + inline`,
      ms: r.ms,
      mbps: mbps(r.ms),
      rssDeltaMb: r.rssDeltaMb,
    });
    await client.close();
    await example.close();
  }

  // pandoc-converter: md → html (text) and md → docx (artifact), if pandoc is there.
  const ensure = spawnSync("bash", [fileURLToPath(new URL("../scripts/ensure-pandoc.sh", import.meta.url))], {
    encoding: "utf8",
  });
  if (ensure.status === 0) {
    const docs = join(root, "docs");
    await mkdir(docs);
    await writeFile(join(docs, "r.md"), "# Title\n\n" + "Some *text* here. ".repeat(2000));
    const converter = await startPandoc({
      roots: [docs],
      tmpDir: join(root, "pandoc"),
      dataDir: join(root, "pandoc-data"),
    });
    await mkdir(join(root, "pandoc"), { recursive: true });
    const server = converter.createServer();
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "bench", version: "1" });
    await Promise.all([server.connect(b), client.connect(a)]);
    for (const to of ["html", "docx"]) {
      const r = await measure(async () => {
        for (let i = 0; i < 5; i++) {
          const result = (await client.callTool({
            name: "convert-contents",
            arguments: { input_path: "r.md", to },
          })) as CallToolResult;
          if (result.isError) throw new Error(JSON.stringify(result.content));
        }
      });
      rows.push({ example: "pandoc-converter", step: `md (36 KB) → ${to} (per call)`, ms: r.ms / 5 });
    }
    await client.close();
    await converter.close();
  } else {
    console.log("pandoc not available; pandoc-converter figures skipped");
  }

  console.log("example            step                                        ms      MiB/s  peak RSS +MiB");
  for (const row of rows) {
    console.log(
      `${row.example.padEnd(18)} ${row.step.padEnd(42)} ${row.ms.toFixed(1).padStart(8)} ${String(row.mbps ?? "").padStart(8)} ${row.rssDeltaMb === undefined ? "" : row.rssDeltaMb.toFixed(1).padStart(8)}`,
    );
  }
  console.log(
    `BENCH_JSON ${JSON.stringify({
      bench: "examples",
      sizeMb: SIZE_MB,
      rows: rows.map((r) => ({
        ...r,
        ms: Math.round(r.ms * 10) / 10,
        ...(r.rssDeltaMb === undefined ? {} : { rssDeltaMb: Math.round(r.rssDeltaMb * 10) / 10 }),
      })),
    })}`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
