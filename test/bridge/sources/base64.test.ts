import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  base64DecodedLength,
  decodeBase64Chunks,
  decodeBase64Strict,
} from "../../../src/bridge/sources/base64.js";
import { codeOfSync } from "../../support/helpers.js";

describe("decodeBase64Strict", () => {
  it("decodes padded, unpadded and URL-safe base64", () => {
    expect(decodeBase64Strict("aGVsbG8=").toString()).toBe("hello");
    expect(decodeBase64Strict("aGVsbG8").toString()).toBe("hello");
    expect(decodeBase64Strict("-_8").equals(Buffer.from([0xfb, 0xff]))).toBe(true);
    expect(decodeBase64Strict("+/8=").equals(Buffer.from([0xfb, 0xff]))).toBe(true);
    expect(decodeBase64Strict("").length).toBe(0);
  });

  it("ignores ASCII whitespace (MIME line breaks)", () => {
    expect(decodeBase64Strict("aGVs\r\nbG8=\n").toString()).toBe("hello");
    expect(decodeBase64Strict(" aG Vs bG8 = ").toString()).toBe("hello");
  });

  it.each([
    ["character outside the alphabet", "aGVs!G8="],
    ["non-ASCII character", "aGVsbé8="],
    ["impossible length", "aGVsb"],
    ["padding in the middle", "aG=sbG8="],
    ["too much padding", "aGVsbG8=="],
    ["padding with wrong length", "aGU=="],
    ["only padding", "===="],
    ["non-canonical trailing bits", "aGVsbG9="],
    ["a data URL is not bare base64", "data:,x"],
  ])("refuses %s with INVALID_BASE64", (_label, input) => {
    expect(codeOfSync(() => decodeBase64Strict(input))).toBe("INVALID_BASE64");
  });

  it("checks the size cap from the length before decoding", () => {
    const text = Buffer.alloc(1000).toString("base64");
    expect(base64DecodedLength(text)).toBe(1000);
    expect(codeOfSync(() => decodeBase64Strict(text, 999))).toBe("FILE_TOO_LARGE");
    expect(decodeBase64Strict(text, 1000).length).toBe(1000);
  });

  it("round-trips any bytes in both alphabets, padded or not (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), fc.boolean(), (bytes, url, pad) => {
        let text = Buffer.from(bytes).toString(url ? "base64url" : "base64");
        if (url && pad) text += "=".repeat((4 - (text.length % 4)) % 4);
        if (!url && !pad) text = text.replace(/=+$/, "");
        const decoded = decodeBase64Strict(text);
        expect(decoded.equals(Buffer.from(bytes))).toBe(true);
        expect(base64DecodedLength(text)).toBe(bytes.length);
      }),
    );
  });

  it("accepts a string only if it is the canonical encoding of what it decodes to (property)", () => {
    const alphabet = fc.constantFrom(
      ..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=!. \n".split(""),
    );
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 40 }), (chars) => {
        const input = chars.join("");
        let decoded: Buffer;
        try {
          decoded = decodeBase64Strict(input);
        } catch (error) {
          expect((error as { code?: string }).code).toBe("INVALID_BASE64");
          return;
        }
        const normalized = input.replace(/\s/g, "").replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
        expect(decoded.toString("base64").replace(/=+$/, "")).toBe(normalized);
      }),
      { numRuns: 2000 },
    );
  });

  it("decodes in chunks to the same bytes and refuses bad characters in any chunk", () => {
    const bytes = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 31) % 256));
    const text = bytes.toString("base64");
    const chunks = [...decodeBase64Chunks(text, 999)];
    expect(chunks.length).toBeGreaterThan(5);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    const broken = `${text.slice(0, 5000)}*${text.slice(5001)}`;
    expect(codeOfSync(() => [...decodeBase64Chunks(broken, 999)])).toBe("INVALID_BASE64");
  });
});
