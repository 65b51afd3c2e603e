/**
 * The upload page as a person reads it (issue 23): which server asks, when the link expires (a date
 * and time with the zone, local and UTC), sizes in the units of the limit, and one visible state at a
 * time (`data-state`: waiting, ready, uploading, done, expired, error), all named for assistive tech.
 */

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { utcText } from "../../src/ui/page-text.js";
import type { UploadTicket } from "../../src/uploads/types.js";
import { connectInMemory } from "../support/in-memory-client.js";
import {
  browserAvailable,
  type LaunchedBrowser,
  launchChromium,
  screenshotPath,
} from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";

const MiB = 1024 * 1024;

describe.runIf(browserAvailable())("upload page: what the person reads", () => {
  let browser: LaunchedBrowser;
  let server: FileServer;
  let decimal: FileServer;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    browser = await launchChromium();
    server = await startFileServer({ maxBytes: 2 * MiB, maxFiles: 3 });
    decimal = await startFileServer({ maxBytes: 50_000, maxFiles: 1 });
  });
  afterAll(async () => {
    await server?.close();
    await decimal?.close();
    await browser?.close();
  });
  afterEach(async () => {
    await page?.close();
  });

  /** Opens `url` in a page that runs in `timezone` with `locale` (set before the page's script runs). */
  async function open(url: string, where: { timezone?: string; locale?: string } = {}): Promise<Page> {
    page = await browser.context.newPage();
    problems = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(String(error)));
    if (where.timezone || where.locale) {
      const cdp = await browser.context.newCDPSession(page);
      if (where.timezone) await cdp.send("Emulation.setTimezoneOverride", { timezoneId: where.timezone });
      if (where.locale) await cdp.send("Emulation.setLocaleOverride", { locale: where.locale });
    }
    await page.goto(url);
    return page;
  }

  const state = () => page.locator("#uploader").getAttribute("data-state");

  /** A ticket minted the way a model gets one: `get_upload_url` on a real MCP server, over a real client. */
  async function ticketFrom(info: { name: string; title?: string }): Promise<UploadTicket> {
    const mcp = new McpServer({ version: "1.0.0", ...info });
    server.uploads.attach(mcp);
    const { client, close } = await connectInMemory(mcp, { name: "look-test", version: "1.0.0" });
    try {
      const result = await client.callTool({ name: "get_upload_url", arguments: {} });
      return result.structuredContent as unknown as UploadTicket;
    } finally {
      await close();
    }
  }

  it("says which server asks (its title, escaped; else its name) in the page and the window title", async () => {
    const titled = await ticketFrom({ name: "acme-files", title: 'Acme <b>"Files"</b> & Co' });
    await open(titled.upload_url);
    expect(await page.locator("#asker").textContent()).toBe('Acme <b>"Files"</b> & Co asks you for files');
    expect(await page.locator("#asker b").count()).toBe(0); // shown as text, never as markup
    expect(await page.title()).toBe('Upload files · Acme <b>"Files"</b> & Co');
    // The get_upload_url text speaks in the limit's units too.
    await page.close();

    const named = await ticketFrom({ name: "word-counter" });
    await open(named.upload_url);
    expect(await page.locator("#asker").textContent()).toBe("word-counter asks you for files");
    expect(problems).toEqual([]);
  });

  it("shows the expiry as a date and time in the person's zone with its name, and in UTC", async () => {
    const ticket = await server.uploads.createTicket("expiry");
    const expires = new Date(ticket.expires_at);
    await open(ticket.upload_url, { timezone: "Asia/Kolkata", locale: "en-GB" });
    const time = page.locator("#expiry-time");
    expect(await time.getAttribute("datetime")).toBe(expires.toISOString());
    const text = (await time.textContent()) ?? "";
    // Local time in Kolkata is UTC+5:30, with the zone's name; then the UTC form.
    const local = new Date(expires.getTime() + 5.5 * 3600_000);
    const hhmm = `${String(local.getUTCHours()).padStart(2, "0")}:${String(local.getUTCMinutes()).padStart(2, "0")}`;
    expect(text).toContain(hhmm);
    expect(text).toContain(String(local.getUTCFullYear()));
    // Chromium's ICU names the zone by its canonical id.
    expect(text).toMatch(/India Standard Time \(Asia\/(Kolkata|Calcutta)\)/);
    expect(text.endsWith(`, ${utcText(expires)}`)).toBe(true);
    expect(await page.locator("#expiry").textContent()).toBe(`Link expires ${text}`);
    await page.screenshot({ path: await screenshotPath("upload-page-look-expiry.png"), fullPage: true });
    await page.close();

    // In a UTC browser the UTC form is said once; without script the server's UTC text stands.
    await open(ticket.upload_url, { timezone: "UTC" });
    expect(await page.locator("#expiry-time").textContent()).toBe(utcText(expires));
    const html = await (await fetch(ticket.upload_url, { headers: { accept: "text/html" } })).text();
    expect(html).toContain(
      `<time id="expiry-time" datetime="${expires.toISOString()}">${utcText(expires)}</time>`,
    );
    expect(problems).toEqual([]);
  });

  it("uses the limit's units everywhere: binary units next to a MiB limit, decimal next to a kB one", async () => {
    const ticket = await server.uploads.createTicket("units");
    await open(ticket.upload_url);
    expect(await page.locator("#limits").textContent()).toBe("Up to 3 files, at most 2 MiB each.");
    await page.setInputFiles("#picker", [
      { name: "a.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(1536) },
      { name: "b.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(2 * MiB + 1) },
    ]);
    expect(await page.locator("#files .size").allTextContents()).toEqual(["1.5 KiB"]);
    // Just over the limit never reads as equal to it.
    expect(await page.locator("#error").textContent()).toBe(
      "b.bin is too large (2097153 bytes). The limit is 2 MiB.",
    );
    await page.close();

    const other = await decimal.uploads.createTicket("units");
    await open(other.upload_url);
    expect(await page.locator("#limits").textContent()).toBe("One file, at most 50 kB.");
    await page.setInputFiles("#picker", [
      { name: "c.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(62_500) },
    ]);
    expect(await page.locator("#error").textContent()).toBe(
      "c.bin is too large (63 kB). The limit is 50 kB.",
    );
    await page.setInputFiles("#picker", [
      { name: "d.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(1_500) },
    ]);
    expect(await page.locator("#files .size").allTextContents()).toEqual(["1.5 kB"]);
    expect(problems).toEqual([]);
  });

  it("goes waiting → ready → uploading (with progress) → done, each state named and visible", async () => {
    const ticket = await server.uploads.createTicket("states");
    await open(ticket.upload_url);
    expect(await state()).toBe("waiting");
    const tree = await page.locator("body").ariaSnapshot();
    expect(tree).toContain('main "Upload files"');
    expect(tree).toContain('list "About this upload link"');
    expect(tree).toContain('group "Drop files here, or"');
    await page.setInputFiles("#picker", [
      { name: "big.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(1.5 * MiB, 7) },
    ]);
    expect(await state()).toBe("ready");
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 512 * 1024,
    });
    await page.locator("#upload").click();
    await page.waitForFunction(() => document.getElementById("uploader")?.dataset.state === "uploading");
    expect(await page.locator("#status").textContent()).toBe("Uploading…");
    await page.waitForFunction(() => {
      const bar = document.querySelector("#files progress") as HTMLProgressElement | null;
      return bar !== null && bar.value > 0 && bar.value < 100;
    });
    await page.screenshot({ path: await screenshotPath("upload-page-look-uploading.png"), fullPage: true });
    await page.locator("#done").waitFor({ state: "visible" });
    await cdp.detach();
    expect(await state()).toBe("done");
    expect(await page.locator("#upload").isHidden()).toBe(true);
    expect(await page.locator("#drop").isHidden()).toBe(true);
    await page.screenshot({ path: await screenshotPath("upload-page-look-done.png"), fullPage: true });
    expect((await server.files("states")).map((file) => file.name)).toEqual(["big.bin"]);
    expect(problems).toEqual([]);
  });

  it("shows the error state with a named alert when a file is refused, and the problem pages look the same", async () => {
    const ticket = await server.uploads.createTicket("error-state");
    await open(ticket.upload_url);
    await page.setInputFiles("#picker", [
      { name: "huge.iso", mimeType: "application/octet-stream", buffer: Buffer.alloc(3 * MiB) },
    ]);
    expect(await state()).toBe("error");
    expect(await page.locator("[role=alert]").textContent()).toBe(
      "huge.iso is too large (3 MiB). The limit is 2 MiB.",
    );
    await page.close();
    await open(`${server.origin}/files/upload/not-a-token`);
    expect(await state()).toBe("error");
    expect(await page.locator("main").getAttribute("aria-labelledby")).toBe("title");
    expect(await page.locator("#title").textContent()).toBe("This upload link is not valid");
  });

  it("turns to the expired state by itself when the link's time is up, and sends nothing", async () => {
    const ticket = await server.uploads.createTicket("expires-open");
    page = await browser.context.newPage();
    // The fake clock belongs to the whole browser context: this test runs last.
    await page.clock.install();
    await page.goto(ticket.upload_url);
    await page.setInputFiles("#picker", [
      { name: "late.txt", mimeType: "text/plain", buffer: Buffer.from("late") },
    ]);
    expect(await page.locator("#uploader").getAttribute("data-state")).toBe("ready");
    const before = server.uploadRequests;
    await page.clock.fastForward("10:01");
    await page.waitForFunction(() => document.getElementById("uploader")?.dataset.state === "expired");
    expect(await page.locator("#error").textContent()).toBe(
      "This upload link has expired. Ask for a new one in the chat.",
    );
    expect(await page.locator("#upload").isHidden()).toBe(true);
    expect(await page.locator("#picker").isDisabled()).toBe(true);
    expect(await page.locator("#expiry-label").textContent()).toBe("Link expired");
    await page.screenshot({ path: await screenshotPath("upload-page-look-expired.png"), fullPage: true });
    expect(server.uploadRequests).toBe(before);
  });
});
