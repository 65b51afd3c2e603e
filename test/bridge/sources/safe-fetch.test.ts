import { describe, expect, it } from "vitest";
import { checkFetchUrl, hostAllowed, parseHostPattern } from "../../../src/bridge/sources/safe-fetch.js";
import { codeOfSync } from "../../support/helpers.js";

describe("host allow-list", () => {
  const patterns = ["files.example.com", "*.cdn.example.org", "[::1]"].map((p) =>
    parseHostPattern(p, "allowHosts"),
  );

  it("matches exact hosts and subdomain wildcards, not the apex or look-alikes", () => {
    expect(hostAllowed("files.example.com", patterns)).toBe(true);
    expect(hostAllowed("FILES.example.com.", patterns)).toBe(true);
    expect(hostAllowed("a.cdn.example.org", patterns)).toBe(true);
    expect(hostAllowed("a.b.cdn.example.org", patterns)).toBe(true);
    expect(hostAllowed("cdn.example.org", patterns)).toBe(false);
    expect(hostAllowed("evilcdn.example.org", patterns)).toBe(false);
    expect(hostAllowed("files.example.com.evil.net", patterns)).toBe(false);
    expect(hostAllowed("[::1]", patterns)).toBe(true);
    expect(hostAllowed("anything.net", [parseHostPattern("*", "allowHosts")])).toBe(true);
  });

  it.each(["", "https://example.com", "example.com/path", "a.*.com", "*.", 7])(
    "refuses %j as INVALID_OPTION",
    (entry) => {
      expect(codeOfSync(() => parseHostPattern(entry, "https.allowHosts"))).toBe("INVALID_OPTION");
    },
  );
});

describe("checkFetchUrl", () => {
  const allowHosts = [
    "127.0.0.1",
    "10.0.0.1",
    "169.254.169.254",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "example.com",
  ].map((p) => parseHostPattern(p, "allowHosts"));

  it.each([
    "https://127.0.0.1/x",
    "https://10.0.0.1/x",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::1]/x",
    "https://[::ffff:127.0.0.1]/x",
    "https://2130706433/x",
    "https://0x7f.1/x",
    "http://example.com/x",
    "https://not-listed.example.net/x",
  ])("refuses %s before connecting (HOST_NOT_ALLOWED)", (url) => {
    expect(codeOfSync(() => checkFetchUrl(new URL(url), { allowHosts, allowPrivateAddresses: false }))).toBe(
      "HOST_NOT_ALLOWED",
    );
  });

  it("lets allow-listed private literals through only with allowPrivateAddresses", () => {
    expect(
      codeOfSync(() =>
        checkFetchUrl(new URL("https://127.0.0.1/x"), { allowHosts, allowPrivateAddresses: true }),
      ),
    ).toBe("OK");
    expect(
      codeOfSync(() =>
        checkFetchUrl(new URL("https://example.com/x"), { allowHosts, allowPrivateAddresses: false }),
      ),
    ).toBe("OK");
  });
});
