/**
 * `SignedUrlMinter` loads its keys and signature code on the first `mint` or `verify` (issue 39):
 * arguments are checked before the load, two first calls share it, and a load that fails is the
 * call's error while the next call loads again.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { countLoads } from "../support/first-use.js";
import { codeOf } from "../support/helpers.js";

const SECRET = "s3cret-s3cret-s3cret-s3cret-s3cret!";
const BASE = "http://127.0.0.1:3000";
const FILE = "01jabcdefghjkmnpqrstvwxyz0";

afterEach(() => {
  vi.resetModules();
});

describe("SignedUrlMinter's keys, loaded on first use", () => {
  it("two first calls at once, made before the load is done, both sign; each token verifies", async () => {
    vi.resetModules();
    const { SignedUrlMinter } = await import("../../src/signing/signed-url-minter.js");
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE });
    const [a, b] = await Promise.all([
      minter.mint({ scope: "A", fileId: FILE, action: "download" }),
      minter.mint({ scope: "B", fileId: FILE, action: "upload" }),
    ]);
    const [va, vb] = await Promise.all([
      minter.verify(a.token, { action: "download" }),
      minter.verify(b.token, { action: "upload" }),
    ]);
    expect([va.scope, vb.scope]).toEqual(["A", "B"]);
  });

  it("checks arguments before the load; a failed load fails the call, and the next call loads again", async () => {
    const failure = Object.assign(new Error("keys could not load"), { code: "ERR_MODULE_NOT_FOUND" });
    const { loads } = countLoads("src/signing/minter-keys.js", { failFirst: failure });
    const { SignedUrlMinter } = await import("../../src/signing/signed-url-minter.js");
    const minter = new SignedUrlMinter({ secret: SECRET, baseUrl: BASE });
    // Refused before anything loads: the same codes as before the split.
    expect(await codeOf(minter.mint({ scope: "", fileId: FILE, action: "download" }))).toBe("INVALID_INPUT");
    expect(await codeOf(minter.verify("not a token", { action: "download" }))).toBe("INVALID_TOKEN");
    expect(await codeOf(minter.verify("a.b.c", { action: "other" as "download" }))).toBe("INVALID_INPUT");
    expect(loads.attempts).toBe(0);
    const error = await minter.mint({ scope: "A", fileId: FILE, action: "download" }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(loads.attempts).toBe(1);
    // Under vitest a mocked module's failure arrives wrapped, with the load's error as its cause.
    expect(error === failure || (error as Error | undefined)?.cause === failure).toBe(true);
    const minted = await minter.mint({ scope: "A", fileId: FILE, action: "download" });
    expect((await minter.verify(minted.token, { action: "download" })).scope).toBe("A");
    expect(loads.attempts).toBe(2);
  });
});
