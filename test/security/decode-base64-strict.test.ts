/**
 * Attack: base64 that is not base64. Node's decoder reads a character above U+00FF as its low byte
 * (`"aGk\u0141"` decoded like `"aGkA"` on Node 20) and takes both alphabets in one text, so "strict"
 * decoding accepted text no encoder writes, and two different strings gave the same bytes (a way
 * around a check done on the text, a digest or a deduplication keyed on it). Both are refused with
 * INVALID_BASE64 everywhere base64 comes in: data URLs, object content, bare base64, decodeBase64Strict.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileBridge } from "../../src/bridge/file-bridge.js";
import { decodeBase64Chunks, decodeBase64Strict } from "../../src/bridge/sources/base64.js";
import { codeOf, codeOfSync } from "../support/helpers.js";
import { tempLeftovers } from "../support/temp-leftovers.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mfb-sec-b64-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
});

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_";

/** Every way the bridge takes base64 from a client, for one payload. */
function bridgeInputs(payload: string): unknown[] {
  return [
    `data:application/octet-stream;base64,${payload}`,
    { name: "x.bin", content: payload },
    { name: "x.bin", content_base64: payload },
    payload, // bare base64 (form switched on below)
  ];
}

describe("attack: characters above U+00FF read as their low byte", () => {
  it.each([
    ["Ł (U+0141) read as A", "aGk\u0141"],
    ["š (U+0161) read as a", "\u0161GVsbG8="],
    ["ī (U+012B) read as +", "aGVsbG8\u012b"],
    ["an astral character", "aGVs\u{1f600}bG8="],
    ["CJK in the middle", "aGVs\u4e2dbG8="],
  ])("refuses %s with INVALID_BASE64, on every input form, leaving no file", async (_label, payload) => {
    expect(codeOfSync(() => decodeBase64Strict(payload))).toBe("INVALID_BASE64");
    expect(codeOfSync(() => [...decodeBase64Chunks(payload)])).toBe("INVALID_BASE64");
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), forms: { base64: true } });
    for (const input of bridgeInputs(payload)) {
      expect(await codeOf(bridge.resolve(input as string, { scope: "s" }))).toBe("INVALID_BASE64");
    }
    expect(await tempLeftovers(join(dir, "tmp"))).toEqual([]);
  });

  it("still decodes what the character would stand for when it is the ASCII one", () => {
    expect(decodeBase64Strict("aGkA").equals(Buffer.from([0x68, 0x69, 0x00]))).toBe(true);
  });
});

describe("attack: the standard and URL-safe alphabets mixed in one text", () => {
  it.each([
    ["+ then _", "+_8="],
    ["- then /", "-/8="],
    ["far apart", `${"+".repeat(400)}${"A".repeat(400)}_AAA`],
  ])("refuses %s with INVALID_BASE64 on every input form", async (_label, payload) => {
    expect(codeOfSync(() => decodeBase64Strict(payload))).toBe("INVALID_BASE64");
    const bridge = new FileBridge({ tmpDir: join(dir, "tmp"), forms: { base64: true } });
    for (const input of bridgeInputs(payload)) {
      expect(await codeOf(bridge.resolve(input as string, { scope: "s" }))).toBe("INVALID_BASE64");
    }
  });

  it("accepts either alphabet alone", () => {
    expect(decodeBase64Strict("+/8=").equals(Buffer.from([0xfb, 0xff]))).toBe(true);
    expect(decodeBase64Strict("-_8").equals(Buffer.from([0xfb, 0xff]))).toBe(true);
  });
});

describe("strict base64 (properties)", () => {
  it("accepts a text exactly when it is a canonical encoding in one alphabet (whitespace aside)", () => {
    const char = fc.constantFrom(...`${ALPHABET}=!. \n\u0141\u0161\u012b\u00e9`.split(""));
    fc.assert(
      fc.property(fc.array(char, { maxLength: 40 }), (chars) => {
        const input = chars.join("");
        const stripped = input.replace(/[\t\n\f\r ]/g, "");
        const oneAlphabet = !(/[+/]/.test(stripped) && /[-_]/.test(stripped));
        const plain = /^[A-Za-z0-9+/_-]*={0,2}$/.test(stripped);
        let expected = false;
        if (oneAlphabet && plain) {
          const data = stripped.replace(/=+$/, "");
          const standard = data.replace(/-/g, "+").replace(/_/g, "/");
          const padding = stripped.length - data.length;
          const reencoded = Buffer.from(standard, "base64").toString("base64").replace(/=+$/, "");
          expected = reencoded === standard && (padding === 0 || (data.length + padding) % 4 === 0);
        }
        expect(codeOfSync(() => decodeBase64Strict(input))).toBe(expected ? "OK" : "INVALID_BASE64");
      }),
      { numRuns: 3000 },
    );
  });

  it("refuses any valid text with one character swapped for one above U+00FF with the same low byte", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (bytes, where, high) => {
          const text = Buffer.from(bytes).toString("base64").replace(/=+$/, "");
          const at = where % text.length;
          const wide = String.fromCharCode((high << 8) | text.charCodeAt(at));
          const forged = text.slice(0, at) + wide + text.slice(at + 1);
          expect(codeOfSync(() => decodeBase64Strict(forged))).toBe("INVALID_BASE64");
        },
      ),
    );
  });

  it("refuses a text with one character moved to the other alphabet", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 3, maxLength: 300 }), fc.nat(), (bytes, pick) => {
        const text = Buffer.from(bytes).toString("base64");
        const special = [...text].flatMap((c, i) => (c === "+" || c === "/" ? [i] : []));
        const others = [...text].some(
          (c, i) => (c === "+" || c === "/") && i !== special[pick % special.length],
        );
        fc.pre(special.length > 0 && others);
        const at = special[pick % special.length] as number;
        const swapped = text.slice(0, at) + (text[at] === "+" ? "-" : "_") + text.slice(at + 1);
        expect(codeOfSync(() => decodeBase64Strict(swapped))).toBe("INVALID_BASE64");
      }),
    );
  });
});
