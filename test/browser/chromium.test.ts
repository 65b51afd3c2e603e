import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { close, listen } from "../http/server-helpers.js";
import { browserAvailable, type LaunchedBrowser, launchChromium, SKIP_ENV } from "./support/chromium.js";

describe("browserAvailable", () => {
  const missing = "/nonexistent/chromium";
  it("fails loudly in CI when Chromium is missing, even with the skip variable", () => {
    expect(() => browserAvailable(missing, { CI: "true", [SKIP_ENV]: "1" })).toThrow(/ensure-chromium\.sh/);
  });
  it("fails locally too, unless the skip variable is set", () => {
    expect(() => browserAvailable(missing, {})).toThrow(SKIP_ENV);
    expect(browserAvailable(missing, { [SKIP_ENV]: "1" })).toBe(false);
  });
  it("is true when the binary exists", () => {
    expect(browserAvailable(process.execPath, { CI: "true" })).toBe(true);
  });
});

describe.runIf(browserAvailable())("Chromium test setup", () => {
  let browser: LaunchedBrowser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("runs headless Debian Chromium and loads a page from 127.0.0.1", async () => {
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end("<!doctype html><title>ok</title><p id=x>hello</p><script>document.title='ran'</script>");
    });
    const origin = await listen(server);
    try {
      const page = await browser.context.newPage();
      await page.goto(`${origin}/`);
      expect(await page.title()).toBe("ran");
      expect(await page.locator("#x").textContent()).toBe("hello");
      expect(
        browser.context.browser()?.version() ?? (await page.evaluate(() => navigator.userAgent)),
      ).toMatch(/\d+\./);
      await page.close();
    } finally {
      await close(server);
    }
  });
});
