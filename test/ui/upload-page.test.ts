import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";
import { memoryState } from "../../src/storage/memory-state.js";
import { PAGE_SCRIPT, UPLOAD_CSS } from "../../src/ui/generated/page-assets.js";
import {
  renderUploadPage,
  renderUploadPageProblem,
  UPLOAD_PAGE_CLAIMS,
  uploadPageForToken,
  uploadPageResponse,
  wantsUploadPage,
} from "../../src/ui/upload-page.js";
import { codeOf, codeOfSync } from "../support/helpers.js";

const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

function inline(html: string, tag: "script" | "style"): string[] {
  const pattern = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g");
  return [...html.matchAll(pattern)].map((match) => match[1] as string);
}

describe("renderUploadPage", () => {
  const base = { uploadUrl: "./tok", maxBytes: 5_000_000, maxFiles: 2 };

  it("is self-contained: the CSP allows exactly its inline script and style, nothing external", () => {
    const page = renderUploadPage(base);
    expect(inline(page.html, "script")).toEqual([PAGE_SCRIPT]);
    expect(inline(page.html, "style")).toEqual([UPLOAD_CSS]);
    expect(page.contentSecurityPolicy).toBe(
      `default-src 'none'; script-src ${hash(PAGE_SCRIPT)}; style-src ${hash(UPLOAD_CSS)}; connect-src 'self'; img-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'`,
    );
    expect(page.headers["Content-Security-Policy"]).toBe(page.contentSecurityPolicy);
    expect(page.headers["Referrer-Policy"]).toBe("no-referrer");
    expect(page.headers["Cache-Control"]).toBe("no-store");
    expect(page.html).not.toMatch(/\b(src|href)=/);
    expect(page.html).not.toMatch(/https?:\/\//);
  });

  it("connects only to the upload URL's origin when it is absolute", () => {
    const page = renderUploadPage({ ...base, uploadUrl: "https://files.example.com/files/upload/abc" });
    expect(page.contentSecurityPolicy).toContain("connect-src https://files.example.com;");
  });

  it("escapes the message, the accept list and the config block", () => {
    const page = renderUploadPage({
      ...base,
      uploadUrl: "./</script><script>alert(1)</script>",
      message: `<img src=x onerror=alert(1)> & "quotes"`,
      accept: ['.pdf" onclick="x', "image/*"],
      title: "<b>Title</b>",
    });
    expect(page.html).toContain("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;");
    expect(page.html).toContain('accept=".pdf&quot; onclick=&quot;x,image/*"');
    expect(page.html).toContain("<title>&lt;b&gt;Title&lt;/b&gt;</title>");
    expect(page.html).not.toContain("<img");
    expect(page.html.match(/<\/script>/g)?.length).toBe(2); // the data block and the script, nothing injected
    const config = /<script type="application\/json" id="upload-config">(.*?)<\/script>/.exec(page.html)?.[1];
    expect(JSON.parse(config ?? "")).toMatchObject({ uploadUrl: "./</script><script>alert(1)</script>" });
  });

  it("refuses bad options with INVALID_OPTION", () => {
    expect(codeOfSync(() => renderUploadPage({ ...base, uploadUrl: "" }))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => renderUploadPage({ ...base, uploadUrl: "javascript:alert(1)" }))).toBe(
      "INVALID_OPTION",
    );
    expect(codeOfSync(() => renderUploadPage({ ...base, maxBytes: 0 }))).toBe("INVALID_OPTION");
    expect(codeOfSync(() => renderUploadPage({ ...base, maxFiles: 1.5 }))).toBe("INVALID_OPTION");
  });

  it("problem pages carry no script at all", () => {
    for (const problem of ["expired", "used", "invalid"] as const) {
      const page = renderUploadPageProblem(problem);
      expect(page.html).not.toContain("<script");
      expect(page.contentSecurityPolicy).toContain("script-src 'none'");
    }
  });
});

