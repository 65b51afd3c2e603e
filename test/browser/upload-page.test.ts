import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../support/helpers.js";
import {
  browserAvailable,
  type LaunchedBrowser,
  launchChromium,
  screenshotPath,
} from "./support/chromium.js";
import { type FileServer, startFileServer } from "./support/file-server.js";

const SCOPE = "page-scope";

describe.runIf(browserAvailable())("upload page in Chromium", () => {
  let browser: LaunchedBrowser;
  let server: FileServer;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    browser = await launchChromium();
    server = await startFileServer({ maxBytes: 2 * 1024 * 1024, maxFiles: 3 });
  });
  afterAll(async () => {
    await server?.close();
    await browser?.close();
  });
  afterEach(async () => {
    await page?.close();
  });

  async function open(url: string): Promise<Page> {
    page = await browser.context.newPage();
    problems = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(String(error)));
    const response = await page.goto(url);
    expect(response?.headers()["content-security-policy"]).toMatch(
      /^default-src 'none'; script-src ('sha256-|'none')/,
    );
    return page;
  }

  it("uploads two files with a progress bar each; they are stored with the right sha256", async () => {
    const ticket = await server.uploads.createTicket(SCOPE);
    const a = randomBytes(1536 * 1024);
    const b = Buffer.from("second file, plain text\n".repeat(100));
    await open(ticket.upload_url);
    await expect
      .poll(() => page.locator("#limits").textContent())
      .toMatch(/Up to 3 files, at most 2 MiB each/);
    await page.screenshot({ path: await screenshotPath("upload-page-empty.png"), fullPage: true });

    await page.setInputFiles("#picker", [
      { name: "photo.bin", mimeType: "application/octet-stream", buffer: a },
      { name: "notes.txt", mimeType: "text/plain", buffer: b },
    ]);
    await expect.poll(() => page.locator("#files li").count()).toBe(2);
    expect(await page.locator("#upload").isEnabled()).toBe(true);
    expect(await page.locator("#upload").textContent()).toBe("Upload 2 files");
    await page.screenshot({ path: await screenshotPath("upload-page-chosen.png"), fullPage: true });

    // Accessibility: every control is named, the list, progress bars and buttons are in the tree.
    const tree = await page.locator("body").ariaSnapshot();
    expect(tree).toContain('heading "Upload files" [level=1]');
    expect(tree).toMatch(/button "Choose files"|"Choose files"/);
    expect(tree).toContain('list "Chosen files"');
    expect(tree).toContain('progressbar "Upload progress of photo.bin"');
    expect(tree).toContain('progressbar "Upload progress of notes.txt"');
    expect(tree).toContain('button "Remove photo.bin"');
    expect(tree).toContain('button "Upload 2 files"');
    expect(
      await page.locator("#picker").evaluate((input) => (input as HTMLInputElement).labels?.[0]?.textContent),
    ).toBe("Choose files");
    // Keyboard: Tab reaches the picker, each Remove button, then Upload.
    await page.locator("body").focus();
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press("Tab");
      order.push(
        await page.evaluate(
          () => document.activeElement?.id || document.activeElement?.getAttribute("aria-label") || "",
        ),
      );
    }
    expect(order).toEqual(["picker", "Remove photo.bin", "Remove notes.txt", "upload"]);

    // Slow the upload down (DevTools network throttling) and record what the bars show meanwhile.
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 1024 * 1024,
    });
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as unknown as { seen: number[] }).seen = seen;
      const bars = [...document.querySelectorAll("#files progress")] as HTMLProgressElement[];
      const tick = () => {
        seen.push(...bars.map((bar) => bar.value));
        if (document.getElementById("done")?.hidden) setTimeout(tick, 20);
      };
      tick();
    });
    await page.locator("#upload").click();
    await page.locator("#done").waitFor({ state: "visible" });
    expect(await page.locator("#done-text").textContent()).toMatch(/go back to the chat/);
    const values = await page
      .locator("#files progress")
      .evaluateAll((bars) => bars.map((bar) => (bar as HTMLProgressElement).value));
    expect(values).toEqual([100, 100]);
    const seen = await page.evaluate(() => (window as unknown as { seen: number[] }).seen);
    expect(seen.some((value) => value > 0 && value < 100)).toBe(true); // real progress, not a jump to 100
    await cdp.detach();
    expect(await page.locator("#files .state").allTextContents()).toEqual(["Uploaded", "Uploaded"]);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("done");
    await page.screenshot({ path: await screenshotPath("upload-page-done.png"), fullPage: true });

    const stored = await server.files(SCOPE);
    const byName = new Map(stored.map((file) => [file.name, file]));
    expect(byName.get("photo.bin")?.sha256).toBe(sha256(a));
    expect(byName.get("notes.txt")?.sha256).toBe(sha256(b));
    expect(byName.get("notes.txt")?.mimeType).toBe("text/plain");
    expect(problems).toEqual([]);
    // One upload, one handle: the ticket's handle stands for both files, in upload order.
    const both = await server.uploads.filesFor(ticket.handle, { scope: SCOPE });
    expect(both?.map((file) => file.name)).toEqual(["photo.bin", "notes.txt"]);
  });

  it("refuses an oversized file before sending a byte", async () => {
    const scope = "oversized";
    const ticket = await server.uploads.createTicket(scope);
    await open(ticket.upload_url);
    const before = server.uploadRequests;
    await page.setInputFiles("#picker", [
      { name: "huge.iso", mimeType: "application/octet-stream", buffer: Buffer.alloc(2.5 * 1024 * 1024) },
    ]);
    await page.locator("#error").waitFor({ state: "visible" });
    expect(await page.locator("#error").textContent()).toBe(
      "huge.iso is too large (2.5 MiB). The limit is 2 MiB.",
    );
    expect(await page.locator("#error").getAttribute("role")).toBe("alert");
    expect(await page.locator("#files li").count()).toBe(0);
    expect(await page.locator("#upload").isDisabled()).toBe(true);
    await page.screenshot({ path: await screenshotPath("upload-page-too-large.png"), fullPage: true });
    expect(server.uploadRequests).toBe(before);
    expect(await server.files(scope)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("shows the expired page for an expired link, and the expired message when it expires before the upload", async () => {
    const scope = "expired";
    const stale = await server.uploads.createTicket(scope);
    server.advance(11 * 60 * 1000); // past the 10 minute ticket
    const response = await browser.context.request.get(stale.upload_url, {
      headers: { accept: "text/html" },
    });
    expect(response?.status()).toBe(410);
    await open(stale.upload_url);
    expect(await page.locator("h1").textContent()).toBe("This upload link has expired");
    expect(await page.locator("[role=alert]").textContent()).toMatch(/Ask for a new link in the chat/);
    await page.screenshot({ path: await screenshotPath("upload-page-expired.png"), fullPage: true });
    await page.close();

    const ticket = await server.uploads.createTicket(scope);
    await open(ticket.upload_url);
    await page.setInputFiles("#picker", [
      { name: "late.txt", mimeType: "text/plain", buffer: Buffer.from("late") },
    ]);
    server.advance(11 * 60 * 1000);
    await page.locator("#upload").click();
    await page.locator("#error").waitFor({ state: "visible" });
    expect(await page.locator("#error").textContent()).toBe(
      "This upload link has expired. Ask for a new one in the chat.",
    );
    expect(await page.locator("#upload").isHidden()).toBe(true); // nothing more to do with this link
    expect(await page.locator("#picker").isDisabled()).toBe(true);
    expect(await server.files(scope)).toEqual([]);
  });

  it("says when another upload holds the link (409), keeps the files, and the retry works once it is released", async () => {
    const scope = "claimed";
    const ticket = await server.uploads.createTicket(scope);
    await open(ticket.upload_url);
    // Two files: one multipart request (one file would go through tus, which has no claim).
    await page.setInputFiles("#picker", [
      { name: "mine.txt", mimeType: "text/plain", buffer: Buffer.from("mine") },
      { name: "mine2.txt", mimeType: "text/plain", buffer: Buffer.from("mine too") },
    ]);
    // Another upload with the same link starts and stalls mid-body: it holds the ticket's claim.
    const stalled = new AbortController();
    const boundary = "stall";
    const seen = server.uploadRequests;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          new TextEncoder().encode(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="other.txt"\r\n\r\nsome`,
          ),
        );
      },
    });
    const other = fetch(ticket.upload_url, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
      signal: stalled.signal,
      duplex: "half",
    } as RequestInit).catch((error: unknown) => error);
    const [, payload] = ticket.upload_url.split("/").at(-1)?.split(".") ?? [];
    const { jti } = JSON.parse(Buffer.from(payload as string, "base64url").toString()) as { jti: string };
    const claimKey = `upload-claim:${jti}`;
    await expect.poll(() => server.uploadRequests).toBe(seen + 1);
    await expect.poll(() => server.state.get(claimKey)).not.toBeNull();

    await page.locator("#upload").click();
    await page.locator("#error").waitFor({ state: "visible" });
    expect(await page.locator("#error").textContent()).toBe(
      "An upload with this link is still under way. Wait a moment, then try again.",
    );
    expect(await page.locator("#upload").isEnabled()).toBe(true);
    expect(await page.locator("#files .name").allTextContents()).toEqual(["mine.txt", "mine2.txt"]);

    // The stalled upload drops: the server releases the claim, and the person's retry goes through.
    stalled.abort();
    await other;
    await expect.poll(() => server.state.get(claimKey)).toBeNull();
    await page.locator("#upload").click();
    await page.locator("#done").waitFor({ state: "visible" });
    expect((await server.files(scope)).map((file) => file.name).sort()).toEqual(["mine.txt", "mine2.txt"]);
  });

  it("says so when the server cannot be reached (several files: one multipart request)", async () => {
    const ticket = await server.uploads.createTicket("network");
    await open(ticket.upload_url);
    await page.route("**/files/upload/**", (route) =>
      route.request().method() === "POST" ? route.abort("connectionreset") : route.continue(),
    );
    await page.setInputFiles("#picker", [
      { name: "a.txt", mimeType: "text/plain", buffer: Buffer.from("a") },
      { name: "b.txt", mimeType: "text/plain", buffer: Buffer.from("b") },
    ]);
    await page.locator("#upload").click();
    await page.locator("#error").waitFor({ state: "visible" });
    expect(await page.locator("#error").textContent()).toMatch(
      /could not be reached or the connection dropped/,
    );
    // A network failure leaves the files in place so the person can retry.
    expect(await page.locator("#upload").isEnabled()).toBe(true);
    await page.unroute("**/files/upload/**");
    await page.locator("#upload").click();
    await page.locator("#done").waitFor({ state: "visible" });
    expect((await server.files("network")).map((file) => file.name).sort()).toEqual(["a.txt", "b.txt"]);
  });

  it("one file goes through tus: while the server cannot be reached it says it retries, then finishes by itself", async () => {
    const ticket = await server.uploads.createTicket("tus-retry");
    await open(ticket.upload_url);
    const refused: string[] = [];
    await page.route("**/files/tus/**", (route) => {
      refused.push(route.request().method());
      return route.abort("connectionreset");
    });
    const bytes = randomBytes(300 * 1024);
    await page.setInputFiles("#picker", [
      { name: "a.bin", mimeType: "application/octet-stream", buffer: bytes },
    ]);
    await page.locator("#upload").click();
    await expect
      .poll(() => page.locator("#status").textContent())
      .toMatch(/connection dropped\. Trying again/);
    expect(await page.locator("#error").isHidden()).toBe(true);
    await expect.poll(() => refused.length).toBeGreaterThanOrEqual(2);
    await page.unroute("**/files/tus/**");
    await page.locator("#done").waitFor({ state: "visible" });
    const [stored] = await server.files("tus-retry");
    expect(stored).toMatchObject({ name: "a.bin", size: bytes.length, sha256: sha256(bytes) });
    expect(refused.every((method) => method === "POST")).toBe(true);
    expect(problems.filter((text) => !/ERR_CONNECTION_RESET|Failed to load resource/.test(text))).toEqual([]);
  });
});
