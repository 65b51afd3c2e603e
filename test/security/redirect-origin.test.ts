/**
 * Issue 40, item 7: a host attachment's `download_url` (`openai/fileParams`) is fetched only from an
 * origin in `https.downloadOrigins`, and so is every redirect it leads to — checked by origin (scheme,
 * host and port), not by host. Two https servers on 127.0.0.1, on two ports: the allowed one
 * redirects to the other, which must never be asked.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { codeOf, sha256 } from "../support/helpers.js";
import { type HttpsOrigin, hasOpenssl, startHttpsOrigin } from "../support/https-origin.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

const scope = "s";
const SECRET = Buffer.from("%PDF-1.7\nonly on the other port\n");
const PDF = Buffer.from("%PDF-1.7\nthe attachment\n");

describe.skipIf(!hasOpenssl())("download_url redirects are checked by origin, not by host", () => {
  let tmp: string;
  let allowed: HttpsOrigin;
  let other: HttpsOrigin;
  beforeAll(async () => {
    other = await startHttpsOrigin((_req, res) => {
      res.writeHead(200, { "content-type": "application/pdf" });
      res.end(SECRET);
    });
    allowed = await startHttpsOrigin((req, res) => {
      if (req.url === "/files/a") {
        res.writeHead(200, { "content-type": "application/pdf" });
        res.end(PDF);
      } else if (req.url === "/to-other-port") {
        res.writeHead(302, { location: `${other.origin}/internal/secret.pdf` });
        res.end();
      } else if (req.url === "/to-same-origin") {
        res.writeHead(302, { location: "/files/a" });
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  afterAll(async () => {
    await allowed.close();
    await other.close();
  });
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), "fb-redirect-origin-"));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true, maxRetries: 3 });
  });

  function bridge(): FileBridge {
    return new FileBridge({
      tmpDir: tmp,
      https: {
        downloadOrigins: [allowed.origin],
        allowPrivateAddresses: true,
        // Both certificates trusted: only the origin check stands between the redirect and the other port.
        ca: Buffer.concat([allowed.ca, other.ca]),
      },
    });
  }

  it("refuses a redirect to another port of the allowed host before connecting to it", async () => {
    const before = other.requests.length;
    const code = await codeOf(
      bridge().resolve({ download_url: `${allowed.origin}/to-other-port`, file_id: "f" }, { scope }),
    );
    expect(code).toBe("HOST_NOT_ALLOWED");
    expect(other.requests.length).toBe(before);
    expect(await tempLeftovers(tmp)).toEqual([]);
  });

  it("still follows a redirect within the allowed origin", async () => {
    const file = await bridge().resolve(
      { download_url: `${allowed.origin}/to-same-origin`, file_id: "f" },
      { scope },
    );
    try {
      expect(file.sha256).toBe(sha256(PDF));
    } finally {
      await file.dispose();
    }
  });
});
