/**
 * Issue 40, item 10: the sealed scope in a signed URL must not tell the scope's length. The seal is
 * padded to a fixed size for every scope up to 63 UTF-8 bytes (session ids, subjects, user names), and
 * beyond that to the next of 128, 256, 512 and 1024 bytes, so a scope as long as `assertScope` allows
 * (256 characters, up to 768 bytes) still fits. It stays deterministic per scope.
 */
import { describe, expect, it } from "vitest";
import { MAX_SCOPE_LENGTH } from "../../src/scope/scope.js";
import { ScopeSeal } from "../../src/signing/scope-seal.js";
import { SignedUrlMinter } from "../../src/signing/signed-url-minter.js";

const SECRET = "s3cret-s3cret-s3cret-s3cret-s3cret!";
const FILE = "01jabcdefghjkmnpqrstvwxyz0";
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

function minter(): SignedUrlMinter {
  return new SignedUrlMinter({ baseUrl: "http://127.0.0.1:3000", secret: SECRET, now: () => T0 });
}

/** The `scs` claim (the sealed scope) of a token. */
function sealedOf(token: string): string {
  const payload = JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString("utf8"));
  return payload.scs as string;
}

describe("the sealed scope of a signed URL does not reveal the scope's length", () => {
  it("gives scopes of 3, 5, 17, 36 and 63 bytes seals and tokens of one length", async () => {
    const scopes = [
      "bob",
      "alice",
      "x".repeat(17),
      "3f2c9a4e-8d1b-4c55-9a7e-2b6f0c1d9e8a",
      "é".repeat(31) + "z",
    ];
    expect(scopes.map((scope) => Buffer.byteLength(scope))).toEqual([3, 5, 17, 36, 63]);
    const m = minter();
    const tokens = await Promise.all(
      scopes.map((scope) => m.mint({ scope, fileId: FILE, action: "download" }).then((r) => r.token)),
    );
    expect(new Set(tokens.map((token) => sealedOf(token).length)).size).toBe(1);
    expect(new Set(tokens.map((token) => token.length)).size).toBe(1);
    for (const [i, token] of tokens.entries()) {
      expect((await m.verify(token, { action: "download" })).scope).toBe(scopes[i]);
    }
  });

  it("keeps the seal deterministic per scope, on every instance with the secret", () => {
    const key = new TextEncoder().encode(SECRET);
    expect(new ScopeSeal(key).seal("bob")).toBe(new ScopeSeal(key).seal("bob"));
    expect(new ScopeSeal(key).seal("bob")).not.toBe(new ScopeSeal(key).seal("bod"));
  });

  it("fits the longest scope assertScope allows, in a fixed size class of its own", async () => {
    const longest = "€".repeat(MAX_SCOPE_LENGTH); // 768 UTF-8 bytes
    const m = minter();
    const { token } = await m.mint({ scope: longest, fileId: FILE, action: "download" });
    expect((await m.verify(token, { action: "download" })).scope).toBe(longest);
    const other = "é".repeat(MAX_SCOPE_LENGTH); // 512 bytes: the same class
    const { token: second } = await m.mint({ scope: other, fileId: FILE, action: "download" });
    expect(sealedOf(second).length).toBe(sealedOf(token).length);
  });
});
