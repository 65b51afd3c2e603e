/**
 * Host attachment objects (`{download_url, file_id, mime_type?, file_name?}`, the OpenAI Apps SDK's
 * `openai/fileParams` form): fetched through the guarded https path only from `https.downloadOrigins`,
 * against a local https origin on 127.0.0.1 (test/support/https-origin.ts). Any other origin is
 * refused before a connection, with the origin and the option to add it to.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../../src/bridge/file-bridge.js";
import type { FileBridgeHttpsOptions } from "../../../src/bridge/options.js";
import { isFileBridgeError } from "../../../src/errors/file-bridge-error.js";
import { codeOf, codeOfSync, rejectionOf, sha256 } from "../../support/helpers.js";
import { type HttpsOrigin, hasOpenssl, startHttpsOrigin } from "../../support/https-origin.js";
import { tempLeftovers } from "../../support/temp-leftovers.js";

const scope = "s";
const PDF = Buffer.concat([
  Buffer.from("%PDF-1.7\n"),
  Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251)),
]);

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "fb-download-url-"));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true, maxRetries: 3 });
});

describe("https.downloadOrigins options", () => {
  it.each([
    [["http://files.example.com"]],
    [["https://files.example.com/path"]],
    [["https://user@files.example.com"]],
    [["files.example.com"]],
    [[42]],
    ["https://files.example.com"],
  ])("refuses %j with INVALID_OPTION", (downloadOrigins) => {
    expect(
      codeOfSync(() => new FileBridge({ tmpDir: tmp, https: { downloadOrigins: downloadOrigins as never } })),
    ).toBe("INVALID_OPTION");
  });

  it("needs no allowHosts, and then leaves https:// strings off (forms.https on is an INVALID_OPTION)", async () => {
    const https = { downloadOrigins: ["https://files.example.com", "https://*.cdn.example.com:8443"] };
    const bridge = new FileBridge({ tmpDir: tmp, https });
    expect(await codeOf(bridge.resolve("https://files.example.com/a.pdf", { scope }))).toBe("FORM_DISABLED");
    expect(codeOfSync(() => new FileBridge({ tmpDir: tmp, https, forms: { https: true } }))).toBe(
      "INVALID_OPTION",
    );
    expect(codeOfSync(() => new FileBridge({ tmpDir: tmp, https: {} as FileBridgeHttpsOptions }))).toBe(
      "INVALID_OPTION",
    );
  });
});

describe("a download_url on an origin that is not allowed", () => {
  it.each([
    ["no https options at all", undefined, "https://files.example.com/a.pdf", "https://files.example.com"],
    [
      "another host",
      { downloadOrigins: ["https://files.example.com"] },
      "https://evil.example.net/a.pdf",
      "https://evil.example.net",
    ],
    [
      "the same host on another port",
      { downloadOrigins: ["https://files.example.com"] },
      "https://files.example.com:8443/a.pdf",
      "https://files.example.com:8443",
    ],
    [
      "the apex of a wildcard",
      { downloadOrigins: ["https://*.example.com"] },
      "https://example.com/a.pdf",
      "https://example.com",
    ],
  ])(
    "is refused with HOST_NOT_ALLOWED naming the origin and https.downloadOrigins: %s",
    async (_label, https, url, origin) => {
      const bridge = new FileBridge({ tmpDir: tmp, ...(https ? { https } : {}) });
      const error = await rejectionOf(bridge.resolve({ download_url: url, file_id: "file_1" }, { scope }));
      expect(isFileBridgeError(error, "HOST_NOT_ALLOWED")).toBe(true);
      const refused = error as Error & { data?: Record<string, unknown> };
      expect(refused.data).toMatchObject({ origin, option: "https.downloadOrigins" });
      // The message an author reads says what to change.
      expect(refused.message).toContain(`"${origin}" to the FileBridge option https.downloadOrigins`);
      expect(await tempLeftovers(tmp)).toEqual([]);
    },
  );
});

describe.skipIf(!hasOpenssl())("a download_url on an allowed origin (a local https server)", () => {
  let host: HttpsOrigin;
  let other: HttpsOrigin;

  beforeAll(async () => {
    other = await startHttpsOrigin((_req, res) => {
      res.writeHead(200, { "content-type": "application/pdf" });
      res.end(PDF);
    });
    host = await startHttpsOrigin((req, res) => {
      if (req.url === "/files/file_123") {
        res.writeHead(200, { "content-type": "application/pdf", "content-length": PDF.length });
        res.end(PDF);
      } else if (req.url === "/to-evil") {
        res.writeHead(302, { location: "https://evil.example.net/x" });
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  afterAll(async () => {
    await host.close();
    await other.close();
  });

  function bridge(extra: Partial<FileBridgeHttpsOptions> = {}): FileBridge {
    return new FileBridge({
      tmpDir: tmp,
      https: { downloadOrigins: [host.origin], allowPrivateAddresses: true, ca: host.ca, ...extra },
    });
  }

  it("fetches the exact bytes, named and typed from the object", async () => {
    const file = await bridge().resolve(
      {
        download_url: `${host.origin}/files/file_123`,
        file_id: "file_123",
        file_name: "Quarterly report.pdf",
        mime_type: "application/pdf",
      },
      { scope },
    );
    try {
      expect([file.name, file.mimeType, file.size, file.sha256]).toEqual([
        "Quarterly report.pdf",
        "application/pdf",
        PDF.length,
        sha256(PDF),
      ]);
      expect((await file.bytes()).equals(PDF)).toBe(true);
    } finally {
      await file.dispose();
    }
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("refuses the same server under an origin not listed (the other local server's port), without fetching", async () => {
    const before = other.requests.length;
    const error = await rejectionOf(
      bridge({ ca: Buffer.concat([host.ca, other.ca]) }).resolve(
        { download_url: `${other.origin}/files/file_123`, file_id: "file_123" },
        { scope },
      ),
    );
    expect(isFileBridgeError(error, "HOST_NOT_ALLOWED")).toBe(true);
    expect((error as Error).message).toContain("https.downloadOrigins");
    expect((error as { data?: unknown }).data).toMatchObject({ origin: other.origin });
    expect(other.requests.length).toBe(before);
  });

  it("keeps redirects on the allowed hosts", async () => {
    expect(
      await codeOf(bridge().resolve({ download_url: `${host.origin}/to-evil`, file_id: "f" }, { scope })),
    ).toBe("HOST_NOT_ALLOWED");
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("keeps the address guard: without allowPrivateAddresses the loopback origin is refused", async () => {
    const strict = new FileBridge({ tmpDir: tmp, https: { downloadOrigins: [host.origin], ca: host.ca } });
    const before = host.requests.length;
    expect(
      await codeOf(
        strict.resolve({ download_url: `${host.origin}/files/file_123`, file_id: "f" }, { scope }),
      ),
    ).toBe("HOST_NOT_ALLOWED");
    expect(host.requests.length).toBe(before);
  });

  it("checks the size cap and a declared digest like any fetched file", async () => {
    const small = new FileBridge({
      tmpDir: tmp,
      maxBytes: 100,
      https: { downloadOrigins: [host.origin], allowPrivateAddresses: true, ca: host.ca },
    });
    const url = `${host.origin}/files/file_123`;
    expect(await codeOf(small.resolve({ download_url: url, file_id: "f" }, { scope }))).toBe(
      "FILE_TOO_LARGE",
    );
    expect(
      await codeOf(bridge().resolve({ download_url: url, digest: `sha256:${"0".repeat(64)}` }, { scope })),
    ).toBe("DIGEST_MISMATCH");
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("still takes a download_url the https:// string form allows (allowHosts), as before", async () => {
    const viaHosts = new FileBridge({
      tmpDir: tmp,
      https: { allowHosts: ["127.0.0.1"], allowPrivateAddresses: true, ca: host.ca },
    });
    const file = await viaHosts.resolve({ download_url: `${host.origin}/files/file_123` }, { scope });
    expect(file.sha256).toBe(sha256(PDF));
    await file.dispose();
  });
});
