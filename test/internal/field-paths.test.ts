import { describe, expect, it } from "vitest";
import { collectFieldSlots, parseFieldPath } from "../../src/internal/field-paths.js";
import { codeOfSync } from "../support/helpers.js";

describe("field paths", () => {
  it("parses plain, list and nested paths", () => {
    expect(parseFieldPath("file", "fields")).toEqual([{ key: "file", list: false }]);
    expect(parseFieldPath("jobs[].files[]", "fields")).toEqual([
      { key: "jobs", list: true },
      { key: "files", list: true },
    ]);
  });

  it.each(["", "a..b", "[]", "a[0]", "__proto__.x"])("refuses %j with INVALID_OPTION", (path) => {
    expect(codeOfSync(() => parseFieldPath(path, "fields"))).toBe("INVALID_OPTION");
  });

  it("collects every value, skipping missing and null ones", () => {
    const args = {
      file: "a",
      files: ["b", null, "c"],
      input: { document: "d" },
      jobs: [{ attachment: "e" }, {}, { attachment: "f" }],
    };
    const values = (path: string) => collectFieldSlots(args, parseFieldPath(path, "f")).map((s) => s.value);
    expect(values("file")).toEqual(["a"]);
    expect(values("files[]")).toEqual(["b", "c"]);
    expect(values("input.document")).toEqual(["d"]);
    expect(values("jobs[].attachment")).toEqual(["e", "f"]);
    expect(values("missing")).toEqual([]);
    expect(values("missing.deeper")).toEqual([]);
    const slot = collectFieldSlots(args, parseFieldPath("files[]", "f"))[1];
    expect(slot?.label).toBe("files[2]");
  });

  it("refuses a list step on a non-list with INVALID_INPUT", () => {
    expect(codeOfSync(() => collectFieldSlots({ files: "x" }, parseFieldPath("files[]", "f")))).toBe(
      "INVALID_INPUT",
    );
    expect(codeOfSync(() => collectFieldSlots({ input: "x" }, parseFieldPath("input.document", "f")))).toBe(
      "INVALID_INPUT",
    );
  });
});
