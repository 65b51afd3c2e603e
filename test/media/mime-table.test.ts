/**
 * The compact media-type table answers exactly as the two object literals it replaced (issue 39,
 * session 16): `mime-table.fixture.json` holds those literals, copied from the code before.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { extensionOfType, typeOfName, useMimeDatabase } from "../../src/media/mime-table.js";

const before = JSON.parse(readFileSync(new URL("./mime-table.fixture.json", import.meta.url), "utf8")) as {
  types: Record<string, string>;
  extensions: Record<string, string>;
};

afterEach(() => useMimeDatabase(undefined));

describe("the built-in media-type table", () => {
  it("reads every extension as before, in any case and after any path", () => {
    for (const [ext, type] of Object.entries(before.types)) {
      expect(typeOfName(ext), ext).toBe(type);
      expect(typeOfName(`some/dir\\Report.${ext.toUpperCase()}`), ext).toBe(type);
    }
  });

  it("writes every media type with the extension it had before", () => {
    for (const [type, ext] of Object.entries(before.extensions))
      expect(extensionOfType(type), type).toBe(ext);
  });

  it("knows nothing it did not know before", () => {
    // Extensions that are only a type's usual extension are not read back as that type.
    const onlyWritten = Object.values(before.extensions).filter((ext) => !Object.hasOwn(before.types, ext));
    expect(onlyWritten.length).toBeGreaterThan(0);
    for (const ext of [...onlyWritten, "", "exe2", "__proto__", "constructor", "toString", "=js", "-"]) {
      expect(typeOfName(ext), ext).toBeNull();
    }
    for (const type of [
      "video/mp3",
      "text/plain; charset=utf-8",
      "__proto__",
      "constructor",
      "",
      "TEXT/PLAIN",
    ]) {
      expect(extensionOfType(type), type).toBeNull();
    }
  });

  it("asks the opted-in database only where the table has no answer", () => {
    useMimeDatabase({
      lookup: (n) => (n === "xyz" ? "chemical/x-xyz" : "x/never"),
      extension: () => "never",
    });
    expect(typeOfName("a.xyz")).toBe("chemical/x-xyz");
    expect(typeOfName("a.pdf")).toBe("application/pdf");
    expect(extensionOfType("application/pdf")).toBe("pdf");
    expect(extensionOfType("chemical/x-xyz")).toBe("never");
  });
});
