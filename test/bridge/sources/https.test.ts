import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../../src/bridge/file-bridge.js";
import type { FileBridgeHttpsOptions } from "../../../src/bridge/options.js";
import { codeOf } from "../../support/helpers.js";
import { type HttpsOrigin, hasOpenssl, startHttpsOrigin } from "../../support/https-origin.js";
import { tempLeftovers } from "../../support/temp-leftovers.js";

const scope = "s";

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "fb-https-"));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true, maxRetries: 3 });
});

describe("https:// refusals (no connection is made)", () => {
  const allowHosts = ["127.0.0.1", "10.0.0.1", "169.254.169.254", "[::1]", "localhost", "files.example.com"];

  it.each([
    "https://127.0.0.1/a.pdf",
    "https://10.0.0.1/a.pdf",
    "https://169.254.169.254/latest/meta-data/iam",
    "https://[::1]/a.pdf",
    "https://localhost/a.pdf",
    "https://evil.example.net/a.pdf",
  ])("refuses %s with HOST_NOT_ALLOWED", async (url) => {
    const bridge = new FileBridge({ tmpDir: tmp, https: { allowHosts } });
    expect(await codeOf(bridge.resolve(url, { scope }))).toBe("HOST_NOT_ALLOWED");
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("refuses https when the form is switched off", async () => {
    const bridge = new FileBridge({ tmpDir: tmp, https: { allowHosts }, forms: { https: false } });
    expect(await codeOf(bridge.resolve("https://files.example.com/a.pdf", { scope }))).toBe("FORM_DISABLED");
  });
});

describe.skipIf(!hasOpenssl())("https:// against a local server with a self-signed certificate", () => {
  let server: HttpsOrigin;
  let origin: string;
  let port: number;
  let ca: Buffer;
  const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(50_000, 7)]);

  beforeAll(async () => {
    server = await startHttpsOrigin((req, res) => {
      const url = req.url ?? "/";
      if (url === "/files/report.pdf") {
        res.writeHead(200, { "content-type": "application/pdf", "content-length": pdf.length });
        res.end(pdf);
      } else if (url === "/download?id=7") {
        res.writeHead(200, {
          "content-type": "text/csv",
          "content-disposition": 'attachment; filename="data 7.csv"',
        });
        res.end("a,b\n1,2\n");
      } else if (url === "/redirect") {
        res.writeHead(302, { location: "/files/report.pdf" });
        res.end();
      } else if (url === "/loop") {
        res.writeHead(302, { location: "/loop" });
        res.end();
      } else if (url === "/elsewhere") {
        res.writeHead(302, { location: "https://evil.example.net/x" });
        res.end();
      } else if (url === "/downgrade") {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/files/report.pdf` });
        res.end();
      } else if (url === "/big-declared") {
        res.writeHead(200, { "content-length": 10_000 });
        res.end(Buffer.alloc(10_000));
      } else if (url === "/big-chunked") {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000));
        res.end();
      } else if (url === "/hang") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("partial");
        // never ends
      } else {
        res.writeHead(404);
        res.end("nope");
      }
    });
    ({ port, origin, ca } = server);
  });

  afterAll(async () => {
    await server.close();
  });

  function bridge(extra: Partial<FileBridgeHttpsOptions> = {}, maxBytes?: number): FileBridge {
    return new FileBridge({
      tmpDir: tmp,
      ...(maxBytes ? { maxBytes } : {}),
      https: { allowHosts: ["127.0.0.1", "localhost"], allowPrivateAddresses: true, ca, ...extra },
    });
  }

  it("fetches a file into a temp folder with its name and type", async () => {
    const file = await bridge().resolve(`${origin}/files/report.pdf`, { scope });
    expect([file.name, file.mimeType, file.size, file.source.kind]).toEqual([
      "report.pdf",
      "application/pdf",
      pdf.length,
      "https",
    ]);
    expect((await readFile(file.path)).equals(pdf)).toBe(true);
    await file.dispose();
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("resolves a host name through the guarded lookup and uses Content-Disposition", async () => {
    const file = await bridge().resolve(`https://localhost:${port}/download?id=7`, { scope });
    expect([file.name, file.mimeType, (await file.bytes()).toString()]).toEqual([
      "data 7.csv",
      "text/csv",
      "a,b\n1,2\n",
    ]);
    await file.dispose();
  });

  it("refuses the same loopback server without allowPrivateAddresses", async () => {
    const strict = new FileBridge({ tmpDir: tmp, https: { allowHosts: ["127.0.0.1", "localhost"], ca } });
    expect(await codeOf(strict.resolve(`${origin}/files/report.pdf`, { scope }))).toBe("HOST_NOT_ALLOWED");
    expect(await codeOf(strict.resolve(`https://localhost:${port}/files/report.pdf`, { scope }))).toBe(
      "HOST_NOT_ALLOWED",
    );
  });

  it("refuses a certificate it does not trust", async () => {
    const untrusting = new FileBridge({
      tmpDir: tmp,
      https: { allowHosts: ["127.0.0.1"], allowPrivateAddresses: true },
    });
    expect(await codeOf(untrusting.resolve(`${origin}/files/report.pdf`, { scope }))).toBe("FETCH_FAILED");
  });

  it("follows redirects, re-checking every hop", async () => {
    const file = await bridge().resolve(`${origin}/redirect`, { scope });
    expect((await file.bytes()).equals(pdf)).toBe(true);
    await file.dispose();
    expect(await codeOf(bridge().resolve(`${origin}/elsewhere`, { scope }))).toBe("HOST_NOT_ALLOWED");
    expect(await codeOf(bridge().resolve(`${origin}/downgrade`, { scope }))).toBe("HOST_NOT_ALLOWED");
    expect(await codeOf(bridge().resolve(`${origin}/loop`, { scope }))).toBe("FETCH_FAILED");
    expect(await codeOf(bridge({ maxRedirects: 0 }).resolve(`${origin}/redirect`, { scope }))).toBe(
      "FETCH_FAILED",
    );
  });

  it("maps non-2xx to FETCH_FAILED and caps declared and streamed sizes", async () => {
    expect(await codeOf(bridge().resolve(`${origin}/missing`, { scope }))).toBe("FETCH_FAILED");
    expect(await codeOf(bridge({}, 5000).resolve(`${origin}/big-declared`, { scope }))).toBe(
      "FILE_TOO_LARGE",
    );
    expect(await codeOf(bridge({}, 5000).resolve(`${origin}/big-chunked`, { scope }))).toBe("FILE_TOO_LARGE");
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("gives up with TIMEOUT on a stalled body and ABORTED when the caller aborts", async () => {
    expect(await codeOf(bridge({ timeout: "300ms" }).resolve(`${origin}/hang`, { scope }))).toBe("TIMEOUT");
    const controller = new AbortController();
    const pending = bridge().resolve(`${origin}/hang`, { scope, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await codeOf(pending)).toBe("ABORTED");
    expect(await tempLeftovers(tmp)).toEqual([]);
  });
});
