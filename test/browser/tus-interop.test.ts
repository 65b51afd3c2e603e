/**
 * tus clients in Chromium against the ticket's tus endpoint: `tus-js-client` (chunked, and in
 * parallel through concatenation) and Uppy with `@uppy/tus`, bundled with esbuild from node_modules
 * (versions pinned in package.json); and the upload page's own client, which resumes by itself when
 * the connection is cut mid-upload and after a reload, and falls back to the single request on a
 * server without tus. Every file is checked by its sha256 on the server.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { tusEndpointOf } from "../../src/uploads/upload-handle.js";
import { sha256 } from "../support/helpers.js";
import { browserAvailable, type LaunchedBrowser, launchChromium } from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";
import { serveTusClients } from "./support/tus-clients.js";
import { startTusProxy, type TusProxy } from "./support/tus-proxy.js";

const MiB = 1024 * 1024;

describe.runIf(browserAvailable())("tus clients in Chromium against the tus endpoint", () => {
  let browser: LaunchedBrowser;
  let server: FileServer;
  let proxy: TusProxy;
  let page: Page | undefined;
  /** `PATCH` requests the server saw: their `Upload-Offset`. */
  const patches: number[] = [];
  let dir: string;

  beforeAll(async () => {
    browser = await launchChromium();
    server = await startFileServer({
      maxBytes: 32 * MiB,
      maxFiles: 3,
      node: async (req, res) => {
        if (req.method === "PATCH") patches.push(Number(req.headers["upload-offset"]));
        return serveTusClients(req.url, res);
      },
    });
    proxy = await startTusProxy(server.origin);
    dir = await mkdtemp(join(tmpdir(), "tus-interop-"));
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    await browser?.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  });
  afterEach(async () => {
    await page?.close();
    page = undefined;
    patches.length = 0;
  });

  /** A ticket's tus endpoint and upload page, both through the proxy. */
  async function ticket(scope: string): Promise<{ endpoint: string; pageUrl: string }> {
    const made = await server.uploads.createTicket(scope);
    const viaProxy = (url: string) => url.replace(server.origin, proxy.origin);
    return { endpoint: viaProxy(tusEndpointOf(made.upload_url)), pageUrl: viaProxy(made.upload_url) };
  }

  async function clientPage(name: string, bytes: Buffer, fileName: string): Promise<Page> {
    page = await browser.context.newPage();
    await page.goto(`${proxy.origin}/interop/${name}.html`);
    await page.setInputFiles("#f", [{ name: fileName, mimeType: "application/octet-stream", buffer: bytes }]);
    return page;
  }

  it("tus-js-client uploads chunked, and in parallel (concatenation); exact sha256 on the server", async () => {
    for (const parallel of [1, 3]) {
      const scope = `tus-js-${parallel}`;
      const { endpoint } = await ticket(scope);
      const bytes = randomBytes(3 * MiB + 123);
      const open = await clientPage("tus-js-client", bytes, "clip.bin");
      const url = await open.evaluate(
        ({ endpoint, parallel }) =>
          new Promise<string>((resolve, reject) => {
            const tus = (window as unknown as { tusClient: typeof import("tus-js-client") }).tusClient;
            const file = (document.getElementById("f") as HTMLInputElement).files?.[0] as File;
            const upload = new tus.Upload(file, {
              endpoint,
              chunkSize: 1024 * 1024,
              parallelUploads: parallel,
              retryDelays: [0, 200],
              metadata: { filename: file.name, filetype: file.type },
              onSuccess: () => resolve(upload.url ?? ""),
              onError: (error) => reject(new Error(String(error))),
            });
            upload.start();
          }),
        { endpoint, parallel },
      );
      expect(url.startsWith(`${endpoint}/`)).toBe(true);
      const files = await server.files(scope);
      expect(files.map((file) => [file.name, file.size, file.sha256])).toEqual([
        ["clip.bin", bytes.length, sha256(bytes)],
      ]);
      await open.close();
      page = undefined;
    }
  });

  it("Uppy with @uppy/tus uploads; exact sha256 on the server", async () => {
    const { endpoint } = await ticket("uppy");
    const bytes = randomBytes(2 * MiB + 5);
    const open = await clientPage("uppy", bytes, "photo.raw");
    const outcome = await open.evaluate(async (endpoint) => {
      // biome-ignore lint/suspicious/noExplicitAny: Uppy's bundle on window
      const { Uppy, Tus } = (window as any).tusClient;
      const file = (document.getElementById("f") as HTMLInputElement).files?.[0] as File;
      const uppy = new Uppy({ autoProceed: false }).use(Tus, { endpoint, chunkSize: 512 * 1024 });
      uppy.addFile({ name: file.name, type: file.type, data: file });
      const result = await uppy.upload();
      return {
        successful: result.successful.length,
        failed: result.failed.map((failed: { error: unknown }) => String(failed.error)),
      };
    }, endpoint);
    expect(outcome).toEqual({ successful: 1, failed: [] });
    const files = await server.files("uppy");
    expect(files.map((file) => [file.name, file.size, file.sha256])).toEqual([
      ["photo.raw", bytes.length, sha256(bytes)],
    ]);
  });

  it("the upload page resumes by itself when the connection is cut mid-upload", async () => {
    const { pageUrl } = await ticket("dropped");
    const bytes = randomBytes(24 * MiB + 7);
    // A file on disk: Playwright hands a big in-memory buffer to the page slowly.
    const path = join(dir, "video.mp4");
    await writeFile(path, bytes);
    page = await browser.context.newPage();
    await page.goto(pageUrl);
    await page.setInputFiles("#picker", path);
    const cutAt = 5 * MiB + 4321;
    const cut = proxy.cutAfter(cutAt);
    await page.locator("#upload").click();
    await cut;
    await page.locator("#done").waitFor({ state: "visible" });
    const files = await server.files("dropped");
    expect(files.map((file) => [file.name, file.size, file.sha256])).toEqual([
      ["video.mp4", bytes.length, sha256(bytes)],
    ]);
    // The first PATCH started at 0; after the cut the page asked the offset and went on from there.
    expect(patches[0]).toBe(0);
    const resumed = patches.find((offset, index) => index > 0 && offset % (16 * MiB) !== 0);
    expect(resumed).toBeGreaterThan(0);
    expect(resumed).toBeLessThanOrEqual(cutAt);
    expect(await page.locator("#error").isHidden()).toBe(true);
  });

  it("opened again after a drop, the page resumes the same file from the server's offset", async () => {
    const { pageUrl } = await ticket("reloaded");
    const bytes = randomBytes(20 * MiB + 3);
    // A file on disk: the same name, size and modification time after the reload (its fingerprint).
    const path = join(dir, "scan.tiff");
    await writeFile(path, bytes);
    page = await browser.context.newPage();
    await page.goto(pageUrl);
    await page.setInputFiles("#picker", path);
    const cutAt = 3 * MiB + 99;
    // The connection drops and the server cannot be reached any more: the page retries…
    const cut = proxy.cutAfter(cutAt, { refuse: true });
    await page.locator("#upload").click();
    await cut;
    await expect.poll(() => page?.locator("#status").textContent()).toMatch(/Trying again/);
    await page.close();
    proxy.refuseConnections(false);
    patches.length = 0;
    // …and the person closes it meanwhile, then opens the link again (same browser profile) and picks the same file.
    page = await browser.context.newPage();
    await page.goto(pageUrl);
    await page.setInputFiles("#picker", path);
    await page.locator("#upload").click();
    await page.locator("#done").waitFor({ state: "visible" });
    const files = await server.files("reloaded");
    expect(files.map((file) => [file.name, file.size, file.sha256])).toEqual([
      ["scan.tiff", bytes.length, sha256(bytes)],
    ]);
    // No byte before the cut was sent again.
    expect(patches[0]).toBeGreaterThan(0);
    expect(patches[0]).toBeLessThanOrEqual(cutAt);
  });

  it("without a tus endpoint on the server, the page sends one file in the single request", async () => {
    const plain = await startFileServer({ maxBytes: 4 * MiB, maxFiles: 1, tus: false });
    try {
      const made = await plain.uploads.createTicket("no-tus");
      const creation = await fetch(tusEndpointOf(made.upload_url), {
        method: "POST",
        headers: { "tus-resumable": "1.0.0", "upload-length": "1" },
      });
      expect(creation.status).toBe(404);
      expect(creation.headers.get("tus-resumable")).toBeNull();
      const bytes = randomBytes(MiB + 1);
      page = await browser.context.newPage();
      await page.goto(made.upload_url);
      await page.setInputFiles("#picker", [
        { name: "plain.bin", mimeType: "application/octet-stream", buffer: bytes },
      ]);
      await page.locator("#upload").click();
      await page.locator("#done").waitFor({ state: "visible" });
      // The probe above, the page's tus creation (404 without Tus-Resumable), its multipart POST.
      expect(plain.uploadRequests).toBe(3);
      const files = await plain.files("no-tus");
      expect(files.map((file) => [file.name, file.sha256])).toEqual([["plain.bin", sha256(bytes)]]);
    } finally {
      await plain.close();
    }
  });
});