describe("uploadPageResponse / wantsUploadPage", () => {
  it("answers 200 with the headers, and HEAD without a body", async () => {
    const get = uploadPageResponse({ uploadUrl: "./t", maxBytes: 1, maxFiles: 1 });
    expect(get.status).toBe(200);
    expect(get.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await get.text()).toContain('<h1 id="title">Upload a file</h1>');
    const several = uploadPageResponse({ uploadUrl: "./t", maxBytes: 1, maxFiles: 2 });
    expect(await several.text()).toContain('<h1 id="title">Upload files</h1>');
    const head = uploadPageResponse({ uploadUrl: "./t", maxBytes: 1, maxFiles: 1 }, { method: "HEAD" });
    expect(await head.text()).toBe("");
    expect(uploadPageResponse({ problem: "expired" }).status).toBe(410);
    expect(uploadPageResponse({ problem: "used" }).status).toBe(410);
    expect(uploadPageResponse({ problem: "invalid" }).status).toBe(401);
  });

  it("only GET/HEAD that accept text/html want the page", () => {
    const request = (method: string, accept?: string) =>
      new Request("http://x/files/upload/t", { method, headers: accept ? { accept } : {} });
    expect(wantsUploadPage(request("GET", "text/html,application/xhtml+xml,*/*;q=0.8"))).toBe(true);
    expect(wantsUploadPage(request("HEAD", "TEXT/HTML"))).toBe(true);
    expect(wantsUploadPage(request("GET", "application/json"))).toBe(false);
    expect(wantsUploadPage(request("GET", "*/*"))).toBe(false);
    expect(wantsUploadPage(request("GET", "text/html;q=0"))).toBe(false);
    expect(wantsUploadPage(request("GET"))).toBe(false);
    expect(wantsUploadPage(request("POST", "text/html"))).toBe(false);
  });
});

describe("uploadPageForToken", () => {
  let clock = 1_800_000_000_000;
  const state = memoryState();
  const minter = new SignedUrlMinter({
    secret: "page-tests-secret-0123456789abcdefghij",
    baseUrl: "http://127.0.0.1:1",
    state,
    now: () => clock,
  });
  const page = (token: string) =>
    uploadPageForToken(
      new Request(`http://127.0.0.1:1/files/upload/${token}`, { headers: { accept: "text/html" } }),
      {
        verifier: minter,
        token,
      },
    );

  it("shows the ticket's limits, expiry and request text, and leaves a single-use ticket usable", async () => {
    const minted = await minter.mint({
      scope: "s",
      fileId: "ticket-1",
      action: "upload",
      singleUse: true,
      ttl: "10m",
      claims: {
        max_bytes: 12345,
        max_files: 4,
        [UPLOAD_PAGE_CLAIMS.message]: "Send the signed contract",
        [UPLOAD_PAGE_CLAIMS.accept]: ".pdf, image/*",
        [UPLOAD_PAGE_CLAIMS.server]: "Contracts <Desk>",
      },
    });
    const response = await page(minted.token);
    expect(response.status).toBe(200);
    const html = await response.text();
    const config = JSON.parse(/id="upload-config">(.*?)<\/script>/.exec(html)?.[1] ?? "");
    expect(config).toEqual({
      uploadUrl: `./${minted.token}`,
      maxBytes: 12345,
      maxFiles: 4,
      expiresAt: new Date(minted.expiresAt).toISOString(),
    });
    expect(html).toContain('<p id="message" class="message">Send the signed contract</p>');
    expect(html).toContain('accept=".pdf,image/*"');
    // Which server asks (escaped), the limits in the limit's units and the expiry in UTC, before any script.
    expect(html).toContain("<strong>Contracts &lt;Desk&gt;</strong> asks you for files");
    expect(html).toContain('<li id="limits">Up to 4 files, at most 12 KiB (12345 bytes) each.</li>');
    expect(html).toMatch(/<time id="expiry-time" datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
    // Viewing the page twice did not use the ticket up.
    expect((await page(minted.token)).status).toBe(200);
    expect(await codeOf(minter.verify(minted.token, { action: "upload" }))).toBe("OK");
    // Now it is used.
    expect((await page(minted.token)).status).toBe(410);
    expect(await (await page(minted.token)).text()).toContain("already used");
  });

  it("answers the expired and invalid pages", async () => {
    const minted = await minter.mint({ scope: "s", fileId: "t2", action: "upload", ttl: "1m" });
    clock += 2 * 60 * 1000;
    const expired = await page(minted.token);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain("This upload link has expired");
    expect((await page("not.a.token")).status).toBe(401);
    const download = await minter.mint({ scope: "s", fileId: "f", action: "download" });
    expect((await page(download.token)).status).toBe(401); // a download token is not an upload link
  });

  it("refuses a verifier that cannot check without using the ticket up", async () => {
    const verifier = { verify: async () => ({ scope: "s", fileId: "f", claims: {} }) };
    expect(await codeOf(uploadPageForToken(new Request("http://x/"), { verifier, token: "t" }))).toBe(
      "INVALID_OPTION",
    );
  });
});
