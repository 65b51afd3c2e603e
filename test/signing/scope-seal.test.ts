import { createCipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ScopeSeal } from "../../src/signing/scope-seal.js";

const SECRET = new TextEncoder().encode("s3cret-s3cret-s3cret-s3cret-s3cret!");
const OTHER_SECRET = new TextEncoder().encode("another-secret-another-secret-another");

/** A well-formed scope: any Unicode, at most 256 characters (what `assertScope` lets through). */
const scopes = fc.string({ unit: "binary", minLength: 1, maxLength: 256 });

/** `scope` padded as the seal pads it: its bytes, 0x80, zeros up to 64 bytes (scopes under 64 bytes). */
function padded(scope: string): Buffer {
  const bytes = Buffer.from(scope, "utf8");
  const out = Buffer.alloc(64);
  bytes.copy(out);
  out[bytes.length] = 0x80;
  return out;
}

/**
 * Seals `scope` with AES-256-GCM under the seal's own key, with the IV given (by hand, as an attacker
 * with the key could), padded as the seal pads or (`legacy`) as it sealed before the padding.
 */
function sealByHand(scope: string, iv: Buffer, legacy = false): string {
  const key = Buffer.from(
    hkdfSync("sha256", SECRET, Buffer.alloc(0), "mcp-file-bridge/signed-url/scope-seal/v2", 32),
  );
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from("mcp-file-bridge/signed-url/scope-seal/v2"));
  const body = Buffer.concat([
    cipher.update(legacy ? Buffer.from(scope, "utf8") : padded(scope)),
    cipher.final(),
  ]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** Seals the plaintext bytes `plain` as they are (no padding added), with the IV given. */
function sealRaw(plain: Buffer, iv: Buffer): string {
  const key = Buffer.from(
    hkdfSync("sha256", SECRET, Buffer.alloc(0), "mcp-file-bridge/signed-url/scope-seal/v2", 32),
  );
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from("mcp-file-bridge/signed-url/scope-seal/v2"));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** The IV `ScopeSeal` gives a scope: HMAC-SHA256 under the second derived key, 12 bytes. */
function ownIv(scope: string): Buffer {
  const ivKey = hkdfSync(
    "sha256",
    SECRET,
    Buffer.alloc(0),
    "mcp-file-bridge/signed-url/scope-seal/iv/v2",
    32,
  );
  return createHmac("sha256", Buffer.from(ivKey)).update(scope, "utf8").digest().subarray(0, 12);
}

describe("ScopeSeal", () => {
  it("opens what it sealed, on this instance and on any other with the same secret", () => {
    fc.assert(
      fc.property(scopes, (scope) => {
        const sealed = new ScopeSeal(SECRET).seal(scope);
        expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
        if (scope.length >= 8) expect(sealed).not.toContain(scope);
        expect(new ScopeSeal(SECRET).open(sealed)).toBe(scope);
      }),
    );
    const seal = new ScopeSeal(SECRET);
    expect(seal.open(seal.seal("session-🙂-42"))).toBe("session-🙂-42");
  });

  it("seals one scope to one text, and two scopes to two texts", () => {
    const a = new ScopeSeal(SECRET);
    const b = new ScopeSeal(SECRET);
    expect(a.seal("user-42")).toBe(a.seal("user-42"));
    expect(a.seal("user-42")).toBe(b.seal("user-42"));
    expect(new ScopeSeal(OTHER_SECRET).seal("user-42")).not.toBe(a.seal("user-42"));
    fc.assert(
      fc.property(scopes, scopes, (one, two) => {
        fc.pre(one !== two);
        const seal = new ScopeSeal(SECRET);
        expect(seal.seal(one)).not.toBe(seal.seal(two));
        // Not even the IV is shared: GCM never sees one IV with two plaintexts.
        const iv = (text: string) => Buffer.from(text, "base64url").subarray(0, 12);
        expect(iv(seal.seal(one)).equals(iv(seal.seal(two)))).toBe(false);
      }),
    );
  });

  it("refuses a seal of another secret", () => {
    const sealed = new ScopeSeal(OTHER_SECRET).seal("user-42");
    expect(new ScopeSeal(SECRET).open(sealed)).toBeNull();
  });

  it("refuses any changed byte, a cut, an addition and non-canonical spellings, even once the original was opened", () => {
    const seal = new ScopeSeal(SECRET);
    const sealed = seal.seal("user-42");
    expect(seal.open(sealed)).toBe("user-42"); // remembered from here on
    const raw = Buffer.from(sealed, "base64url");
    for (let at = 0; at < raw.length; at++) {
      for (const bit of [0x01, 0x80]) {
        const changed = Buffer.from(raw);
        changed[at] = (changed[at] as number) ^ bit;
        expect(seal.open(changed.toString("base64url"))).toBeNull();
        expect(new ScopeSeal(SECRET).open(changed.toString("base64url"))).toBeNull();
      }
    }
    expect(seal.open(raw.subarray(0, raw.length - 1).toString("base64url"))).toBeNull();
    expect(seal.open(Buffer.concat([raw, Buffer.of(0)]).toString("base64url"))).toBeNull();
    expect(seal.open(raw.subarray(0, 28).toString("base64url"))).toBeNull(); // IV and tag, no scope
    expect(seal.open(raw.toString("base64"))).toBeNull(); // padded or with + and /
    expect(seal.open(`${sealed}=`)).toBeNull();
    expect(seal.open("")).toBeNull();
    expect(seal.open("not sealed at all")).toBeNull();
    // The same bytes spelled with bits set past the last byte (92 bytes: 123 characters, 2 spare bits).
    expect(sealed.length % 4).toBe(3);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const spelled = `${sealed.slice(0, -1)}${alphabet[alphabet.indexOf(sealed.slice(-1)) ^ 1]}`;
    expect(Buffer.from(spelled, "base64url").equals(raw)).toBe(true);
    expect(seal.open(spelled)).toBeNull();
  });

  it("opens only seals made with the scope's own IV, not other authentic ones", () => {
    const seal = new ScopeSeal(SECRET);
    // By hand with the scope's own IV: exactly the seal's text (the hand-made key is right)…
    expect(sealByHand("user-42", ownIv("user-42"))).toBe(seal.seal("user-42"));
    // …and with any other IV, authentic under the key, still refused: one text per scope.
    const other = sealByHand("user-42", randomBytes(12));
    expect(new ScopeSeal(SECRET).open(other)).toBeNull();
    expect(seal.open(other)).toBeNull();
    // A seal of the version before the padding (the scope alone, its own IV) still opens, until the
    // tokens carrying it expire; with another IV it does not.
    expect(new ScopeSeal(SECRET).open(sealByHand("user-42", ownIv("user-42"), true))).toBe("user-42");
    expect(new ScopeSeal(SECRET).open(sealByHand("user-42", randomBytes(12), true))).toBeNull();
    // Padding that is not the scope's own size class, or not 0x80 then zeros, is refused.
    const wrongClass = Buffer.alloc(128);
    Buffer.from("user-42").copy(wrongClass);
    wrongClass[7] = 0x80;
    expect(new ScopeSeal(SECRET).open(sealRaw(wrongClass, ownIv("user-42")))).toBeNull();
    const badMark = padded("user-42");
    badMark[7] = 0x81;
    expect(new ScopeSeal(SECRET).open(sealRaw(badMark, ownIv("user-42")))).toBeNull();
  });

  it("keeps sealing and opening right past what it remembers", () => {
    const seal = new ScopeSeal(SECRET);
    const sealed = Array.from({ length: 10_050 }, (_, i) => seal.seal(`scope-${i}`));
    for (const i of [0, 1, 9_999, 10_000, 10_049]) {
      expect(seal.open(sealed[i] as string)).toBe(`scope-${i}`);
      expect(seal.seal(`scope-${i}`)).toBe(sealed[i]);
      expect(new ScopeSeal(SECRET).open(sealed[i] as string)).toBe(`scope-${i}`);
    }
  });
});
