/**
 * What a file's bytes are (the check behind `x-mcp-file { accept }`): signatures of the common
 * formats, the text heuristic, declared types that share a signature, and the hook.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { acceptsMediaType, contentMediaType, looksLikeText } from "../../src/media/content-type.js";

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(
    parts.map((part) => (typeof part === "string" ? Buffer.from(part, "latin1") : Buffer.from(part))),
  );
const PNG = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "rest");

describe("contentMediaType", () => {
  it.each<[string, Buffer, string]>([
    ["PNG", PNG, "image/png"],
    ["JPEG", bytes([0xff, 0xd8, 0xff, 0xe0]), "image/jpeg"],
    ["GIF", bytes("GIF89a"), "image/gif"],
    ["WebP", bytes("RIFF", [1, 2, 3, 4], "WEBPVP8 "), "image/webp"],
    ["PDF", bytes("%PDF-1.7\n"), "application/pdf"],
    ["ZIP", bytes([0x50, 0x4b, 0x03, 0x04]), "application/zip"],
    ["MP4", bytes([0, 0, 0, 0x18], "ftypisom"), "video/mp4"],
  ])("tells %s by its bytes whatever was declared", (_label, head, type) => {
    expect(contentMediaType(head, "application/octet-stream")).toBe(type);
    expect(contentMediaType(head, "text/plain")).toBe(type);
  });

  it("takes text declared as a binary format for text, never for that format", () => {
    const text = Buffer.from("just words\n");
    expect(contentMediaType(text, "image/png")).toBe("text/plain");
    expect(contentMediaType(text, "application/pdf")).toBe("text/plain");
    expect(contentMediaType(text, "text/csv")).toBe("text/csv");
    expect(contentMediaType(Buffer.from("<svg/>"), "image/svg+xml")).toBe("image/svg+xml");
    expect(contentMediaType(Buffer.from("{}"), "application/json")).toBe("application/json");
  });

  it("keeps a declared type that shares the signature (a .docx is a ZIP), not one that does not", () => {
    const zip = bytes([0x50, 0x4b, 0x03, 0x04], "....");
    const docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
    expect(contentMediaType(zip, docx)).toBe(docx);
    expect(contentMediaType(zip, "application/epub+zip")).toBe("application/epub+zip");
    expect(contentMediaType(zip, "image/png")).toBe("application/zip");
  });

  it("refuses a claim of a known format for other binary bytes, and keeps what it cannot tell", () => {
    const binary = bytes([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00]);
    expect(contentMediaType(binary, "image/png")).toBe("application/octet-stream");
    expect(contentMediaType(binary, "text/plain")).toBe("application/octet-stream");
    expect(contentMediaType(binary, "application/x-custom")).toBe("application/x-custom");
  });

  it("asks the hook first", () => {
    const head = Buffer.from("MYFMT1 data");
    const sniff = (h: Uint8Array) =>
      Buffer.from(h).toString("latin1").startsWith("MYFMT") ? "application/x-my" : undefined;
    expect(contentMediaType(head, "image/png", sniff)).toBe("application/x-my");
    expect(contentMediaType(PNG, "image/png", sniff)).toBe("image/png");
  });
});

describe("looksLikeText", () => {
  it("takes UTF-8 (also cut mid-character at the end) and refuses NUL and control bytes", () => {
    expect(looksLikeText(Buffer.from("héllo wörld ✓\r\n\t"))).toBe(true);
    expect(looksLikeText(Buffer.from("✓").subarray(0, 2))).toBe(true);
    expect(looksLikeText(Buffer.from([0x68, 0x00, 0x69]))).toBe(false);
    expect(looksLikeText(Buffer.from([0xc3, 0x28]))).toBe(false);
    expect(looksLikeText(Buffer.from("\x01\x02\x03 abc"))).toBe(false);
    expect(looksLikeText(Buffer.alloc(0))).toBe(false);
  });

  it("takes every string's UTF-8 without NUL or control characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", minLength: 1 }), (text) => {
        const clean = [...text]
          .filter((c) => {
            const code = c.charCodeAt(0);
            return !(code < 0x20 && ![9, 10, 12, 13].includes(code)) && code !== 0x7f;
          })
          .join("");
        fc.pre(clean.length > 0);
        expect(looksLikeText(Buffer.from(clean))).toBe(true);
      }),
    );
  });
});

describe("acceptsMediaType", () => {
  it("compares type/subtype case-insensitively, ignores parameters, and takes wildcards", () => {
    expect(acceptsMediaType(["Image/PNG"], "image/png; foo=bar")).toBe(true);
    expect(acceptsMediaType(["image/*"], "IMAGE/gif")).toBe(true);
    expect(acceptsMediaType(["*/*"], "application/pdf")).toBe(true);
    expect(acceptsMediaType(["image/*"], "text/plain")).toBe(false);
    expect(acceptsMediaType(["image/png"], "image/pngx")).toBe(false);
    expect(acceptsMediaType(["image/png"], "not a type")).toBe(false);
  });
});
