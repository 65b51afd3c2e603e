import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { close, listen } from "../http/server-helpers.js";
import { sha256 } from "../support/helpers.js";
import { browserAvailable, type LaunchedBrowser, launchChromium } from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";

/** A blank page on its own loopback origin, to run fetch() from. */
async function blankOrigin(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>app</title>");
  });
  return { origin: await listen(server), server };
}

/**
 * How signed URLs behave for a web front end on another origin, through the real router's
 * `allowedOrigins`.
 */
describe.runIf(browserAvailable())("signed URLs from another origin (CORS) in Chromium", () => {
  let browser: LaunchedBrowser;
  let files: FileServer;
  let app: Awaited<ReturnType<typeof blankOrigin>>;
  let stranger: Awaited<ReturnType<typeof blankOrigin>>;

  beforeAll(async () => {
    browser = await launchChromium();
    app = await blankOrigin();
    stranger = await blankOrigin();
    files = await startFileServer({ cors: [app.origin] });
  });
  afterAll(async () => {
    await files?.close();
    if (app) await close(app.server);
    if (stranger) await close(stranger.server);
    await browser?.close();
  });

  async function pageAt(origin: string): Promise<Page> {
    const page = await browser.context.newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  it("an allowed origin uploads with fetch + FormData, reads the handle, and downloads the file back", async () => {
    const ticket = await files.uploads.createTicket("cors");
    const bytes = randomBytes(64 * 1024);
    const page = await pageAt(app.origin);
    const reply = await page.evaluate(
      async ({ url, data }) => {
        const form = new FormData();
        form.append(
          "file",
          new Blob([new Uint8Array(data)], { type: "application/octet-stream" }),
          "blob.bin",
        );
        const response = await fetch(url, { method: "POST", body: form });
        return { status: response.status, body: await response.json() };
      },
      { url: ticket.upload_url, data: [...bytes] },
    );
    expect(reply.status).toBe(201);
    const stored = reply.body.files[0] as { id: string; handle: string; sha256: string };
    expect(stored.sha256).toBe(sha256(bytes));
    const file = await files.store.head("cors", stored.id);
    const { url: downloadUrl } = await files.minter.downloadUrl(file as NonNullable<typeof file>);
    const download = await page.evaluate(async (url) => {
      const whole = await fetch(url);
      const buffer = new Uint8Array(await whole.arrayBuffer());
      const part = await fetch(url, { headers: { Range: "bytes=0-9" } });
      return {
        status: whole.status,
        bytes: [...buffer],
        etag: whole.headers.get("etag"),
        disposition: whole.headers.get("content-disposition"),
        partStatus: part.status,
        contentRange: part.headers.get("content-range"),
      };
    }, downloadUrl);
    expect(download.status).toBe(200);
    expect(sha256(Buffer.from(download.bytes))).toBe(sha256(bytes));
    expect(download.etag).toBe(`"${sha256(bytes)}"`);
    expect(download.disposition).toMatch(/^attachment; filename="blob.bin"/);
    expect(download.partStatus).toBe(206);
    expect(download.contentRange).toBe(`bytes 0-9/${bytes.length}`);

    // A PUT with a digest header needs a preflight; it passes for the allowed origin.
    const second = await files.uploads.createTicket("cors");
    const put = await page.evaluate(
      async ({ url, digest }) => {
        const response = await fetch(`${url}?filename=raw.txt`, {
          method: "PUT",
          headers: { "Content-Type": "text/plain", "X-Content-SHA256": digest },
          body: "raw body",
        });
        return response.status;
      },
      { url: second.upload_url, digest: sha256("raw body") },
    );
    expect(put).toBe(201);
    await page.close();
  });

  it("another origin is refused: the preflight fails, and a simple form post stores nothing nor uses the ticket", async () => {
    const ticket = await files.uploads.createTicket("cors-stranger");
    const page = await pageAt(stranger.origin);
    const before = files.uploadRequests;
    const put = await page.evaluate(async (url) => {
      try {
        await fetch(`${url}?filename=x.txt`, {
          method: "PUT",
          headers: { "Content-Type": "text/plain" },
          body: "x",
        });
        return "read";
      } catch (error) {
        return String(error);
      }
    }, ticket.upload_url);
    expect(put).toMatch(/TypeError: Failed to fetch/);
    expect(files.uploadRequests).toBe(before); // the PUT itself never reached the server
    const post = await page.evaluate(async (url) => {
      const form = new FormData();
      form.append("file", new Blob(["x"]), "x.txt");
      try {
        await fetch(url, { method: "POST", body: form });
        return "read";
      } catch (error) {
        return String(error);
      }
    }, ticket.upload_url);
    expect(post).toMatch(/TypeError: Failed to fetch/);
    expect(await files.files("cors-stranger")).toEqual([]);
    await page.close();
    // The ticket is still good for its rightful user.
    const form = new FormData();
    form.append("file", new Blob(["ok"]), "ok.txt");
    expect((await fetch(ticket.upload_url, { method: "POST", body: form })).status).toBe(201);
  });
});
