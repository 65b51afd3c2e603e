import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDataUrl, percentDecodeBytes } from "../../../src/bridge/sources/data-url.js";
import { codeOfSync } from "../../support/helpers.js";

describe("parseDataUrl", () => {
  it("parses type, name and base64 without decoding", () => {
    const parsed = parseDataUrl("data:application/pdf;name=My%20Report.pdf;base64,JVBERi0=");
    expect(parsed.mimeType).toBe("application/pdf");
    expect(parsed.mimeTypeDeclared).toBe(true);
    expect(parsed.name).toBe("My Report.pdf");
    expect(parsed.base64).toBe(true);
    expect(parsed.maxDecodedLength).toBe(5);
  });

  it("keeps other parameters and accepts filename= and upper-case scheme", () => {
    const parsed = parseDataUrl("DATA:Text/Plain;charset=utf-8;filename=a.txt,hi");
    expect(parsed.mimeType).toBe("text/plain;charset=utf-8");
    expect(parsed.name).toBe("a.txt");
    expect(parsed.base64).toBe(false);
  });

  it("defaults to text/plain;charset=US-ASCII (RFC 2397)", () => {
    const parsed = parseDataUrl("data:,A%20brief%20note");
    expect(parsed.mimeType).toBe("text/plain;charset=US-ASCII");
    expect(parsed.mimeTypeDeclared).toBe(false);
    expect(percentDecodeBytes(parsed.payload).toString()).toBe("A brief note");
  });

  it("decodes percent-escapes to raw bytes", () => {
    expect(percentDecodeBytes("%FF%00a").equals(Buffer.from([0xff, 0x00, 0x61]))).toBe(true);
    expect(percentDecodeBytes("é").equals(Buffer.from("é"))).toBe(true);
  });

  it.each([
    ["no comma", "data:text/plain;base64"],
    ["bad media type", "data:not a type;base64,aGk="],
    ["malformed parameter", "data:text/plain;oops;base64,aGk="],
    ["bad escape in header", "data:text/plain;name=%zz,hi"],
  ])("refuses %s with INVALID_DATA_URL", (_label, input) => {
    expect(codeOfSync(() => parseDataUrl(input))).toBe("INVALID_DATA_URL");
  });

  it("refuses a bad escape in the data", () => {
    expect(codeOfSync(() => percentDecodeBytes("abc%4"))).toBe("INVALID_DATA_URL");
    expect(codeOfSync(() => percentDecodeBytes("%G0"))).toBe("INVALID_DATA_URL");
  });

  it("refuses an impossible base64 length before decoding", () => {
    expect(codeOfSync(() => parseDataUrl("data:;base64,aGVsb"))).toBe("INVALID_BASE64");
  });

  it("round-trips any bytes, type and name (property)", () => {
    const token = fc.stringMatching(/^[a-z0-9][a-z0-9.+-]{0,10}$/);
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        token,
        token,
        fc.string({ maxLength: 30 }),
        (bytes, type, sub, name) => {
          const url = `data:${type}/${sub};name=${encodeURIComponent(name)};base64,${Buffer.from(bytes).toString("base64")}`;
          const parsed = parseDataUrl(url);
          expect(parsed.mimeType).toBe(`${type}/${sub}`);
          expect(parsed.name).toBe(name);
          expect(parsed.maxDecodedLength).toBe(bytes.length);
          expect(Buffer.from(parsed.payload, "base64").equals(Buffer.from(bytes))).toBe(true);
        },
      ),
    );
  });

  it("percent-decoding inverts percent-encoding of any bytes (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const encoded = [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
        expect(percentDecodeBytes(encoded).equals(Buffer.from(bytes))).toBe(true);
      }),
    );
  });

  it("never throws anything but a FileBridgeError on arbitrary input (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (tail) => {
        const code = codeOfSync(() => parseDataUrl(`data:${tail}`));
        expect(["OK", "INVALID_DATA_URL", "INVALID_BASE64"]).toContain(code);
      }),
    );
  });
});
